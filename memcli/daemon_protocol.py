"""What client and daemon agree on: where the socket lives, the size limits and the
framed answer to a command. Builtin modules only: the client imports this before
anything else, and every import here is paid by every served command."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import socket
    from pathlib import Path

MAX_REQUEST = 8 * 1024 * 1024
_SOCKET_NAME = "daemon.sock"
_MAX_PATH = 100  # AF_UNIX paths are limited to ~108 bytes


def socket_file(root: str) -> str:
    """`.memcli/daemon.sock` of the workspace at `root` (resolved), or a short per-user
    path when that would be too long. os.path only: the client's start-up stays short."""
    resolved = os.path.realpath(os.path.expanduser(root))
    preferred = os.path.join(resolved, ".memcli", _SOCKET_NAME)
    if len(os.fsencode(preferred)) <= _MAX_PATH:
        return preferred
    import hashlib
    import tempfile

    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"memcli-{os.getuid()}", f"{digest}.sock")


def socket_path(root: str | Path) -> Path:
    """socket_file as a Path (for the daemon side)."""
    from pathlib import Path

    return Path(socket_file(str(root)))


def read_line(sock: socket.socket, limit: int = MAX_REQUEST) -> bytes:
    """One newline-terminated message (requests and answers are one JSON line each)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            raise ValueError("message too large")
    return data


def read_all(sock: socket.socket, limit: int) -> bytes:
    """Everything until the other side closes (a framed answer)."""
    chunks = []
    size = 0
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise ValueError("message too large")


#: first word of a framed answer: `memcli1 <code> <stdout bytes> <stderr bytes>\n`
#: followed by both outputs, so the client needs no JSON decoder
FRAME_MAGIC = b"memcli1"


def frame(code: int, stdout: str, stderr: str) -> bytes:
    out, err = stdout.encode("utf-8", "surrogatepass"), stderr.encode("utf-8", "surrogatepass")
    return b"%s %d %d %d\n%s%s" % (FRAME_MAGIC, code, len(out), len(err), out, err)


def unframe(data: bytes) -> tuple[int, str, str] | None:
    """(code, stdout, stderr) of a complete framed answer, else None."""
    head, _, body = data.partition(b"\n")
    parts = head.split()
    if len(parts) != 4 or parts[0] != FRAME_MAGIC:
        return None
    try:
        code, out_len, err_len = int(parts[1]), int(parts[2]), int(parts[3])
    except ValueError:
        return None
    if len(body) != out_len + err_len:
        return None
    return (
        code,
        body[:out_len].decode("utf-8", "surrogatepass"),
        body[out_len:].decode("utf-8", "surrogatepass"),
    )
