"""Keeping the index in step with the Markdown: the I/O side of memcli.index.sync.

`IndexManager` reads the entry files, notices which changed by the sha256 of their bytes
(skipping the hash only for a file whose size, mtime, ctime and inode are as they were when it
was hashed and which had not changed for RACY_NS before), plans the sync against the backend's
fingerprint (memcli.index.sync.plan_sync: content hash + model identity decide what to
re-embed), embeds only texts the embedding cache lacks and feeds the backend
(memcli.index.backend), never its files. Its own state is `.memcli/index/manifest.json`: the
file signature the index was built from, the model, the backend's revision after that sync and
the name of a snapshot of the parsed entries (so a one-off process whose files are unchanged
need not parse the Markdown). The backend is written first and the manifest last, under the
index lock: a crash in between leaves a manifest that no longer matches the backend's revision,
and the next search syncs again. A missing, damaged or foreign index is rebuilt, noticed."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from memcli.core.errors import MemcliError
from memcli.core.models import Entry
from memcli.index import snapshot as entry_snapshot
from memcli.index.backend import open_backend
from memcli.index.embedder import Embedder, EmbeddingCache, model_id_for, text_hash
from memcli.index.protocol import IndexBackend, IndexDamaged
from memcli.index.sync import (
    Progress,
    SyncPlan,
    SyncReport,
    content_key,
    embed_text,
    keyword_text,
    plan_sync,
    unique_entries,
)
from memcli.index.write_errors import index_writes
from memcli.services import clones
from memcli.services.lastsync import LastSync
from memcli.services.seen import remember_seen, seen_ids
from memcli.store.config import IndexSettings
from memcli.store.files import atomic_write, file_lock
from memcli.store.locks import LockUnavailable
from memcli.store.store import Store
from memcli.store.trust import local_key

STATE_VERSION = 2
#: a file changed this close to the moment it was hashed may change again within the same
#: timestamp tick (ctime moves in coarse steps): its stamp alone proves nothing, hash it
RACY_NS = 2_000_000_000
SMALL_UPDATE = 64  # at most this many new texts go through the query embedder


class IndexManager:
    """Owns the sync of one workspace's index (`.memcli/index/`)."""

    def __init__(
        self,
        store: Store,
        settings: IndexSettings,
        embedder_factory: Callable[[], Embedder],
        notify: Callable[[str], None] | None = None,
        query_factory: Callable[[], Embedder | None] | None = None,
        after_bulk: Callable[[Embedder], None] | None = None,
        bm25: tuple[float, float] = (1.2, 0.75),
        key: Callable[[], bytes | None] | None = None,
    ) -> None:
        self.store = store
        #: the user's secret that signs the entry snapshot (memcli.store.trust.local_key)
        self._key = key or local_key
        self.settings = settings
        self.dir = store.state_dir / "index"
        self.cache_dir = store.state_dir / "cache"
        self.lock = store.state_dir / "locks" / "index.lock"
        self._bm25 = bm25
        self._backend: IndexBackend | None = None
        self._factory = embedder_factory
        self._embedder: Embedder | None = None
        self._query_factory = query_factory
        self._query: Embedder | None = None
        self._after_bulk = after_bulk
        self._manifest: tuple[tuple[int, int, int], dict] | None = None
        #: ((backend revision, snapshot file or None), entries) this process parsed or read
        self._snapshot: tuple[tuple[str, str | None], list[Entry]] | None = None
        #: what the last sync that changed the index did (a watcher reports it)
        self.last_report: SyncReport | None = None
        self.behind: str | None = None  # the writer that left the index behind (ensure)
        self._cache: EmbeddingCache | None = None
        self._digests: dict[str, list] = {}  # name -> files_signature row, memoized
        #: what this process's last sync left the backend holding
        self._last = LastSync()
        #: a long-lived process (the watcher) sets this: new embeddings and the parsed-
        #: entries snapshot are written by flush(), not on every small update
        self.keep_cache_in_memory = False
        self.notify = notify or (lambda message: None)

    @property
    def backend(self) -> IndexBackend:
        """The index backend `[index] backend` names (opened on first use)."""
        if self._backend is None:
            self._backend = open_backend(self.settings, self.dir, bm25=self._bm25)
        return self._backend

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
        """This sync's state (memoized while the file's stat is unchanged; read-only):
        model, files, backend (revision), count, entries (snapshot name)."""
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
        required = ("model", "files", "backend", "count")
        if isinstance(data, dict) and data.get("version") == 1:
            return {"corrupt": True, "old": True}
        if (
            not isinstance(data, dict)
            or data.get("version") != STATE_VERSION
            or any(key not in data for key in required)
        ):
            return {"corrupt": True}
        self._manifest = (stamp, data)
        return data

    def count(self) -> int:
        """Entries the index held after the last sync (0 without one)."""
        count = (self.read_manifest() or {}).get("count", 0)
        return count if isinstance(count, int) else 0

    def files_signature(self) -> dict[str, list]:
        """Every entry file's content hash, with the stamp it was hashed under:
        `name -> [size, mtime_ns, ctime_ns, inode, sha256, hashed_at_ns]`."""
        signature: dict[str, list] = {}
        for name in self.store.entry_files(include_archived=True):
            with contextlib.suppress(OSError):
                signature[name] = self._hashed(name)
        return signature

    def is_current(self, manifest: dict | None) -> bool:
        """True when the index was built from the files' current content and the backend
        is as that sync left it. Content, not size and mtime: a same-size edit whose
        mtime was put back (`touch -r`) is seen. A file is hashed unless its stamp is the
        recorded one and it had not changed for RACY_NS before it was hashed (ctime
        cannot be set back by a user)."""
        if manifest is None or manifest.get("corrupt") or manifest.get("model") != self.model_id:
            return False
        recorded = manifest.get("files")
        if not isinstance(recorded, dict):
            return False
        if manifest.get("backend") != self.backend.revision():
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

    def ensure(self, progress: Progress | None = None) -> IndexBackend:
        """The backend, synced first if the files changed since it was built (rebuilt
        with a notice when unreadable; as it is while another writes it: clones.reading)."""
        with clones.reading(self):
            manifest = self.read_manifest()
            if not self.is_current(manifest):
                try:
                    self.sync(progress=progress, wait=0.0)
                except LockUnavailable as exc:  # a read-only workspace: say so, clearly
                    raise exc.stale(f"{self.store.root}: the search index") from None
            elif manifest and manifest.get("entries") and self.snapshot_entries() is None:
                # a snapshot this user did not write here (a copied workspace): a new one
                with contextlib.suppress(MemcliError):  # read-only: the Markdown is parsed
                    self.sync(progress=progress, wait=0.0)
            try:
                self.backend.count()
            except IndexDamaged as exc:
                self.sync(rebuild=True, progress=progress, notice=str(exc), wait=0.0)
        return self.backend

    def sync(
        self,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        notice: str | None = None,
        wait: float = clones.WRITE_WAIT_SECONDS,
    ) -> SyncReport:
        """Bring the index up to date with the Markdown (from scratch with rebuild); a
        shared index's lease waits `wait` s for another writer (memcli.services.clones)."""
        writes = index_writes(self.dir, self.cache_dir)  # a refused write: one clear error
        with file_lock(self.lock), clones.writing(self.backend, wait), writes:
            manifest = self.read_manifest()
            entries, signature = self._read_entries()
            backend = self.backend
            embedder = self.embedder  # identity only: the model loads when it embeds
            quick = None  # planned from this process's last sync when it can
            if not (rebuild or notice):
                quick = self._last.plan(entries, manifest, self.model_id, backend, self.store)
            if quick is not None:
                (plan, upsert), unique, full = quick, entries, False
            else:
                unique, plan, upsert, full, notice = self._full_plan(
                    entries, manifest, rebuild, notice
                )
            if plan.is_noop and not full:
                # same texts, but lines or metadata may have moved: a fresh snapshot
                self._write_state(unique, signature)
                self._last.synced(unique, plan, upsert, backend.revision(), quick is None)
                return SyncReport(0, 0, 0, len(unique), 0, False, None)
            hashes = [text_hash(embed_text(e)) for e in upsert]
            cache = self.embedding_cache()
            plan = replace(plan, to_embed=cache.missing(hashes))
            texts = {text_hash(embed_text(e)): embed_text(e) for e in upsert}
            self._embed_missing(cache, [texts[h] for h in plan.to_embed], plan.to_embed, progress)
            if cache.unsaved > SMALL_UPDATE or full or not self.keep_cache_in_memory:
                # a watcher saves small additions in batches (flush)
                cache.save([text_hash(embed_text(e)) for e in unique])
            if full:
                backend.reset(embedder.model_id, embedder.dim)
            elif plan.removed:
                backend.delete(plan.removed)
            if upsert:
                backend.upsert(
                    [e.id for e in upsert],
                    cache.get(hashes),
                    [keyword_text(e) for e in upsert],
                    [content_key(e) for e in upsert],
                )
            self._write_state(unique, signature)
            self._last.synced(unique, plan, upsert, backend.revision(), quick is None)
            if notice:
                self.notify(f"{notice}; rebuilt it from the Markdown ({len(unique)} entries)")
            self.last_report = SyncReport(
                len(plan.added),
                len(plan.changed),
                len(plan.removed),
                len(unique),
                len(plan.to_embed),
                full,
                notice,
            )
            return self.last_report

    def _full_plan(
        self, entries: list[Entry], manifest: dict | None, rebuild: bool, notice: str | None
    ) -> tuple[list[Entry], SyncPlan, list[Entry], bool, str | None]:
        """(unique entries, plan, upserts, built anew?, notice) from every entry."""
        backend = self.backend
        held = backend.fingerprint()
        if manifest is None and self.dir.exists():
            notice = notice or "the index was missing"
        if manifest is not None and manifest.get("corrupt"):
            notice = notice or (
                "the index was written by an older memcli"
                if manifest.get("old")
                else "the index manifest was unreadable"
            )
            rebuild = True
        if held.damaged:
            notice = notice or held.damaged
            rebuild = True
        for model in (held.model, (manifest or {}).get("model")):
            if model is not None and model != self.model_id:
                notice = notice or f"the embedding model changed ({model} -> {self.model_id})"
                rebuild = True
        full = rebuild or held.empty
        old = {} if full else held.keys
        unique = unique_entries(entries)
        if clones.is_shared(backend) and not full:
            # an index other clones write too: an entry this clone's files never held
            # is another machine's (not pulled yet), never a deletion of ours
            seen = seen_ids(self.dir) | {e.id for e in unique}
            old = {i: k for i, k in old.items() if i in seen}
        keys = [content_key(e) for e in unique]
        plan = plan_sync(old, list(zip([e.id for e in unique], keys, strict=True)), [])
        self._last.planned_full([e.id for e in unique], keys)
        by_id = {} if full else {e.id: e for e in unique}
        upsert = unique if full else [by_id[i] for i in plan.to_upsert]
        return unique, plan, upsert, full, notice

    def embedding_cache(self, loaded: EmbeddingCache | None = None) -> EmbeddingCache:
        """The model's embedding cache, read once (or `loaded`: a watcher reads it at start)."""
        key = (self.embedder.model_id, self.embedder.dim)
        if self._cache is None or self._cache.key != key:
            fits = loaded is not None and loaded.key == key
            self._cache = loaded if fits else EmbeddingCache(self.cache_dir, *key)
        return self._cache

    def vectors_for(self, entries: Sequence[Entry]) -> np.ndarray:
        """Normalized embeddings of `entries`, in order (from the cache, or embedded now)."""
        cache = self.embedding_cache()
        texts = {text_hash(embed_text(e)): embed_text(e) for e in entries}
        hashes = list(texts)
        missing = cache.missing(hashes)
        self._embed_missing(cache, [texts[h] for h in missing], missing, None)
        return cache.get([text_hash(embed_text(e)) for e in entries])

    def flush(self) -> None:
        """Save what a long-lived process kept in memory: new embeddings, the entries
        snapshot, and the backend's appended changes (compacted)."""
        manifest = self.read_manifest()
        if not manifest or manifest.get("corrupt"):
            return
        snapshot = self._snapshot
        current = snapshot is not None and snapshot[0] == (manifest["backend"], None)
        if self._cache is not None and current:
            self._cache.save([text_hash(embed_text(e)) for e in snapshot[1]])
        with file_lock(self.lock), index_writes(self.dir, self.cache_dir):
            if self.read_manifest() is not manifest:
                return  # another process synced meanwhile
            revision = self.backend.revision()
            if manifest["backend"] != revision:
                return
            self.backend.flush()
            name, mac = manifest.get("entries"), manifest.get("entries_mac")
            if not name and current:
                name, mac = self._write_snapshot(snapshot[1], manifest["files"], to_disk=True)
            manifest = {**manifest, "entries": name, "entries_mac": mac}
            self._save_manifest({**manifest, "backend": self.backend.revision()})
            if current:
                self._snapshot = ((self.backend.revision(), name), snapshot[1])

    def _write_state(self, unique: list[Entry], signature: dict[str, list]) -> None:
        """Record that the backend now holds `unique` as read under `signature`."""
        old = self.read_manifest() or {}
        revision = self.backend.revision()
        name, mac = self._write_snapshot(unique, signature)
        self._save_manifest(
            {
                "version": STATE_VERSION,
                "model": self.model_id,
                "files": signature,
                "backend": revision,
                "count": len(unique),
                "entries": name,
                "entries_mac": mac,
            }
        )
        self._snapshot = ((revision, name), list(unique))
        if clones.is_shared(self.backend):
            remember_seen(self.dir, (e.id for e in unique))
        stale = old.get("entries")
        if stale and stale != name and entry_snapshot.is_name(stale):
            with contextlib.suppress(OSError):
                (self.dir / stale).unlink()

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
                    self.store.invalidate(name)
            entries = self.store.entries(include_archived=True, warn=self.store.left_out)
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
        # ~2% chunks (a bar that moves), 1-16 model batches, longest first (little padding)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        texts, hashes = [texts[i] for i in order], [hashes[i] for i in order]
        size = max(1, self.settings.batch_size)
        batch = min(size * 16, max(size, len(texts) // 50))
        for start in range(0, len(texts), batch):
            cache.add(hashes[start : start + batch], embedder.embed(texts[start : start + batch]))
            if progress:
                progress(min(start + batch, len(texts)), len(texts))
        if embedder is self.embedder and self._after_bulk:
            self._after_bulk(embedder)

    def _write_snapshot(
        self, entries: Sequence[Entry], files: dict, to_disk: bool | None = None
    ) -> tuple[str | None, str | None]:
        """The parsed entries as read under `files`, signed (memcli.index.snapshot); a
        watcher writes them only when it flushes. (file name, MAC), or (None, None)."""
        if not (not self.keep_cache_in_memory if to_disk is None else to_disk):
            return None, None
        return entry_snapshot.write(self.dir, entries, files, self._key()) or (None, None)

    def snapshot_entries(self) -> list[Entry] | None:
        """The entries of the last sync (file order, first of each id) from this process
        or a snapshot this user wrote here for the files the manifest records, or None."""
        manifest = self.read_manifest()
        if not manifest or manifest.get("corrupt"):
            return None
        name = manifest.get("entries")
        key = (manifest["backend"], name)
        if self._snapshot is not None and self._snapshot[0] == key:
            return self._snapshot[1]
        if not isinstance(name, str) or not name:
            return None
        entries = entry_snapshot.read(
            self.dir, name, manifest.get("entries_mac"), manifest.get("files"), self._key()
        )
        if entries is None or len(entries) != manifest["count"]:
            return None
        self._snapshot = (key, entries)
        return entries

    def _save_manifest(self, manifest: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self._manifest_path(), json.dumps(manifest))


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _settled(ctime_ns: int, hashed_at_ns: object) -> bool:
    """The file had not changed for RACY_NS when it was hashed: a later change, even of
    the same size with its mtime put back, moves its ctime. Never on Windows, where
    st_ctime is the creation time."""
    return os.name != "nt" and isinstance(hashed_at_ns, int) and ctime_ns < hashed_at_ns - RACY_NS
