"""What client and daemon agree on: where the socket lives, who may use it, the
settings environment, the size limits and the wire (a request and an answer are one
line of ASCII JSON each: `dumps_wire`, `loads`, also the hooks' answers), and the
client's side of it: `ask` hands a request to the `memcli watch` daemon of a workspace
and gets its answer (result data, or the text the daemon printed for the client).
Builtin modules only (`_socket` rather than socket, which pulls in enum and selectors;
`_json` rather than json, which pulls in re): every served command imports this, and
every import here is paid by it; a served command costs one Python start-up and a round
trip."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

MAX_REQUEST = 8 * 1024 * 1024
_SOCKET_NAME = "daemon.sock"
_MAX_PATH = 100  # AF_UNIX paths are limited to ~108 bytes


def socket_file(root: str) -> str:
    """`.memcli/daemon.sock` of the workspace at `root` (resolved), or a short path in
    the per-user directory `fallback_dir()` when that would be too long, named after the
    workspace folder's identity (device and inode), not the path that reached it: a
    symlink or a bind mount leads to the same socket. os.path only: the client's
    start-up stays short."""
    resolved = os.path.realpath(os.path.expanduser(root))
    preferred = os.path.join(resolved, ".memcli", _SOCKET_NAME)
    if len(os.fsencode(preferred)) <= _MAX_PATH:
        return preferred
    return os.path.join(fallback_dir(), f"{_identity_digest(resolved)}.sock")


def same_dir(a: str, b: str) -> bool:
    """`a` and `b` are the same directory (device and inode), whatever paths name it."""
    try:
        one, two = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)


def _identity_digest(resolved: str) -> str:
    """16 hex digits naming the directory's identity (its path when it cannot be
    examined)."""
    try:
        st = os.stat(resolved)
        identity = f"{st.st_dev}:{st.st_ino}".encode()
    except OSError:
        identity = os.fsencode(resolved)
    try:  # the C module behind hashlib.sha256 (hashlib itself costs milliseconds)
        from _sha256 import sha256
    except ImportError:
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256(identity).hexdigest()[:16]


def fallback_dir() -> str:
    """`$TMPDIR/memcli-<uid>` (else /tmp): where sockets go when the workspace path is too
    long for one. Anyone can create that name first, so it is used only when
    private_dir_problem finds nothing wrong with it."""
    base = os.environ.get("TMPDIR") or os.environ.get("TEMP") or os.environ.get("TMP") or "/tmp"
    return os.path.join(base, f"memcli-{os.getuid()}")


def private_dir_problem(path: str) -> str | None:
    """What makes `path` unfit to hold our socket, or None: it must be a real directory
    (not a symlink), owned by us, with mode 0700. os.lstat only."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "it does not exist"
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror})"
    kind = st.st_mode & 0o170000
    if kind == 0o120000:
        return "it is a symbolic link"
    if kind != 0o040000:
        return "it is not a directory"
    if st.st_uid != os.getuid():
        return f"it belongs to uid {st.st_uid}, not to you (uid {os.getuid()})"
    if st.st_mode & 0o7777 != 0o700:
        return f"its mode is {st.st_mode & 0o7777:04o}, not 0700"
    return None


def ensure_private_dir(path: str) -> None:
    """Create `path` with mode 0700, or check the one that exists; PermissionError naming
    the problem when it is not ours alone (the daemon then refuses to serve there)."""
    try:
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)  # ours and new: a restrictive umask may have left less
    except FileExistsError:
        pass
    problem = private_dir_problem(path)
    if problem is not None:
        raise PermissionError(
            f"{path}: {problem}; memcli keeps its socket only in a directory that is yours "
            f"alone (remove {path}, or use a workspace path short enough for .memcli/)"
        )


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a connected Unix socket, or None where
    the OS cannot tell. Linux: SO_PEERCRED (struct ucred: pid, uid, gid); macOS and
    FreeBSD: LOCAL_PEERCRED at level SOL_LOCAL (struct xucred: version, uid, ...), what
    getpeereid reads."""
    import _socket

    option = getattr(_socket, "SO_PEERCRED", None)
    if option is not None:
        data = sock.getsockopt(_socket.SOL_SOCKET, option, 12)
        return int.from_bytes(data[4:8], sys.byteorder)
    if sys.platform == "darwin" or sys.platform.startswith("freebsd"):
        data = sock.getsockopt(0, getattr(_socket, "LOCAL_PEERCRED", 1), 76)
        return int.from_bytes(data[4:8], sys.byteorder)
    return None


#: environment variables, besides MEMCLI_*, that decide settings (user config, trust)
_SETTINGS_VARS = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
#: and what does not change an answer: the workspace (the request names it), whether to
#: ask a watcher at all, whether the agents' path starts one and when it leaves
_NOT_SETTINGS = (
    "MEMCLI_WORKSPACE",
    "MEMCLI_NO_DAEMON",
    "MEMCLI_WATCH_AUTOSTART",
    "MEMCLI_WATCH_IDLE_EXIT_MINUTES",
)


def settings_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The part of an environment that decides a command's settings: MEMCLI_* (but the
    workspace, which the request names) and where the user's config and trust records
    live. A daemon answers only clients whose settings environment equals its own."""
    return {
        k: v
        for k, v in environ.items()
        if (k.startswith("MEMCLI_") and k not in _NOT_SETTINGS) or k in _SETTINGS_VARS
    }


