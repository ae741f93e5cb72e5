"""The local index backend: vectors (a NumPy matrix below `ann_threshold`, a FAISS HNSW
graph above it) and BM25 postings in files under `.memcli/index/`.

Rows: every upserted entry gets the next row; replacing an entry kills its old row (a
tombstone) and appends a new one; deleting kills the row. Vectors, postings and
document lengths are held per row; dead rows are masked out of every result and out of
the BM25 statistics (document count, average length, document frequencies), so the
scores are those of an index holding only the live entries.

Files (incremental writes, so an edit at 100k entries does not rewrite 150 MB):
- a *base* generation, written whole: `vectors-<gen>.npy` or `.faiss`, `keyword-<gen>.npz`
  (CSR postings) and `rows-<gen>.json` (row -> id and content key, null when dead);
- an append-only *log* `log-<gen>.bin`: one record per upsert or delete (a JSON header
  with the ids, keys and keyword texts, then the raw float32 vectors), each framed with
  its length and crc32;
- `local.json`, replaced atomically after every append: model, dim, the generation's
  file names and `log_size`, how many bytes of the log belong to the index.
Readers replay exactly `log_size` bytes, so a record being appended, or torn by a kill
-9, is never seen; a writer truncates the log to `log_size` before it appends. A reader
that already holds the generation replays only the bytes it has not seen. When the log
holds more than MAX_LOG_ROWS rows (or half the live rows, at least 64), on flush and
after a reset the live state is written as a new
generation (compaction): a flat matrix drops its dead rows; an HNSW graph keeps them
(skipped in results) until more than MAX_DEAD, then it is built anew. Manifest first,
then the old generation's files are removed; a reader that loses the race re-reads.
Any unreadable or inconsistent file makes the index `damaged` (the caller rebuilds it).
The files are read as data only (JSON, NumPy without pickle, FAISS): a workspace copied
from someone else cannot make a reader run code, and the manifest names files in the
index folder only.

Writes are serialized by the caller (memcli.services.indexing holds the index lock).

Why one module of ≈ 750 lines (over 500 lines): the row numbering (tombstones,
renumbering at compaction) is shared by the vectors, the BM25 statistics and the file
format; split apart, each piece would have to expose it.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memcli.index.keyword import KeywordIndex
from memcli.index.protocol import BackendSettings, Fingerprint, IndexDamaged, Scored
from memcli.index.tokenize import tokenize
from memcli.index.write_errors import os_error_of

VERSION = 3  # 3: rows and log records as JSON (2: marshal)
MANIFEST = "local.json"
#: log rows tolerated before the state is compacted into a new generation (a one-off
#: reader replays them: adding 1,000 vectors to a 100k HNSW graph takes ≈ 0.2 s)
MAX_LOG_ROWS = 1000
#: dead HNSW rows tolerated at a compaction before the graph is built anew
MAX_DEAD = 512
_HEADER = struct.Struct("<4sII")
_MAGIC = b"MLG1"
#: what reading a damaged file can raise (faiss raises RuntimeError)
#: prefixes of the files a generation consists of
_FILES = ("vectors-", "keyword-", "rows-", "log-", "slots-")
_DAMAGED = (
    OSError,
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    RuntimeError,
    EOFError,
    zipfile.BadZipFile,
)


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
        self.kind = "flat"
        self.ids: list[str | None] = []  # row -> id (None: dead)
        self.keys: list[str | None] = []
        self.row_of: dict[str, int] = {}
        self.n = 0  # rows used
        self.alive = np.zeros(0, dtype=bool)
        self.doc_len = np.zeros(0, dtype=np.float32)
        self.matrix: np.ndarray | None = np.zeros((0, dim or 0), dtype=np.float32)
        self.graph = None  # faiss.IndexHNSWFlat, labels = rows
        self.base_kw: KeywordIndex | None = None  # postings of rows [0, nbase)
        self.nbase = 0
        self.vocab: dict[str, int] = {}
        self.tail: list[np.ndarray] = []  # term ids of rows [nbase, n)
        self._tail_kw: KeywordIndex | None = None
        self.log_rows = 0
        self.version = 0  # bumps on every change in memory (memo keys)
        self._memo: dict[str, tuple] = {}
        self._needs_base = True
        self._encoded: dict[str, np.ndarray] = {}  # keyword text -> term ids (memo)

    def _read_manifest(self) -> tuple[tuple[int, int, int] | None, dict | None]:
        path = self.dir / MANIFEST
        try:
            st = path.stat()
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
            if stamp == self._stamp:
                return stamp, self._manifest
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError):
            return (0, 0, 0), {"corrupt": True}
        required = ("model", "dim", "generation", "kind", "vectors", "keyword", "rows", "log")
        if (
            isinstance(data, dict)
            and isinstance(data.get("version"), int)
            and data["version"] < VERSION
        ):
            return stamp, {"corrupt": True, "old": True}
        if (
            not isinstance(data, dict)
            or data.get("version") != VERSION
            or any(key not in data for key in required)
            or not isinstance(data.get("log_size"), int)
            or not all(_own_file(data[key], key) for key in ("vectors", "keyword", "rows", "log"))
        ):
            return stamp, {"corrupt": True}
        return stamp, data

    def _current(self) -> None:
        """Bring the in-memory state to what the manifest describes (cheap when it did
        not change: one stat)."""
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
            except _DAMAGED:
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
        from memcli.index.vectors import VectorIndex

        self._clear(manifest["model"], int(manifest["dim"]))
        ids, keys = json.loads((self.dir / manifest["rows"]).read_bytes())
        if not (_names(ids) and _names(keys) and len(ids) == len(keys)):
            raise ValueError("rows")
        vectors = VectorIndex.load(self.dir / manifest["vectors"], self.settings.hnsw_ef_search)
        keyword = KeywordIndex.load(self.dir / manifest["keyword"])
        n = len(ids)
        if vectors.size != n or keyword.size != n:
            raise ValueError("index files disagree")
        if vectors.kind == "flat":
            if vectors.matrix.shape[1] != self.dim and n:
                raise ValueError("dimension")
            self.kind, self.matrix, self.graph = "flat", vectors.matrix, None
        else:
            self.kind, self.matrix, self.graph = "hnsw", None, vectors.index
        self.ids, self.keys, self.n = list(ids), list(keys), n
        self.row_of = {i: r for r, i in enumerate(ids) if i is not None}
        self.alive = np.array([i is not None for i in ids], dtype=bool)
        self.doc_len = keyword.doc_len.astype(np.float32, copy=True)
        self.base_kw, self.nbase, self.vocab = keyword, n, dict(keyword.vocab)
        self.generation = manifest["generation"]
        self._needs_base = False
        self._loaded_log = 0
        self._replay(manifest, 0)

    def _replay(self, manifest: dict, start: int) -> None:
        """Apply the log's records between `start` and the manifest's log_size."""
        end = manifest["log_size"]
        if end == start:
            return
        if end < start:
            raise ValueError("the log shrank")
        with open(self.dir / manifest["log"], "rb") as handle:
            handle.seek(start)
            data = handle.read(end - start)
        if len(data) != end - start:
            raise ValueError("the log is shorter than the manifest says")
        offset = 0
        while offset < len(data):
            magic, size, crc = _HEADER.unpack_from(data, offset)
            payload = data[offset + _HEADER.size : offset + _HEADER.size + size]
            if magic != _MAGIC or len(payload) != size or zlib.crc32(payload) != crc:
                raise ValueError("a damaged log record")
            record = _decode(payload, self.dim or 0)
            if record[0] == "u":
                _, ids, keys, vectors, texts = record
                self._apply_upsert(ids, vectors, texts, keys)
            else:
                self._apply_delete(record[1])
            offset += _HEADER.size + size
        self._loaded_log = end

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
        rows = np.fromiter(
            (self.row_of.get(i, -1) for i in allowed), dtype=np.int64, count=len(allowed)
        )
        mask = np.zeros(self.n, dtype=bool)
        mask[rows[rows >= 0]] = True
        self._memo["allowed"] = (allowed, self.version, mask)
        return mask

    def _rows(self, ids: Sequence[str]) -> np.ndarray:
        return np.fromiter((self.row_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))

    def _scored(self, rows: np.ndarray, scores: np.ndarray) -> Scored:
        order = np.argsort(-scores, kind="stable")
        rows, scores = rows[order], scores[order]
        ids = self.ids
        return Scored([ids[r] for r in rows.tolist()], scores)  # type: ignore[misc]

    def _dense_all(self, vector: np.ndarray) -> np.ndarray | None:
        """Exact cosine to every row (flat only), memoized for the last query."""
        if self.matrix is None:
            return None
        key = vector.tobytes()
        memo = self._memo.get("dense")
        if memo is None or memo[0] != key or memo[1] != self.version:
            memo = self._memo["dense"] = (
                key,
                self.version,
                self.matrix[: self.n] @ vector.astype(np.float32),
            )
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
        search = min(max(1, min(wanted, count)) + dead, int(self.graph.ntotal))
        found_scores, labels = self.graph.search(vector.reshape(1, -1).astype(np.float32), search)
        labels, found_scores = labels[0], found_scores[0]
        keep = labels >= 0
        labels, found_scores = labels[keep], found_scores[keep]
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
        vectors = np.vstack([self.graph.reconstruct(int(r)) for r in rows[known]])
        result[known] = vectors @ vector.astype(np.float32)
        return result

    def _keyword_all(self, query: str) -> np.ndarray:
        """BM25 of every row for the query (0 for dead rows), memoized for the last one."""
        memo = self._memo.get("keyword")
        params = (query, self.k1, self.b)
        if memo is not None and memo[0] == params and memo[1] == self.version:
            return memo[2]
        result = self._bm25(tokenize(query))
        self._memo["keyword"] = (params, self.version, result)
        return result

    def _bm25(self, terms: list[str]) -> np.ndarray:
        n = self.n
        result = np.zeros(n, dtype=np.float32)
        live = len(self.row_of)
        if live == 0:
            return result
        doc_len = self.doc_len[:n]
        dead = live != n
        avgdl = float((doc_len[self.alive[:n]] if dead else doc_len).mean()) or 1.0
        norm = self.k1 * (1.0 - self.b + self.b * doc_len / avgdl)
        tail = self._tail_index()
        for term, qtf in Counter(terms).items():
            t = self.vocab.get(term)
            if t is None:
                continue
            parts = []
            for index, offset in ((self.base_kw, 0), (tail, self.nbase)):
                if index is not None and t < len(index.indptr) - 1:
                    lo, hi = index.indptr[t], index.indptr[t + 1]
                    if hi > lo:
                        docs = index.docs[lo:hi]
                        parts.append((docs + offset if offset else docs, index.tfs[lo:hi]))
            if not parts:
                continue
            if len(parts) == 1:
                docs, tfs = parts[0]
            else:
                docs = np.concatenate([p[0] for p in parts])
                tfs = np.concatenate([p[1] for p in parts])
            if dead:
                keep = self.alive[docs]
                docs, tfs = docs[keep], tfs[keep]
            df = np.int64(len(docs))
            if df == 0:
                continue
            idf = np.log(1.0 + (live - df + 0.5) / (df + 0.5))
            result[docs] += qtf * idf * tfs * (self.k1 + 1.0) / (tfs + norm[docs])
        return result

    def _tail_index(self) -> KeywordIndex | None:
        if not self.tail:
            return None
        if self._tail_kw is None or self._tail_kw.size != len(self.tail):
            self._tail_kw = KeywordIndex.from_encoded(self.tail, self.vocab)
        return self._tail_kw

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
            self._write(_encode("u", ids, keys, texts, vectors))

    def delete(self, ids: Sequence[str]) -> None:
        self._current()
        if self._damaged:
            raise IndexDamaged(self._damaged)
        ids = [i for i in dict.fromkeys(ids) if i in self.row_of]
        if not ids:
            return
        with self._writing():
            self._apply_delete(ids)
            self._write(_encode("d", ids))

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
        if self.graph is not None:
            self.graph.add(vectors)
        else:
            self.matrix[start:end] = vectors
        for offset, entry_id in enumerate(ids):
            self.row_of[entry_id] = start + offset
        self.ids.extend(ids)
        self.keys.extend(keys)
        self.alive[start:end] = True
        encoded = [self._term_ids(text) for text in texts]
        self.doc_len[start:end] = [len(e) for e in encoded]
        self.tail.extend(encoded)
        self._tail_kw = None
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
        self.doc_len = np.resize(self.doc_len, size)
        if self.matrix is not None:
            grown = np.zeros((size, self.dim), dtype=np.float32)
            grown[: self.n] = self.matrix[: self.n]
            self.matrix = grown

    def _term_ids(self, text: str) -> np.ndarray:
        found = self._encoded.get(text)
        if found is None:
            if len(self._encoded) > 500_000:
                self._encoded = {}
            vocab = self.vocab
            terms = [vocab.setdefault(term, len(vocab)) for term in tokenize(text)]
            found = self._encoded[text] = np.array(terms, dtype=np.int64)
        return found

    def _write(self, record: bytes | None = None) -> None:
        """Persist the change just applied in memory: a log record, or a new generation
        when none exists yet or the log grew past MAX_LOG_ROWS."""
        limit = min(MAX_LOG_ROWS, max(64, len(self.row_of) // 2))
        if self._needs_base or record is None or self.log_rows > limit:
            self._compact()
            return
        manifest = dict(self._manifest or {})
        log = self.dir / manifest["log"]
        payload = record
        with open(log, "r+b" if log.exists() else "w+b") as handle:
            handle.truncate(manifest["log_size"])
            handle.seek(manifest["log_size"])
            handle.write(_HEADER.pack(_MAGIC, len(payload), zlib.crc32(payload)))
            handle.write(payload)
            size = handle.tell()
        manifest["log_size"] = size
        manifest["count"] = len(self.row_of)
        self._save_manifest(manifest)
        self._loaded_log = size

    def flush(self) -> None:
        self._current()
        if self._damaged is None and self.model is not None and self.log_rows:
            self._compact()

    def close(self) -> None:
        self.flush()

    def _compact(self) -> None:
        """Write the live state as a new generation and point the manifest at it."""
        from memcli.index.vectors import VectorIndex

        s = self.settings
        live = len(self.row_of)
        n = self.n
        alive = self.alive[:n]
        hnsw = live >= s.ann_threshold
        keep_rows = hnsw and self.graph is not None and n - live <= MAX_DEAD
        order = np.arange(n) if keep_rows else np.flatnonzero(alive)
        # postings of every row, dead ones dropped, rows renumbered along `order`
        new_row = np.full(n, -1, dtype=np.int64)
        new_row[order] = np.arange(len(order))
        keyword = self._compacted_keywords(new_row, len(order))
        if keep_rows:
            vector_index = VectorIndex(self.graph, "hnsw")
        else:
            if self.graph is not None:
                vectors = self.graph.reconstruct_n(0, n)[order] if n else None
            else:
                vectors = self.matrix[:n][order]
            if vectors is None:
                vectors = np.zeros((0, self.dim or 0), dtype=np.float32)
            vector_index = VectorIndex.build(
                vectors,
                s.ann_threshold,
                s.hnsw_m,
                s.hnsw_ef_construction,
                s.hnsw_ef_search,
            )
        ids = [self.ids[r] for r in order.tolist()]
        keys = [self.keys[r] for r in order.tolist()]
        self.dir.mkdir(parents=True, exist_ok=True)
        generation = os.urandom(6).hex()
        names = {
            "vectors": f"vectors-{generation}.{vector_index.suffix}",
            "keyword": f"keyword-{generation}.npz",
            "rows": f"rows-{generation}.json",
            "log": f"log-{generation}.bin",
        }
        manifest = {
            "version": VERSION,
            "model": self.model,
            "dim": self.dim,
            "generation": generation,
            "kind": vector_index.kind,
            **names,
            "log_size": 0,
            "count": live,
        }
        try:
            try:
                vector_index.save(self.dir / names["vectors"])
            except RuntimeError as exc:  # FAISS reports a refused write as text
                refused = os_error_of(exc)
                if refused is None:
                    raise
                raise refused from exc
            keyword.save(self.dir / names["keyword"])
            tmp = self.dir / (names["rows"] + ".tmp")
            tmp.write_bytes(json.dumps([ids, keys]).encode("utf-8"))
            tmp.replace(self.dir / names["rows"])
            (self.dir / names["log"]).write_bytes(b"")
            self._save_manifest(manifest)
        except BaseException:
            # a full disk or a kill: the half-written generation goes, the old one stays
            for partial in self.dir.glob(f"*-{generation}*"):
                with contextlib.suppress(OSError):
                    partial.unlink()
            raise
        # the in-memory state becomes what was written (rows renumbered)
        self.ids, self.keys, self.n = ids, keys, len(ids)
        self.row_of = {i: r for r, i in enumerate(ids) if i is not None}
        self.alive = np.array([i is not None for i in ids], dtype=bool)
        self.doc_len = keyword.doc_len.astype(np.float32, copy=True)
        self.base_kw, self.nbase, self.vocab = keyword, len(ids), dict(keyword.vocab)
        self.tail, self._tail_kw = [], None
        self._encoded = {}  # term ids of the old vocabulary
        self.kind = vector_index.kind
        self.matrix = vector_index.matrix
        self.graph = vector_index.index
        self.generation = generation
        self.log_rows = 0
        self._loaded_log = 0
        self._needs_base = False
        self.version += 1
        for stale in self.dir.glob("*-*"):  # the previous generation's files
            if stale.name.startswith(_FILES) and generation not in stale.name:
                with contextlib.suppress(OSError):
                    stale.unlink()

    def _compacted_keywords(self, new_row: np.ndarray, count: int) -> KeywordIndex:
        """One CSR over the base and tail postings of the rows kept, renumbered, terms
        no live row uses dropped."""
        terms, docs, tfs = [], [], []
        for index, offset in ((self.base_kw, 0), (self._tail_index(), self.nbase)):
            if index is None or not len(index.docs):
                continue
            lengths = np.diff(index.indptr)
            terms.append(np.repeat(np.arange(len(lengths), dtype=np.int64), lengths))
            docs.append(index.docs.astype(np.int64) + offset)
            tfs.append(index.tfs)
        if terms:
            term = np.concatenate(terms)
            doc = new_row[np.concatenate(docs)]
            tf = np.concatenate(tfs)
            keep = doc >= 0
            if self.n != len(self.row_of):
                keep &= self.alive[: self.n][np.concatenate(docs)]
            term, doc, tf = term[keep], doc[keep], tf[keep]
        else:
            term = np.zeros(0, dtype=np.int64)
            doc = np.zeros(0, dtype=np.int64)
            tf = np.zeros(0, dtype=np.float32)
        words = list(self.vocab)
        used = np.zeros(len(words), dtype=bool)
        used[term] = True
        renumber = np.cumsum(used) - 1
        vocab = {w: int(renumber[t]) for t, w in enumerate(words) if used[t]}
        term = renumber[term]
        order = np.lexsort((doc, term))
        term, doc, tf = term[order], doc[order], tf[order]
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=len(vocab)), out=indptr[1:])
        doc_len = np.zeros(count, dtype=np.float32)
        rows = np.flatnonzero(new_row >= 0)
        doc_len[new_row[rows]] = np.where(self.alive[rows], self.doc_len[rows], 0)
        return KeywordIndex(
            vocab, indptr, doc.astype(np.int32), tf.astype(np.float32), doc_len, self.k1, self.b
        )

    def _save_manifest(self, manifest: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / MANIFEST
        tmp = self.dir / f".{MANIFEST}.{os.getpid()}.tmp"
        try:
            tmp.write_text(json.dumps(manifest), encoding="utf-8")
            tmp.replace(path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        st = path.stat()
        self._stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        self._manifest = manifest


def _encode(
    op: str,
    ids: list[str],
    keys: list[str] | None = None,
    texts: list[str] | None = None,
    vectors: np.ndarray | None = None,
) -> bytes:
    """A log record: a JSON header line (op, ids, keys, keyword texts), then for an
    upsert the float32 vectors, row after row."""
    head = (
        {"op": op, "ids": ids}
        if op == "d"
        else {"op": op, "ids": ids, "keys": keys, "texts": texts}
    )
    raw = b"" if vectors is None else np.ascontiguousarray(vectors, dtype=np.float32).tobytes()
    return json.dumps(head).encode("ascii") + b"\n" + raw


def _decode(payload: bytes, dim: int) -> tuple:
    """("u", ids, keys, vectors, texts) or ("d", ids) of a log record; ValueError (or
    KeyError, TypeError) for anything else."""
    line, _, raw = payload.partition(b"\n")
    head = json.loads(line)
    ids = head["ids"]
    if not (_names(ids) and None not in ids):
        raise ValueError("log record ids")
    if head["op"] == "d":
        return ("d", ids)
    keys, texts = head["keys"], head["texts"]
    if head["op"] != "u" or not (_names(keys) and _names(texts)):
        raise ValueError("log record")
    if len(keys) != len(ids) or len(texts) != len(ids) or len(raw) != len(ids) * dim * 4:
        raise ValueError("log record sizes")
    vectors = np.frombuffer(raw, dtype=np.float32).reshape(len(ids), dim)
    return ("u", ids, keys, vectors, texts)


def _names(values: object) -> bool:
    """A list of strings (None allowed: a dead row)."""
    return isinstance(values, list) and all(v is None or isinstance(v, str) for v in values)


def _own_file(name: object, kind: str) -> bool:
    """A file name of the index folder for that part (never a path elsewhere)."""
    return (
        isinstance(name, str)
        and name.startswith(f"{kind}-")
        and "/" not in name
        and "\\" not in name
        and name not in (".", "..")
    )


def _top(scores: np.ndarray, k: int, mask: np.ndarray) -> np.ndarray:
    """Rows of the k highest scores where mask is true, sorted by row."""
    candidates = np.flatnonzero(mask)
    if len(candidates) > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        candidates = candidates[part]
    return np.sort(candidates)
