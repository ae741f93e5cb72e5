"""The index backend protocol: what any store of vectors and keyword postings must
offer, keyed by entry id (memcli.index.backend picks and opens one; the module
docstring there says how backends are chosen and what they promise)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import field
from typing import Protocol

import numpy as np

from memcli.core.records import record

#: What `allowed` may be: a set of entry ids (None: every indexed entry).
Allowed = Collection[str] | None


class IndexDamaged(Exception):
    """The stored index cannot be read; `str()` says what, for a notice (the caller
    rebuilds it)."""


@record(frozen=True)
class Fingerprint:
    """What a backend holds: id -> content key, and the embedding model it was built
    with. `damaged` says why the stored index could not be read (it then holds nothing
    and the next sync rebuilds it)."""

    model: str | None = None
    dim: int | None = None
    keys: dict[str, str] = field(default_factory=dict)
    damaged: str | None = None

    @property
    def empty(self) -> bool:
        return self.model is None


@record(frozen=True)
class Scored:
    """Entry ids with their scores, best first."""

    ids: list[str]
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)


class IndexBackend(Protocol):
    """Dense and keyword retrieval keyed by entry id (see the module docstring)."""

    #: other clones of the workspace write this index too (Milvus): a sync then never
    #: deletes an entry this clone's files never held, nor plans from its own last sync
    shared: bool

    def fingerprint(self) -> Fingerprint:
        """id -> content key of every indexed entry, and the model identity."""
        ...

    def reset(self, model: str, dim: int) -> None:
        """Forget everything: the next upserts build the index anew for `model`."""
        ...

    def revision(self) -> str:
        """A token that changes whenever what is indexed changes (cheap to ask)."""
        ...

    def upsert(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        texts: Sequence[str],
        keys: Sequence[str],
    ) -> None:
        """Insert or replace entries: their L2-normalized vectors (rows in order), the
        text the keyword index sees, and their content keys."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove entries (unknown ids are ignored)."""
        ...

    def dense_search(self, vector: np.ndarray, k: int, allowed: Allowed = None) -> Scored:
        """The `k` entries (among `allowed`) nearest to `vector` by cosine."""
        ...

    def keyword_search(self, query: str, k: int, allowed: Allowed = None) -> Scored:
        """The `k` entries (among `allowed`) with the highest BM25 score > 0."""
        ...

    def dense_scores(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        """Exact cosine of `vector` to each entry of `ids` (0 for an unknown id)."""
        ...

    def keyword_scores(self, query: str, ids: Sequence[str]) -> np.ndarray:
        """BM25 score of `query` for each entry of `ids` (0 for an unknown id)."""
        ...

    def keyword_ideal(self, query: str) -> float | None:
        """The query's keyword mass (Σ qtf · idf over its terms): the BM25 score the
        keyword side counts as 1.0; None where the backend does not know it."""
        ...

    def count(self) -> int:
        """How many entries are indexed."""
        ...

    def flush(self) -> None:
        """Make what a long-lived writer kept cheap (appended) compact on disk."""
        ...

    def close(self) -> None:
        """Release what the backend holds (flushes first)."""
        ...


class BackendSettings(Protocol):
    """The `[index]` settings a backend reads (memcli.store.config.IndexSettings)."""

    backend: str
    ann_threshold: int
    hnsw_m: int
    hnsw_ef_search: int
    hnsw_ef_construction: int
    # the Milvus backend's
    uri: str
    token_env: str
    collection: str
    workspace: str