def plain_file_problem(path: str, cwd: str) -> str | None:
    """Why a daemon must not open `path` for a client, or None: only a regular file
    outside /dev and /proc (never a terminal, pipe or socket, never the daemon's own
    stdin by way of /dev/stdin or /proc/self/fd/0)."""
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    if full.startswith(("/dev/", "/proc/")) or full in ("/dev", "/proc"):
        return f"{path}: a device or process file"
    try:
        st = os.stat(full)
    except OSError:
        return f"{path}: cannot be read"
    if st.st_mode & 0o170000 != 0o100000:
        return f"{path}: not a regular file"
    return None


def socket_path(root: str | Path) -> Path:
    """socket_file as a Path (for the daemon side)."""
    from pathlib import Path

    return Path(socket_file(str(root)))


def read_line(sock: socket.socket, limit: int = MAX_REQUEST) -> bytes:
    """One newline-terminated message (a request, or the answer to a status query)."""
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
    """Everything until the other side closes (an answer)."""
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


def ask(
    root: str,
    request: Callable[[], dict[str, Any] | None],
    timeout: float,
    view: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The daemon's answer to `request()` (a core.requests wire dict) for the workspace
    at `root`, or None when no watcher answers it (no socket, a stale one, a socket in a
    directory that is not ours alone, a listener of another uid, a timeout, a refusal).
    `request()` is called only once the listener is known to be ours (it may read
    stdin); when it returns None nothing is sent. Nothing is sent unless the socket lies
    in a directory that is ours alone and the process listening on it runs as our uid
    (a request carries the query and stdin). `view`: how the client would print
    the answer, for the daemon to print it (memcli.surfaces.cli.served.printed)."""
    path = socket_file(root)
    if not os.path.exists(path):
        return None
    directory = os.path.dirname(path)
    if directory != os.path.join(root, ".memcli"):
        problem = private_dir_problem(directory)
        if problem is not None:
            sys.stderr.write(
                f"warning: not using the memcli watch socket in {directory}: {problem}\n"
            )
            return None
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(min(1.0, timeout))
        sock.connect(path)
        if peer_uid(sock) != os.getuid():  # who listens, before anything is sent
            return None
        wire = request()
        if wire is None:
            return None
        message = {
            "request": wire,
            "workspace": root,
            "env": settings_env(os.environ),
        }
        if view is not None:
            message["view"] = view
        sock.settimeout(timeout)
        sock.sendall(dumps_wire(message).encode("ascii") + b"\n")
        answer = loads(read_all(sock, limit=1 << 30).decode("utf-8"))
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    if not isinstance(answer, dict) or "refused" in answer:
        return None
    return answer


def dumps_wire(data: Any) -> str:
    """One line of ASCII JSON: json.dumps(data, default=str), by `_json`'s encoder (the
    one json.dumps uses) where there is one."""
    try:
        from _json import encode_basestring_ascii, make_encoder
    except ImportError:  # an interpreter without the C accelerator
        import json

        return json.dumps(data, default=str)
    encode = make_encoder({}, str, encode_basestring_ascii, None, ": ", ", ", False, False, True)
    return "".join(encode(data, 0))


class _ScannerContext:
    """What `_json.make_scanner` reads from a JSONDecoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def loads(text: str) -> Any:
    """json.loads without importing json (and re, ≈ 10 ms) on the way: `_json`'s scanner,
    which json.loads itself uses. ValueError when `text` is not one JSON value."""
    try:
        from _json import make_scanner
    except ImportError:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip())
    try:
        value, end = make_scanner(_ScannerContext)(text, start)
    except Exception:  # noqa: BLE001 - StopIteration, or an error json would explain
        end = -1
    if end < 0 or text[end:].strip():
        import json

        return json.loads(text)  # raises JSONDecodeError (a ValueError) saying where
    return value
