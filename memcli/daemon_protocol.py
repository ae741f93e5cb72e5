"""What client and daemon agree on: where the socket lives and the size limits.
Standard library only: the client imports this before anything else."""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from pathlib import Path

MAX_REQUEST = 8 * 1024 * 1024
_SOCKET_NAME = "daemon.sock"
_MAX_PATH = 100  # AF_UNIX paths are limited to ~108 bytes


def socket_path(root: Path) -> Path:
    """`.memcli/daemon.sock`, or a short per-user path when that would be too long."""
    preferred = Path(root).resolve() / ".memcli" / _SOCKET_NAME
    if len(os.fsencode(str(preferred))) <= _MAX_PATH:
        return preferred
    digest = hashlib.sha256(os.fsencode(str(Path(root).resolve()))).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"memcli-{os.getuid()}" / f"{digest}.sock"


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
