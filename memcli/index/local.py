"""The local index backend: vectors (a NumPy matrix below `ann_threshold`, a FAISS HNSW
graph above it) and BM25 postings, in files under `.memcli/index/`.

Rows: every upserted entry gets the next row; replacing an entry kills its old row (a
tombstone) and appends a new one; deleting kills the row. Vectors and postings
(memcli.index.postings) are held per row; dead rows are masked out of every result and
out of the BM25 statistics, so the scores are those of an index holding only the live
entries.

Files (memcli.index.local_files): a base generation written whole, and an append-only
log of the upserts and deletes since (an edit at 100k entries does not rewrite 150 MB).
When the log holds more than MAX_LOG_ROWS rows (or half the live rows, at least 64), on
flush and after a reset the live state is written as a new generation (compaction): a
flat matrix drops its dead rows; an HNSW graph keeps them (skipped in results) until
more than MAX_DEAD, then it is built anew, and the rows are renumbered. A reader that
already holds the generation replays only the log bytes it has not seen; a reader that
loses a race with a compaction re-reads. Any unreadable or inconsistent file makes the
index `damaged` (the caller rebuilds it).

Writes are serialized by the caller (memcli.services.indexing holds the index lock).
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from memcli.index import local_files as files
from memcli.index.keyword import KeywordIndex
from memcli.index.postings import Postings
from memcli.index.protocol import BackendSettings, Fingerprint, IndexDamaged, Scored
from memcli.index.tokenize import query_terms
from memcli.index.vectors import RowVectors, VectorIndex

#: log rows tolerated before the state is compacted into a new generation (a one-off
#: reader replays them: adding 1,000 vectors to a 100k HNSW graph takes ≈ 0.2 s)
MAX_LOG_ROWS = 1000
#: dead HNSW rows tolerated at a compaction before the graph is built anew
MAX_DEAD = 512


class LocalBackend:
    """FAISS / NumPy + BM25 in `directory` (see the module docstring)."""

    shared = False  # this clone's own files

    def __init__(
        self,
        directory: Path,
        settings: BackendSettings,
        *,
        bm25: tuple[float, float] = (1.2, 0.75),
        **_: Any,
    ) -> None:
        self.dir = Path(directory)
        self._manifest_file = str(self.dir / files.MANIFEST)  # stat on every read
        self.settings = settings
        self.k1, self.b = bm25
        self._stamp: tuple[int, int, int] | None = None  # manifest stat when read
        self._manifest: dict | None = None
        self._damaged: str | None = None
        self._loaded_log = 0  # log bytes replayed into memory
        self._clear(None, None)

    # ------------------------------------------------------------------ state

    def _clear(self, model: str | None, dim: int | None) -> None:
        self.model, self.dim = model, dim
        self.generation: str | None = None
        self.ids: list[str | None] = []  # row -> id (None: dead)
        self.keys: list[str | None] = []
        self.row_of: dict[str, int] = {}
        self.n = 0  # rows used
        self.alive = np.zeros(0, dtype=bool)
        self.vectors = RowVectors(dim or 0)
        self.postings = Postings(self.k1, self.b)
        self.log_rows = 0
        self.version = 0  # bumps on every change in memory (memo keys)
        self._memo: dict[str, tuple] = {}
        self._needs_base = True

    def _read_manifest(self) -> tuple[files.Stamp | None, dict | None]:
        """(stamp, manifest), read again only when the file's stamp changed."""
        try:
            stamp = files.stamp_of(self._manifest_file)
        except FileNotFoundError:
            return None, None
        except OSError:
            return (0, 0, 0), {"corrupt": True}
        if stamp == self._stamp:
            return stamp, self._manifest
        return files.read_manifest(self.dir)

    def _current(self) -> None:
        """Bring the in-memory state to the manifest's (unchanged: one stat)."""
        for _ in range(5):
            stamp, manifest = self._read_manifest()
            if stamp == self._stamp and stamp is not None:
                return
            if manifest is None:
                self._stamp, self._manifest, self._damaged = None, None, None
                self._clear(None, None)
                self._loaded_log = 0
                return
            if manifest.get("corrupt"):
                self._stamp, self._manifest = stamp, manifest
                self._damaged = (
                    "the index was written by an older memcli"
                    if manifest.get("old")
                    else "the index manifest was unreadable"
                )
                self._clear(None, None)
                return
            try:
                if manifest["generation"] == self.generation and self._damaged is None:
                    self._replay(manifest, self._loaded_log)
                else:
                    self._load(manifest)
            except files.DAMAGED:
                if self._read_manifest()[0] != stamp:
                    continue  # a writer swapped in a new generation meanwhile
                self._stamp, self._manifest = stamp, manifest
                self._damaged = "the index files were unreadable"
                self._clear(None, None)
                return
            self._stamp, self._manifest, self._damaged = stamp, manifest, None
            return
        raise IndexDamaged("the index kept changing while it was read")

    def _load(self, manifest: dict) -> None:
        self._clear(manifest["model"], int(manifest["dim"]))
        ids, keys = files.read_rows(self.dir, manifest)
        vectors = VectorIndex.load(self.dir / manifest["vectors"], self.settings.hnsw_ef_search)
        keyword = KeywordIndex.load(self.dir / manifest["keyword"])
        n = len(ids)
        if vectors.size != n or keyword.size != n:
            raise ValueError("index files disagree")
        if vectors.kind == "flat" and vectors.matrix.shape[1] != self.dim and n:
            raise ValueError("dimension")
        self.vectors = RowVectors(self.dim or 0, vectors)
        self.ids, self.keys, self.n = list(ids), list(keys), n
        self.row_of, self.alive = _rows_of(ids)
        self.postings = Postings(self.k1, self.b, keyword)
        self.generation = manifest["generation"]
        self._needs_base = False
        self._loaded_log = 0
        self._replay(manifest, 0)

    def _replay(self, manifest: dict, start: int) -> None:
        """Apply the log's records between `start` and the manifest's log_size."""
        for record in files.read_log(self.dir, manifest, start, self.dim or 0):
            if record[0] == "u":
                _, ids, keys, vectors, texts = record
                self._apply_upsert(ids, vectors, texts, keys)
            else:
                self._apply_delete(record[1])
        self._loaded_log = manifest["log_size"]

    # ------------------------------------------------------------------ reading

    def revision(self) -> str:
        """Changes whenever the stored index changes (model, generation, log size)."""
        _, manifest = self._read_manifest()
        if manifest is None:
            return ""
        if manifest.get("corrupt"):
            return "corrupt"
        return f"{manifest['model']}:{manifest['generation']}:{manifest['log_size']}"

    def fingerprint(self) -> Fingerprint:
        self._current()
        if self._damaged:
            return Fingerprint(damaged=self._damaged)
        memo = self._memo.get("fingerprint")
        if memo is None or memo[0] != self.version:
            keys = {i: k for i, k in zip(self.ids, self.keys, strict=True) if i is not None}
            memo = self._memo["fingerprint"] = (self.version, keys)
        return Fingerprint(self.model, self.dim, memo[1])

    def count(self) -> int:
        self._ready()
        return len(self.row_of)

    def make_room(self, rows: int) -> None:
        """Room for `rows` more vectors: the next add copies no graph (RowVectors.make_room)."""
        self._ready()
        self.vectors.make_room(rows)

    def _ready(self) -> None:
        self._current()
        if self._damaged:
            raise IndexDamaged(self._damaged)

    def _mask(self, allowed: Collection[str] | None) -> np.ndarray:
        """Live rows among `allowed` (memoized for the same set object)."""
        if allowed is None:
            return self.alive[: self.n]
        memo = self._memo.get("allowed")
        if memo is not None and memo[0] is allowed and memo[1] == self.version:
            return memo[2]
        rows = self._rows(allowed)
        mask = np.zeros(self.n, dtype=bool)
        mask[rows[rows >= 0]] = True
        self._memo["allowed"] = (allowed, self.version, mask)
        return mask

    def _rows(self, ids: Collection[str]) -> np.ndarray:
        """The rows of `ids` (-1: not in the index)."""
        found = map(self.row_of.get, ids, repeat(-1))  # no Python frame per id
        return np.fromiter(found, dtype=np.int64, count=len(ids))

    def _scored(self, rows: np.ndarray, scores: np.ndarray) -> Scored:
        order = np.argsort(-scores, kind="stable")
        ids, rows, scores = self.ids, rows[order], scores[order]
        return Scored([ids[r] for r in rows.tolist()], scores)  # type: ignore[misc]

    def _dense_all(self, vector: np.ndarray) -> np.ndarray | None:
        """Exact cosine to every row (flat only), memoized for the last query."""
        if self.vectors.matrix is None:
            return None
        key = vector.tobytes()
        memo = self._memo.get("dense")
        if memo is None or memo[0] != key or memo[1] != self.version:
            scores = self.vectors.all_scores(vector, self.n)
            memo = self._memo["dense"] = (key, self.version, scores)
        return memo[2]

    def dense_search(
        self, vector: np.ndarray, k: int, allowed: Collection[str] | None = None
    ) -> Scored:
        self._ready()
        mask = self._mask(allowed)
        if not len(self.row_of) or k < 1:
            return Scored([], np.zeros(0, dtype=np.float32))
        scores = self._dense_all(vector)
        if scores is not None:
            rows = _top(scores, k, mask)
            return self._scored(rows, scores[rows])
        count = len(self.row_of)
        wanted = min(count, max(k * 4, k + count - int(mask.sum())))
        dead = self.n - count
        found_scores, labels = self.vectors.nearest(vector, max(1, min(wanted, count)) + dead)
        live = self.alive[labels]
        labels, found_scores = labels[live][:wanted], found_scores[live][:wanted]
        ok = mask[labels]
        rows, found_scores = labels[ok][:k], found_scores[ok][:k]
        return Scored([self.ids[r] for r in rows.tolist()], found_scores)  # type: ignore[misc]

    def dense_scores(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        self._ready()
        rows = self._rows(ids)
        result = np.zeros(len(ids), dtype=np.float32)
        known = rows >= 0
        if not known.any():
            return result
        scores = self._dense_all(vector)
        if scores is not None:
            result[known] = scores[rows[known]]
            return result
        result[known] = self.vectors.of_rows(rows[known]) @ vector.astype(np.float32)
        return result

    def _keyword_all(self, query: str) -> np.ndarray:
        """BM25 of every row for the query (0 for dead rows), memoized for the last one."""
        memo = self._memo.get("keyword")
        params = (query, self.k1, self.b)
        if memo is not None and memo[0] == params and memo[1] == self.version:
            return memo[2]
        live = len(self.row_of)
        result = self.postings.scores(query_terms(query), self.n, self.alive, live, self.version)
        self._memo["keyword"] = (params, self.version, result)
        return result

    def keyword_search(self, query: str, k: int, allowed: Collection[str] | None = None) -> Scored:
        self._ready()
        mask = self._mask(allowed)
        if not len(self.row_of) or k < 1:
            return Scored([], np.zeros(0, dtype=np.float32))
        scores = np.where(mask, self._keyword_all(query), 0.0)
        rows = _top(scores, k, mask & (scores > 0))
        return self._scored(rows, scores[rows])

    def keyword_scores(self, query: str, ids: Sequence[str]) -> np.ndarray:
        self._ready()
        rows = self._rows(ids)
        result = np.zeros(len(ids), dtype=np.float32)
        known = rows >= 0
        if known.any():
            result[known] = self._keyword_all(query)[rows[known]]
        return result

    def keyword_ideal(self, query: str) -> float | None:
        self._ready()
        return self.postings.ideal(query_terms(query), self.alive[: self.n], len(self.row_of))

    # ------------------------------------------------------------------ writing

    def reset(self, model: str, dim: int) -> None:
        self._current()
        self._clear(model, dim)
        self._damaged = None
        with self._writing():
            self._compact()  # an empty generation: readers see the reset at once
        self._needs_base = True  # and the upserts that follow form the next one

    def upsert(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        texts: Sequence[str],
        keys: Sequence[str],
    ) -> None:
        ids, texts, keys = list(ids), list(texts), list(keys)
        if not (len(ids) == len(texts) == len(keys) == len(vectors)):
            raise ValueError("upsert: ids, vectors, texts and keys differ in length")
        if len(set(ids)) != len(ids):
            raise ValueError("upsert: the same id twice")
        self._current()
        if self._damaged:
            raise IndexDamaged(self._damaged)
        if self.model is None:
            raise ValueError("upsert before reset(model, dim)")
        if not ids:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        with self._writing():
            self._apply_upsert(ids, vectors, texts, keys)
            self._write(files.encode("u", ids, keys, texts, vectors))

    def delete(self, ids: Sequence[str]) -> None:
        self._current()
        if self._damaged:
            raise IndexDamaged(self._damaged)
        ids = [i for i in dict.fromkeys(ids) if i in self.row_of]
        if not ids:
            return
        with self._writing():
            self._apply_delete(ids)
            self._write(files.encode("d", ids))

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A write that fails leaves memory ahead of the files: read them again."""
        try:
            yield
        except BaseException:
            self._stamp, self.generation = None, None
            raise

    def _apply_upsert(
        self, ids: list[str], vectors: np.ndarray, texts: list[str], keys: list[str]
    ) -> None:
        self._apply_delete([i for i in ids if i in self.row_of])
        start, end = self.n, self.n + len(ids)
        self._grow(end)
        self.vectors.put(start, vectors)
        for offset, entry_id in enumerate(ids):
            self.row_of[entry_id] = start + offset
        self.ids.extend(ids)
        self.keys.extend(keys)
        self.alive[start:end] = True
        self.postings.add(start, texts)
        self.n = end
        self.log_rows += len(ids)
        self.version += 1

    def _apply_delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        for entry_id in ids:
            row = self.row_of.pop(entry_id)
            self.ids[row] = self.keys[row] = None
            self.alive[row] = False
        self.log_rows += len(ids)
        self.version += 1

    def _grow(self, end: int) -> None:
        if end <= len(self.alive):
            return
        size = max(end, len(self.alive) * 3 // 2, 64)
        self.alive = np.resize(self.alive, size)
        self.alive[self.n :] = False
        self.postings.grow(size)
        self.vectors.grow(size, self.n)

    def _write(self, record: bytes | None = None) -> None:
        """Persist the change applied in memory: a log record, or a new generation."""
        limit = min(MAX_LOG_ROWS, max(64, len(self.row_of) // 2))
        if self._needs_base or record is None or self.log_rows > limit:
            self._compact()
            return
        manifest = files.append_log(self.dir, dict(self._manifest or {}), record)
        manifest["count"] = len(self.row_of)
        self._save_manifest(manifest)
        self._loaded_log = manifest["log_size"]

    def flush(self) -> None:
        """Compact the log's rows, or an earlier memcli's generation (_npz_keyword)."""
        self._current()
        stale = self.log_rows or _npz_keyword(self._manifest)
        if self._damaged is None and self.model is not None and stale:
            self._compact()

    close = flush  # nothing else to let go of

    def _compact(self) -> None:
        """Write the live state as a new generation and point the manifest at it."""
        s = self.settings
        live = len(self.row_of)
        n = self.n
        alive = self.alive[:n]
        hnsw = live >= s.ann_threshold
        keep_rows = hnsw and self.vectors.graph is not None and n - live <= MAX_DEAD
        order = np.arange(n) if keep_rows else np.flatnonzero(alive)
        # postings of every row, dead ones dropped, rows renumbered along `order`
        new_row = np.full(n, -1, dtype=np.int64)
        new_row[order] = np.arange(len(order))
        keyword = self.postings.compacted(new_row, len(order), n, self.alive, live)
        vector_index = self.vectors.compacted(order, n, keep_rows, s)
        ids = [self.ids[r] for r in order.tolist()]
        keys = [self.keys[r] for r in order.tolist()]
        head = {"model": self.model, "dim": self.dim, "count": live}
        self._stamp, self._manifest = files.write_generation(
            self.dir, vector_index, keyword, (ids, keys), head
        )
        # the in-memory state becomes what was written (rows renumbered)
        self.ids, self.keys, self.n = ids, keys, len(ids)
        self.row_of, self.alive = _rows_of(ids)
        self.postings = Postings(self.k1, self.b, keyword)  # the new vocabulary's term ids
        self.vectors = RowVectors(self.dim or 0, vector_index)
        self.generation = self._manifest["generation"]
        self.log_rows = 0
        self._loaded_log = 0
        self._needs_base = False
        self.version += 1
        files.remove_stale(self.dir, self.generation)

    def _save_manifest(self, manifest: dict) -> None:
        self._stamp = files.save_manifest(self.dir, manifest)
        self._manifest = manifest


def _top(scores: np.ndarray, k: int, mask: np.ndarray) -> np.ndarray:
    """Rows of the k highest scores where mask is true, sorted by row."""
    candidates = np.flatnonzero(mask)
    if len(candidates) > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        candidates = candidates[part]
    return np.sort(candidates)


def _rows_of(ids: Sequence[str | None]) -> tuple[dict[str, int], np.ndarray]:
    """(id -> row, the live rows' mask) of a generation's rows (None: a dead row)."""
    if None in ids:  # tombstones a compaction has not dropped (a graph keeps them)
        alive = np.array([i is not None for i in ids], dtype=bool)
        return {i: r for r, i in enumerate(ids) if i is not None}, alive  # type: ignore[misc]
    return dict(zip(ids, range(len(ids)), strict=True)), np.ones(len(ids), dtype=bool)  # type: ignore[arg-type]


def _npz_keyword(manifest: dict | None) -> bool:
    """The generation's keyword index is an earlier memcli's `.npz` (a zip archive): the
    next flush (a watcher leaving) writes it anew, read in one read without zipfile."""
    return str((manifest or {}).get("keyword", "")).endswith(".npz")
