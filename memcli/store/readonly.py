"""Whether a person made a layer read-only: the one rule the watcher and the commands
of another workspace ask before writing anything into it (docs/layers.md)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memcli.core.names import STATE_DIR


def read_only(root: Path) -> str | None:
    """Why nothing may be written into the layer at `root`, or None: the layer's folder,
    or its `.memcli` folder when it has one, has no owner write bit (the person made it
    read-only; checked by mode, so root obeys it too) or cannot be written (a read-only
    mount, another user's folder)."""
    for path in (Path(root), Path(root) / STATE_DIR):
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # no .memcli yet: the folder's own right decides
        if not mode & stat.S_IWUSR:
            return f"{path} is read-only (mode {stat.S_IMODE(mode):04o})"
        if not os.access(path, os.W_OK):
            return f"{path} cannot be written (a read-only file system?)"
    return None
