"""Opening the index backend `[index] backend` names: "local" (memcli.index.local) or
"milvus" (memcli.index.milvus), behind the protocol of memcli.index.protocol.

A backend holds, per entry id, one embedding, one keyword text and a content key (the
hash the sync planner compares to decide what to re-embed). Everything is keyed by entry
id, never by list position, so an engine that keeps its own order (Milvus, a database)
can stand in for the local FAISS + BM25 files. The ranking formula (memcli.logic.search)
and the candidate pool (memcli.services.search) are the same code over every backend.

Writes are serialized by the caller (one writer per workspace: memcli.services.indexing
holds the index lock); reads may happen in other processes at any time and must see a
consistent state (before or after a write, never half of one).

Backends other than "local" are imported only when chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.core.errors import ConfigError
from memcli.index.protocol import BackendSettings, IndexBackend


def _open_local(settings: BackendSettings, directory: Path, **options: Any) -> IndexBackend:
    from memcli.index.local import LocalBackend

    return LocalBackend(directory, settings, **options)


def _open_milvus(settings: BackendSettings, directory: Path, **options: Any) -> IndexBackend:
    import hashlib
    import os

    from memcli.index.milvus import MilvusBackend

    root = directory.resolve().parent.parent  # <workspace>/.memcli/index
    workspace = settings.workspace or (
        f"{root.name}-{hashlib.sha256(str(root).encode()).hexdigest()[:10]}"
    )
    uri = settings.uri
    if uri and "://" not in uri:
        uri = str((root / os.path.expanduser(uri)).resolve())  # relative to the workspace
    token_env = settings.token_env
    return MilvusBackend(
        uri,
        workspace,
        collection=settings.collection or "memcli",
        token=os.environ.get(token_env) if token_env else None,
        bm25=options.get("bm25", (1.2, 0.75)),
        hnsw=(settings.hnsw_m, settings.hnsw_ef_construction, settings.hnsw_ef_search),
    )


#: backend name -> opener(settings, directory, **options); a new engine adds one line
#: (its module imported inside its opener, so the others never load it)
BACKENDS: dict[str, Callable[..., IndexBackend]] = {"local": _open_local, "milvus": _open_milvus}


def open_backend(settings: BackendSettings, directory: Path, **options: Any) -> IndexBackend:
    """The backend `[index] backend` names, over `directory` (its local state).
    `options`: bm25=(k1, b), notify=callable for what the backend wants said."""
    name = (settings.backend or "local").strip()
    opener = BACKENDS.get(name)
    if opener is None:
        raise ConfigError(
            f"memcli.toml: [index] backend = {name!r} is not a known index backend",
            hint=f"choose one of: {', '.join(sorted(BACKENDS))}",
        )
    return opener(settings, directory, **options)
