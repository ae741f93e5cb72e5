"""The index of a layer the person made read-only (memcli.store.readonly), searched
from another workspace: nothing is written into the layer, as root too.

Its own index is read as it is while it matches the layer's Markdown. Otherwise the
layer is indexed in a private temporary folder of this process (`shadow`), starting
from a copy of the layer's embedding cache, and removed when the index is: the
layer is searched as a writable one would be, and its folder is left exactly as it
was (no index, no cache, no lock file)."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

from memcli.index.protocol import IndexBackend, IndexDamaged
from memcli.services.lastsync import LastSync
from memcli.store.readonly import read_only


def readable_in_place(manager: Any) -> IndexBackend | None:
    """The layer's own backend when it can be searched as it is (current, undamaged),
    else None; reads only."""
    if not manager.dir.is_dir():
        return None
    try:
        if manager.is_current(manager.read_manifest()):
            manager.backend.count()
            return manager.backend
    except (IndexDamaged, OSError):
        pass
    manager._backend = None  # noqa: SLF001 - reopened in the shadow
    return None


def shadow(manager: Any) -> Path:
    """Point `manager` (an IndexManager) at a private temporary folder for its index,
    its embedding cache and its lock, seeded with the layer's embedding cache."""
    tmp = Path(tempfile.mkdtemp(prefix="memcli-layer-"))
    weakref.finalize(manager, shutil.rmtree, str(tmp), True)
    if manager.cache_dir.is_dir():
        shutil.copytree(manager.cache_dir, tmp / "cache")  # embeddings already made
    manager.dir = tmp / "index"
    manager._manifest_file = str(manager.dir / "manifest.json")  # noqa: SLF001
    manager.cache_dir = tmp / "cache"
    manager.lock = tmp / "locks" / "index.lock"
    manager._backend = manager._cache = manager._manifest = manager._snapshot = None  # noqa: SLF001
    manager._digests = {}  # noqa: SLF001
    manager._last = LastSync()  # noqa: SLF001
    manager.shadowed = tmp
    return tmp


def obey_mode(layer: Any) -> None:
    """Make `layer` (the Memory of another workspace's layer) write nothing into its
    folder when the person made it read-only: its index is read as it is or built
    in a shadow, and its access counts are not touched. A writable layer is as it was."""
    why = read_only(layer.root)
    layer.index_manager.read_only = why
    layer.access.read_only = why
