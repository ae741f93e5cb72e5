"""Keeping `.memcli/index/` in step with the Markdown.

`plan_sync` is pure: it compares what the index holds with the current entries and says
what to embed. `IndexManager` does the I/O: notices changed files by the sha256 of their
bytes (skipping the hash only for a file whose size, mtime, ctime and inode are as they
were when it was hashed and which had not changed for RACY_NS before), embeds only texts
the cache lacks, and writes a new generation of the index files before pointing the
manifest at them, so readers never see a half-written index. A missing, damaged or
foreign (other model) index is rebuilt with a notice.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import marshal
import os
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memcli.core.models import Entry
from memcli.index.embedder import Embedder, EmbeddingCache, model_id_for, text_hash
from memcli.index.keyword import KeywordIndex
from memcli.index.tokenize import tokenize
from memcli.store.config import IndexSettings
from memcli.store.files import atomic_write, file_lock
from memcli.store.store import Store

INDEX_VERSION = 1
#: a file changed this close to the moment it was hashed may change again within the same
#: timestamp tick (ctime moves in coarse steps): its stamp alone proves nothing, hash it
RACY_NS = 2_000_000_000
SMALL_UPDATE = 64  # at most this many new texts go through the query embedder
#: what reading a damaged index file can raise (faiss raises RuntimeError)
DAMAGED = (OSError, ValueError, KeyError, RuntimeError, EOFError, zipfile.BadZipFile)
Progress = Callable[[int, int], None]


def embed_text(entry: Entry) -> str:
    """What the embedder sees for an entry."""
    return entry.text


def keyword_text(entry: Entry) -> str:
    """What the keyword index sees for an entry: its text and its keywords."""
    return _keyword_text(entry.text, entry.meta.get("kw", ""))


@functools.lru_cache(maxsize=200_000)
def _keyword_text(text: str, kw: str) -> str:
    words = [k.strip() for k in kw.split(",") if k.strip()]
    return text + ("\n" + " ".join(words) if words else "")


@dataclass(frozen=True)
class SyncPlan:
    added: list[str]
    changed: list[str]
    removed: list[str]
    to_embed: list[str]  # text hashes the cache lacks

    @property
    def is_noop(self) -> bool:
        return not (self.added or self.changed or self.removed)


def plan_sync(
    old: dict[str, str], new: Sequence[tuple[str, str]], to_embed: Sequence[str]
) -> SyncPlan:
    """old: id -> content key held by the index; new: (id, content key) of the current
    entries; to_embed: text hashes the embedding cache lacks."""
    new_map = dict(new)
    added = [i for i in new_map if i not in old]
    changed = [i for i, h in new_map.items() if i in old and old[i] != h]
    removed = [i for i in old if i not in new_map]
    return SyncPlan(added, changed, removed, list(to_embed))


@dataclass(frozen=True)
class SyncReport:
    added: int
    changed: int
    removed: int
    total: int
    embedded: int
    rebuilt: bool
    notice: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "total": self.total,
            "embedded": self.embedded,
            "rebuilt": self.rebuilt,
            "notice": self.notice,
        }


@dataclass
class LoadedIndex:
    """An index aligned with a list of entries (position i is `ids[i]`)."""

    ids: list[str]
    hashes: list[str]
    vectors: object  # VectorIndex, loaded lazily by IndexManager
    keywords: KeywordIndex
    model_id: str
    positions: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.positions = {entry_id: i for i, entry_id in enumerate(self.ids)}


class IndexManager:
    """Owns `.memcli/index/` of one workspace."""

    def __init__(
        self,
        store: Store,
        settings: IndexSettings,
        embedder_factory: Callable[[], Embedder],
        notify: Callable[[str], None] | None = None,
        query_factory: Callable[[], Embedder | None] | None = None,
        after_bulk: Callable[[Embedder], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.dir = store.state_dir / "index"
        self.cache_dir = store.state_dir / "cache"
        self.lock = store.state_dir / "locks" / "index.lock"
        self._factory = embedder_factory
        self._embedder: Embedder | None = None
        self._query_factory = query_factory
        self._query: Embedder | None = None
        self._after_bulk = after_bulk
        self._loaded: tuple[str, LoadedIndex] | None = None
        self._manifest: tuple[tuple[int, int, int], dict] | None = None
        self._vocab: dict[str, int] = {}  # keyword term -> id, only ever grows
        self._encoded: dict[str, np.ndarray] = {}  # keyword text -> its term ids
        #: ((generation, snapshot file or None), entries) this process parsed or loaded
        self._snapshot: tuple[tuple[str, str | None], list[Entry]] | None = None
        #: what the last sync that changed the index did (a watcher reports it)
        self.last_report: SyncReport | None = None
        self._cache: tuple[tuple[str, int], EmbeddingCache] | None = None
        self._digests: dict[str, list] = {}  # name -> files_signature row, memoized
        #: a long-lived process (the watcher) sets this: new embeddings and the parsed-
        #: entries snapshot are written by flush(), not on every small update
        self.keep_cache_in_memory = False
        self.notify = notify or (lambda message: None)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory()
        return self._embedder

    @property
    def query_embedder(self) -> Embedder:
        """The embedder for queries and small updates: the ONNX fast path when it is
        available, else the bulk embedder."""
        if self._query is None:
            fast = self._query_factory() if self._query_factory else None
            self._query = fast or self.embedder
        return self._query

    @property
    def model_id(self) -> str:
        if self._embedder is not None:
            return self._embedder.model_id
        return model_id_for(self.settings.model)

    # ------------------------------------------------------------------ state

    def _manifest_path(self) -> Path:
        return self.dir / "manifest.json"

    def read_manifest(self) -> dict | None:
        """The manifest (memoized while the file's stat is unchanged; read-only)."""
        path = self._manifest_path()
        try:
            st = path.stat()
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
            if self._manifest is not None and self._manifest[0] == stamp:
                return self._manifest[1]
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {"corrupt": True}
        checked = self._check_manifest(data)
        if not checked.get("corrupt"):
            self._manifest = (stamp, checked)
        return checked

    def _check_manifest(self, data: object) -> dict:
        required = ("model", "dim", "generation", "files", "ids", "hashes", "keys")
        if (
            not isinstance(data, dict)
            or data.get("version") != INDEX_VERSION
            or any(key not in data for key in required)
            or not len(data["ids"]) == len(data["hashes"]) == len(data["keys"])
        ):
            return {"corrupt": True}
        return data

    def files_signature(self) -> dict[str, list]:
        """Every entry file's content hash, with the stamp it was hashed under:
        `name -> [size, mtime_ns, ctime_ns, inode, sha256, hashed_at_ns]`."""
        signature: dict[str, list] = {}
        for name in self.store.entry_files(include_archived=True):
            with contextlib.suppress(OSError):
                signature[name] = self._hashed(name)
        return signature

    def is_current(self, manifest: dict | None) -> bool:
        """True when the index was built from the files' current content. Content, not
        size and mtime: a same-size edit whose mtime was put back (`touch -r`) is seen.
        A file is hashed unless its stamp is the recorded one and it had not changed for
        RACY_NS before it was hashed (ctime cannot be set back by a user)."""
        if manifest is None or manifest.get("corrupt") or manifest.get("model") != self.model_id:
            return False
        recorded = manifest.get("files")
        if not isinstance(recorded, dict):
            return False
        try:
            names = self.store.entry_files(include_archived=True)
        except OSError:
            return False
        if sorted(names) != sorted(recorded):
            return False
        for name in names:
            held = recorded[name]
            if not isinstance(held, list) or len(held) != 6:
                return False  # an index from before content hashes
            try:
                st = (self.store.root / name).stat()
            except OSError:
                return False
            if _stamp(st) == held[:4] and _settled(st.st_ctime_ns, held[5]):
                continue
            if st.st_size != held[0]:
                return False
            try:
                if self._hashed(name, st)[4] != held[4]:
                    return False
            except OSError:
                return False
        return True

    def _hashed(self, name: str, st: os.stat_result | None = None) -> list:
        """[size, mtime_ns, ctime_ns, inode, sha256, hashed_at_ns] of one entry file;
        the hash is memoized while the stamp stays and the file had settled when hashed
        (a watcher answering searches does not re-read an unchanged file)."""
        path = self.store.root / name
        if st is None:
            st = path.stat()
        stamp = _stamp(st)
        known = self._digests.get(name)
        if known is not None and known[:4] == stamp and _settled(st.st_ctime_ns, known[5]):
            return known
        hashed_at = time.time_ns()
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        result = [*stamp, digest, hashed_at]
        self._digests[name] = result
        return result

    # ------------------------------------------------------------------ sync

    def ensure(self, progress: Progress | None = None) -> LoadedIndex:
        """The current index, synced first if the files changed since it was built."""
        manifest = self.read_manifest()
        if not self.is_current(manifest):
            self.sync(progress=progress)
            manifest = self.read_manifest()
        try:
            return self._load(manifest)
        except DAMAGED:
            pass
        try:  # another process may have just swapped in a new generation
            return self._load(self.read_manifest())
        except DAMAGED:
            self.sync(rebuild=True, progress=progress, notice="the index files were unreadable")
            return self._load(self.read_manifest())

    def sync(
        self,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        notice: str | None = None,
    ) -> SyncReport:
        """Bring the index up to date with the Markdown (from scratch with rebuild)."""
        with file_lock(self.lock):
            manifest = self.read_manifest()
            entries, signature = self._read_entries()
            if manifest is None and self.dir.exists():
                notice = notice or "the index was missing"
            if manifest is not None and manifest.get("corrupt"):
                notice = notice or "the index manifest was unreadable"
                rebuild = True
            elif manifest is not None and manifest.get("model") != self.model_id:
                notice = notice or (
                    f"the embedding model changed ({manifest.get('model')} -> {self.model_id})"
                )
                rebuild = True
            if rebuild or manifest is None or manifest.get("corrupt"):
                old: dict[str, str] = {}
            else:
                old = dict(zip(manifest["ids"], manifest["keys"], strict=True))
            unique = _unique_entries(entries)
            pairs = [(e.id, text_hash(embed_text(e))) for e in unique]
            keys = [
                f"{h}:{text_hash(keyword_text(e))[:16]}"
                for e, (_, h) in zip(unique, pairs, strict=True)
            ]
            embedder = self.embedder  # identity only: the model loads when it embeds
            cache = self._embedding_cache(embedder)
            plan = plan_sync(
                old,
                [(i, k) for (i, _), k in zip(pairs, keys, strict=True)],
                cache.missing([h for _, h in pairs]),
            )
            same_order = manifest is not None and manifest.get("ids") == [i for i, _ in pairs]
            if plan.is_noop and same_order and not rebuild:
                # same texts, but lines or metadata may have moved: a fresh snapshot
                old_snapshot = manifest.get("entries")
                snapshot = self._write_snapshot(unique, manifest["generation"])
                manifest = {**manifest, "files": signature, "entries": snapshot}
                self._write_manifest(manifest)
                if old_snapshot and old_snapshot != snapshot:
                    with contextlib.suppress(OSError):
                        (self.dir / old_snapshot).unlink()
                return SyncReport(0, 0, 0, len(pairs), 0, False, None)
            texts = {h: embed_text(e) for e, (_, h) in zip(unique, pairs, strict=True)}
            self._embed_missing(cache, [texts[h] for h in plan.to_embed], plan.to_embed, progress)
            hashes = [h for _, h in pairs]
            if cache.unsaved > SMALL_UPDATE or not old or not self.keep_cache_in_memory:
                cache.save(hashes)  # a watcher saves small additions in batches (flush)
            self._write_generation(
                unique, pairs, keys, cache.get(hashes), signature, embedder, bool(old)
            )
            if notice:
                self.notify(f"{notice}; rebuilt it from the Markdown ({len(pairs)} entries)")
            self.last_report = SyncReport(
                len(plan.added),
                len(plan.changed),
                len(plan.removed),
                len(pairs),
                len(plan.to_embed),
                rebuild or not old,
                notice,
            )
            return self.last_report

    def _embedding_cache(self, embedder: Embedder) -> EmbeddingCache:
        key = (embedder.model_id, embedder.dim)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, EmbeddingCache(self.cache_dir, embedder.model_id, embedder.dim))
        return self._cache[1]

    def vectors_for(self, entries: Sequence[Entry]) -> np.ndarray:
        """Normalized embeddings of `entries`, in order: from the embedding cache, the
        missing ones embedded (and cached) now."""
        cache = self._embedding_cache(self.embedder)
        texts = {text_hash(embed_text(e)): embed_text(e) for e in entries}
        hashes = list(texts)
        missing = cache.missing(hashes)
        self._embed_missing(cache, [texts[h] for h in missing], missing, None)
        return cache.get([text_hash(embed_text(e)) for e in entries])

    def flush(self) -> None:
        """Save the embeddings and the entries snapshot a long-lived process kept in
        memory."""
        manifest = self.read_manifest()
        if not manifest or manifest.get("corrupt"):
            return
        if self._cache is not None:
            self._cache[1].save(manifest["hashes"])
        snapshot = self._snapshot
        if manifest.get("entries") or snapshot is None:
            return
        if snapshot[0] != (manifest["generation"], None):
            return
        with file_lock(self.lock):
            if self.read_manifest() is not manifest:
                return  # another process wrote a new generation meanwhile
            name = self._write_snapshot(snapshot[1], manifest["generation"], to_disk=True)
            self._write_manifest({**manifest, "entries": name})

    def _read_entries(self) -> tuple[list[Entry], dict[str, list]]:
        """Entries and the file signature they were read under (re-read if a file
        changed while parsing, so the manifest never vouches for older content)."""
        for _ in range(5):
            signature = self.files_signature()
            now = time.time_ns()
            for name, row in signature.items():
                if not _settled(row[2], now):
                    # the store memoizes parses by stamp, which a write within the same
                    # timestamp tick keeps: parse a file that changed just now afresh
                    self.store._parsed.pop(name, None)
            entries = self.store.entries(include_archived=True, warn=lambda problem: None)
            after = self.files_signature()
            if {n: r[:5] for n, r in after.items()} == {n: r[:5] for n, r in signature.items()}:
                break
        return entries, signature

    def _embed_missing(
        self, cache: EmbeddingCache, texts: list[str], hashes: list[str], progress: Progress | None
    ) -> None:
        if not texts:
            return
        small = len(texts) <= SMALL_UPDATE
        embedder = self.query_embedder if small else self.embedder
        batch = max(1, self.settings.batch_size) * 16  # big chunks: the model sorts by length
        done = 0
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            cache.add(hashes[start : start + batch], embedder.embed(chunk))
            done += len(chunk)
            if progress:
                progress(done, len(texts))
        if embedder is self.embedder and self._after_bulk:
            self._after_bulk(embedder)

    def _write_generation(
        self,
        entries: Sequence[Entry],
        pairs: list[tuple[str, str]],
        keys: list[str],
        vectors: np.ndarray,
        signature: dict[str, list[int]],
        embedder: Embedder,
        incremental: bool = True,
    ) -> None:
        from memcli.index.vectors import VectorIndex

        self.dir.mkdir(parents=True, exist_ok=True)
        generation = hashlib.sha256(os.urandom(16)).hexdigest()[:12]
        s = self.settings
        hashes = [h for _, h in pairs]
        vector_index = None
        previous = self._loaded[1] if self._loaded else None
        if incremental and previous is not None and len(hashes) >= s.ann_threshold:
            # a big HNSW graph: append the changed vectors instead of building anew
            vector_index = previous.vectors.updated(previous.hashes, hashes, vectors)
        if vector_index is None:
            vector_index = VectorIndex.build(
                vectors, s.ann_threshold, s.hnsw_m, s.hnsw_ef_construction, s.hnsw_ef_search
            )
        vectors_name = f"vectors-{generation}.{vector_index.suffix}"
        slots_name = f"slots-{generation}.npy" if vector_index.slots is not None else None
        vector_index.save(self.dir / vectors_name, slots_name and self.dir / slots_name)
        if len(self._encoded) > 500_000:  # start over between builds, never during one
            self._encoded, self._vocab = {}, {}
        encoded = [self._term_ids(keyword_text(e)) for e in entries]
        keyword_index = KeywordIndex.from_encoded(encoded, dict(self._vocab))
        keyword_index.save(self.dir / f"keyword-{generation}.npz")
        old = self.read_manifest() or {}
        manifest = {
            "version": INDEX_VERSION,
            "model": embedder.model_id,
            "dim": embedder.dim,
            "generation": generation,
            "files": signature,
            "ids": [i for i, _ in pairs],
            "hashes": [h for _, h in pairs],
            "keys": keys,
            "vectors": vectors_name,
            "slots": slots_name,
            "entries": self._write_snapshot(entries, generation),
        }
        self._write_manifest(manifest)
        # Keep what was just built: this process need not read it back from disk.
        self._loaded = (
            generation,
            LoadedIndex(
                manifest["ids"], manifest["hashes"], vector_index, keyword_index, embedder.model_id
            ),
        )
        previous = old.get("generation")
        for stale in self.dir.glob("*-*.*"):
            if generation not in stale.name and (previous is None or previous not in stale.name):
                with contextlib.suppress(OSError):
                    stale.unlink()
        if previous and previous != generation:
            for stale in self.dir.glob(f"*-{previous}*"):
                with contextlib.suppress(OSError):
                    stale.unlink()

    def _write_snapshot(
        self, entries: Sequence[Entry], generation: str, to_disk: bool | None = None
    ) -> str | None:
        """The parsed entries (index order) as of the manifest's file signature, so a
        one-off process whose files are unchanged need not parse the Markdown. This
        process keeps the entries themselves (their derived values stay computed); a
        watcher writes the file only when it flushes. The file name, or None."""
        name = None
        if not self.keep_cache_in_memory if to_disk is None else to_disk:
            name = f"entries-{generation}-{os.urandom(4).hex()}.marshal"
            rows = [e.as_row() for e in entries]
            tmp = self.dir / (name + ".tmp")
            tmp.write_bytes(marshal.dumps(rows))
            tmp.replace(self.dir / name)
        self._snapshot = ((generation, name), list(entries))
        return name

    def snapshot_entries(self, loaded: LoadedIndex) -> list[Entry] | None:
        """The entries of the current manifest's snapshot, aligned with `loaded.ids`
        (memoized per snapshot file); None when there is none or it does not fit."""
        manifest = self.read_manifest()
        generation = (manifest or {}).get("generation")
        if not generation or generation != self._loaded_generation(loaded):
            return None
        name = manifest.get("entries")
        if self._snapshot is not None and self._snapshot[0] == (generation, name):
            return self._snapshot[1]
        if not name:
            return None
        try:
            rows = marshal.loads((self.dir / name).read_bytes())
            entries = [Entry.from_row(row) for row in rows]
        except (OSError, ValueError, EOFError, TypeError, IndexError):
            return None
        if [e.id for e in entries] != loaded.ids:
            return None
        self._snapshot = ((generation, name), entries)
        return entries

    def _loaded_generation(self, loaded: LoadedIndex) -> str | None:
        return self._loaded[0] if self._loaded and self._loaded[1] is loaded else None

    def _term_ids(self, text: str) -> np.ndarray:
        """The text's keyword tokens as ids of this manager's vocabulary, memoized: a
        long-lived watcher tokenizes and encodes only new text."""
        found = self._encoded.get(text)
        if found is None:
            vocab = self._vocab
            terms = [vocab.setdefault(term, len(vocab)) for term in tokenize(text)]
            found = self._encoded[text] = np.array(terms, dtype=np.int64)
        return found

    def _write_manifest(self, manifest: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self._manifest_path(), json.dumps(manifest))

    def _load(self, manifest: dict | None) -> LoadedIndex:
        from memcli.index.vectors import VectorIndex

        if manifest is None or manifest.get("corrupt"):
            raise ValueError("no index")
        generation = manifest["generation"]
        if self._loaded and self._loaded[0] == generation:
            return self._loaded[1]
        slots = manifest.get("slots")
        vectors = VectorIndex.load(
            self.dir / manifest.get("vectors", f"vectors-{generation}.faiss"),
            self.settings.hnsw_ef_search,
            self.dir / slots if slots else None,
        )
        keywords = KeywordIndex.load(self.dir / f"keyword-{generation}.npz")
        ids, hashes = manifest["ids"], manifest["hashes"]
        if vectors.size != len(ids) or keywords.size != len(ids):
            raise ValueError("index files disagree with the manifest")
        loaded = LoadedIndex(ids, hashes, vectors, keywords, manifest["model"])
        self._loaded = (generation, loaded)
        return loaded


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _settled(ctime_ns: int, hashed_at_ns: object) -> bool:
    """The file had not changed for RACY_NS when it was hashed: a later change, even of
    the same size with its mtime put back, moves its ctime. Never on Windows, where
    st_ctime is the creation time."""
    return os.name != "nt" and isinstance(hashed_at_ns, int) and ctime_ns < hashed_at_ns - RACY_NS


def _unique_entries(entries: Sequence[Entry]) -> list[Entry]:
    """Entries with distinct ids (the first wins; duplicates are reported by `doctor`)."""
    seen: set[str] = set()
    result = []
    for entry in entries:
        if entry.id not in seen:
            seen.add(entry.id)
            result.append(entry)
    return result
