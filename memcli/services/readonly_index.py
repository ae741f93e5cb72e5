"""The index of a layer the person made read-only (memcli.store.readonly), searched
from another workspace: nothing is written into the layer, as root too.

Its own index is read as it is while it matches the layer's Markdown. Otherwise the
layer is indexed in a private folder of this user's cache (`shadow`:
`$XDG_CACHE_HOME/memcli/layers/<folder name>-<path hash>/`, mode 0700, one per layer,
kept in step by every process as a writable layer's own index is), starting from a copy
of the layer's embedding cache: the layer is searched as a writable one would be, and its
folder is left exactly as it was (no index, no cache, no lock file)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memcli.core.paths import cache_dir
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


def shadow_home(root: Path, env: Any) -> Path:
    """The private folder of this user's cache that indexes the read-only layer `root`."""
    import hashlib

    real = os.path.realpath(root)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return cache_dir(env) / "layers" / f"{Path(real).name or 'root'}-{digest}"


def shadow(manager: Any) -> Path:
    """Point `manager` (an IndexManager) at its layer's private folder (`shadow_home`,
    set by obey_mode; a temporary one of this process's otherwise) for its index, its
    embedding cache and its lock; the cache starts as a copy of the layer's."""
    import shutil
    import tempfile  # here, not per read: with random, ≈ 5 ms of every layered search
    import weakref

    home = getattr(manager, "shadow_home", None)
    if home is None:
        home = Path(tempfile.mkdtemp(prefix="memcli-layer-"))
        weakref.finalize(manager, shutil.rmtree, str(home), True)
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    if manager.cache_dir.is_dir() and not (home / "cache").exists():
        copy = Path(tempfile.mkdtemp(prefix=".cache-", dir=home))
        shutil.copytree(manager.cache_dir, copy, dirs_exist_ok=True)  # embeddings made
        try:
            os.rename(copy, home / "cache")
        except OSError:  # another process copied it first
            shutil.rmtree(copy, ignore_errors=True)
    manager.dir = home / "index"
    manager._manifest_file = str(manager.dir / "manifest.json")  # noqa: SLF001
    manager.cache_dir = home / "cache"
    manager.lock = home / "locks" / "index.lock"
    manager._backend = manager._cache = manager._manifest = manager._snapshot = None  # noqa: SLF001
    manager._digests = {}  # noqa: SLF001
    manager._last = LastSync()  # noqa: SLF001
    manager.shadowed = home
    return home


def obey_mode(layer: Any) -> None:
    """Make `layer` (the Memory of another workspace's layer) write nothing into its
    folder when the person made it read-only: its index is read as it is or built
    in its shadow, its access counts are not touched, and every Markdown write is refused
    naming the layer (memcli.store.store.Store.read_only). A writable layer is as it was."""
    why = read_only(layer.root)
    manager = layer.index_manager
    manager.read_only = why
    if why:
        manager.shadow_home = shadow_home(layer.root, layer.runtime.env)
    layer.access.read_only = why
    layer.store.read_only = why  # no Markdown write either: add, forget, edit, review
