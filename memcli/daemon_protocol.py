"""What client and daemon agree on: where the socket lives and the size limits.
Standard library only: the client imports this before anything else."""

from __future__ import annotations

import hashlib
import os
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
