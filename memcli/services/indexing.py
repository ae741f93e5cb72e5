"""Keeping the index in step with the Markdown: the I/O side of memcli.index.sync.

`IndexManager` reads the entry files, notices which changed by the sha256 of their bytes,
plans the sync against the backend's fingerprint (memcli.index.sync.plan_sync: content
hash + model identity decide what to re-embed), embeds only texts the embedding cache lacks
and feeds the backend (memcli.index.backend), never its files. What it remembers of a sync
(the manifest, the files' signature, the entries snapshot) is its base,
memcli.services.indexstate.IndexState. The backend is written first and the manifest last,
under the index lock: a crash in between leaves a manifest that no longer matches the
backend's revision, and the next search syncs again. A missing, damaged or foreign index is
rebuilt, noticed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from memcli.core.errors import MemcliError
from memcli.core.models import Entry
from memcli.index import snapshot as entry_snapshot
from memcli.index import sync as index_sync
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
    query_text,
    unique_entries,
)
from memcli.index.write_errors import index_writes
from memcli.services import clones
from memcli.services.indexstate import STATE_VERSION, IndexState
from memcli.services.lastsync import LastSync
from memcli.services.seen import remember_seen, seen_ids
from memcli.store.config import IndexSettings
from memcli.store.files import file_lock
from memcli.store.locks import LockUnavailable
from memcli.store.store import Store
from memcli.store.trust import local_key

SMALL_UPDATE = 64  # at most this many new texts go through the query embedder


def glosses_chinese(settings: IndexSettings) -> bool:
    """Whether the model embeds Chinese text as its English gloss (the `gloss` setting,
    for a model that reads English only: memcli.index.gloss)."""
    from memcli.index import coverage

    return settings.gloss and not coverage.multilingual(settings.model)


class IndexManager(IndexState):
    """Owns the sync of one workspace's index (`.memcli/index/`)."""

    def __init__(
        self,
        store: Store,
        settings: IndexSettings,
        embedder_factory: Callable[[], Embedder],
        notify: Callable[[str], None] | None = None,
        query_factory: Callable[[], Embedder | None] | None = None,
        bm25: tuple[float, float] = (1.2, 0.75),
        key: Callable[[], bytes | None] | None = None,
    ) -> None:
        super().__init__(store, key or local_key)
        self.settings = settings
        self.cache_dir = store.state_dir / "cache"
        self.lock = store.state_dir / "locks" / "index.lock"
        self._bm25 = bm25
        self._backend: IndexBackend | None = None
        self._factory = embedder_factory
        self._embedder: Embedder | None = None
        self._query_factory = query_factory
        self._query: Embedder | None = None
        self._starting: tuple[object, list] | None = None  # (thread, [its embedder])
        #: what the last sync that changed the index did (a watcher reports it)
        self.last_report: SyncReport | None = None
        self.behind: str | None = None  # the writer that left the index behind (ensure)
        self._cache: EmbeddingCache | None = None
        #: read_cache_ahead's thread and what it read ([cache] or [], [error] or [])
        self._reading: tuple[object, list, list] | None = None
        #: what this process's last sync left the backend holding
        self._last = LastSync(self.glossed)
        self.notify = notify or (lambda message: None)
        if notify is not None:
            index_sync.gloss_notice = notify
        #: why the layer may not be written (set by services.layers; None: it may), and
        #: the private folder its index moved to then (services.readonly_index)
        self.read_only: str | None = None
        self.shadowed: object = None

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
        """The embedder for queries and small updates: the fast path (numpy or ONNX:
        memcli.index.query_engine) when it is available, else the bulk embedder."""
        if self._query is None:
            made: list = []
            if self._starting is not None:  # start_query_embedder's thread
                thread, made = self._starting
                thread.join()  # type: ignore[attr-defined]
                self._starting = None
            # not started, or its start failed: made here, where it fails as it would have
            factory = self._query_factory
            fast = made[0] if made else (factory() if factory else None)
            self._query = fast or self.embedder
        return self._query

    def start_query_embedder(self, texts: Sequence[str] = ()) -> None:
        """Start the query embedder, and embed `texts` with it, in a thread of its own,
        for a one-off process to read the index meanwhile: numpy's matrix products (and
        onnxruntime, for a model the numpy path does not take) let go of the interpreter
        while they run the model. `query_embedder` takes it when asked for. Nothing
        to do once the embedder is there (a watcher's) or being started."""
        if self._query is not None or self._starting is not None or not self._query_factory:
            return
        import threading

        factory, made = self._query_factory, []
        texts = [query_text(t, self.glossed) for t in texts]  # as the search embeds them

        def start() -> None:
            with contextlib.suppress(Exception):  # a failed start is made again by the
                made.append(factory())  # caller of query_embedder, where it fails as ever
                prefetch = getattr(made[0], "prefetch", None)
                if prefetch is not None and texts:
                    prefetch(list(texts))  # (if this fails, embed computes them)

        thread = threading.Thread(target=start, name="memcli-query-embedder", daemon=True)
        self._starting = (thread, made)
        thread.start()

    @property
    def glossed(self) -> bool:
        return glosses_chinese(self.settings)

    def _embedded(self, entries: Sequence[Entry]) -> tuple[list[str], dict[str, str]]:
        """The embedding cache's key of each entry, in order, and each key's text (what
        the embedder sees: memcli.index.sync.embed_text)."""
        glossed = self.glossed
        texts = [embed_text(e, glossed) for e in entries]
        hashes = [text_hash(t) for t in texts]
        return hashes, dict(zip(hashes, texts, strict=True))

    @property
    def model_id(self) -> str:
        if self._embedder is not None:
            return self._embedder.model_id
        return model_id_for(self.settings.model)

    # ------------------------------------------------------------------ state

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
        return self._unchanged(recorded)

    # ------------------------------------------------------------------ sync

    def ensure(self, progress: Progress | None = None) -> IndexBackend:
        """The backend, synced first if the files changed since it was built (rebuilt
        with a notice when unreadable; as it is while another writes it: clones.reading)."""
        if self.read_only and not self.shadowed:
            from memcli.services import readonly_index

            found = readonly_index.readable_in_place(self)
            if found is not None:
                return found
            readonly_index.shadow(self)
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
        if self.read_only and not self.shadowed:
            from memcli.services.readonly_index import shadow

            shadow(self)  # a read-only layer is indexed elsewhere
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
            hashes, texts = self._embedded(upsert)
            cache = self.embedding_cache()
            plan = replace(plan, to_embed=cache.missing(hashes))
            self._embed_missing(cache, [texts[h] for h in plan.to_embed], plan.to_embed, progress)
            if cache.unsaved > SMALL_UPDATE or full or not self.keep_cache_in_memory:
                # a watcher saves small additions in batches (flush)
                cache.save(self._embedded(unique)[0])
            if full:
                backend.reset(embedder.model_id, embedder.dim)
            elif plan.removed:
                backend.delete(plan.removed)
            if upsert:
                backend.upsert(
                    [e.id for e in upsert],
                    cache.get(hashes),
                    [keyword_text(e) for e in upsert],
                    [content_key(e, self.glossed) for e in upsert],
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
        keys = [content_key(e, self.glossed) for e in unique]
        plan = plan_sync(old, list(zip([e.id for e in unique], keys, strict=True)), [])
        self._last.planned_full([e.id for e in unique], keys)
        by_id = {} if full else {e.id: e for e in unique}
        upsert = unique if full else [by_id[i] for i in plan.to_upsert]
        return unique, plan, upsert, full, notice

    def read_cache_ahead(
        self, reserve: int, failed: Callable[[Exception], None] | None = None
    ) -> object:
        """Read the model's embedding cache, with room for `reserve` new vectors, in a
        thread of its own (a watcher, at its start: at 100k entries that is ≈ 2 s, which
        the first hand edit paid, and more for growing the cache it read itself); the
        first use of the cache waits for it (`embedding_cache`). A read that fails is
        given to `failed` and the cache read when first used. Returns the thread."""
        import threading

        key = (self.embedder.model_id, self.embedder.dim)  # identity only: nothing loads
        read: list[EmbeddingCache] = []
        errors: list[Exception] = []

        def run() -> None:
            try:
                cache = EmbeddingCache(self.cache_dir, *key)
                cache.reserve(reserve)
                read.append(cache)
            except Exception as exc:  # noqa: BLE001 - only a head start
                errors.append(exc)
                if failed is not None:
                    with contextlib.suppress(Exception):
                        failed(exc)

        thread = threading.Thread(target=run, name="memcli-cache", daemon=True)
        self._reading = (thread, read, errors)
        thread.start()
        return thread

    def embedding_cache(self, loaded: EmbeddingCache | None = None) -> EmbeddingCache:
        """The model's embedding cache, read once (or `loaded`: a watcher reads it at
        start; or what read_cache_ahead read, waited for here)."""
        if self._reading is not None and loaded is None:
            thread, read, _ = self._reading
            self._reading = None
            thread.join()  # type: ignore[attr-defined]
            if read and self._cache is None:
                loaded = read[0]
        key = (self.embedder.model_id, self.embedder.dim)
        if self._cache is None or self._cache.key != key:
            fits = loaded is not None and loaded.key == key
            self._cache = loaded if fits else EmbeddingCache(self.cache_dir, *key)
        return self._cache

    def vectors_for(self, entries: Sequence[Entry]) -> np.ndarray:
        """Normalized embeddings of `entries`, in order (from the cache, or embedded now)."""
        cache = self.embedding_cache()
        hashes, texts = self._embedded(entries)
        missing = cache.missing(list(texts))
        self._embed_missing(cache, [texts[h] for h in missing], missing, None)
        return cache.get(hashes)

    def flush(self) -> None:
        """Save what a long-lived process kept in memory: new embeddings, the entries
        snapshot, and the backend's appended changes (compacted)."""
        if self.read_only and not self.shadowed:
            return  # a read-only layer's own index is only read
        manifest = self.read_manifest()
        if not manifest or manifest.get("corrupt"):
            return
        snapshot = self._snapshot
        current = snapshot is not None and snapshot[0] == (manifest["backend"], None)
        if self._cache is not None and current:
            self._cache.save(self._embedded(snapshot[1])[0])
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

    def hold_parsed(self) -> bool:
        """Serve the entries from the store's own parse of the files rather than from
        the snapshot's copies, when the index is current for them (a watcher, at its
        start): the parse each hand edit's reparse builds on, so that the search view
        carries over to the edit's entries instead of being derived anew for every entry
        (≈ 0.15 s of the first edit at 100k entries). True when it did."""
        manifest = self.read_manifest()
        if not manifest or manifest.get("corrupt") or not self.is_current(manifest):
            return False
        entries, signature = self._read_entries()
        recorded = manifest["files"]
        if {n: r[:5] for n, r in signature.items()} != {n: r[:5] for n, r in recorded.items()}:
            return False  # a file moved on meanwhile: its sync will read it
        unique = unique_entries(entries)
        if len(unique) != manifest["count"]:
            return False
        self._snapshot = ((manifest["backend"], manifest.get("entries")), unique)
        return True

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
