"""What client and daemon agree on: where the socket lives and the size limits.
Standard library only: the client imports this before anything else."""

from __future__ import annotations

import hashlib
import os
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
