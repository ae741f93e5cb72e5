"""A watcher reads the embedding cache at start (issue 27 item 4): the first hand edit
after it starts is indexed as later ones are, without reading the cache from disk nor
growing it (at 100k entries that took 1.2 s against 0.2 s for later edits). The real
model (its ONNX export), real FAISS and the real WatchService, in this process so that
its state can be looked at."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.index.embedder import EmbeddingCache
from memcli.services.memory import Memory
from memcli.surfaces.daemon.service import WatchService

pytestmark = pytest.mark.slow


def test_the_first_edit_finds_the_embedding_cache_read_and_grown(
    workspace: Path, exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    Memory(workspace, notify=lambda m: None).index()  # current when the watcher starts
    service = WatchService(workspace, log=lambda message: None)
    monkeypatch.setattr(service.server, "detach_stdin", False)  # keep pytest's stdin
    service.start()
    try:
        service.cache_reader.join(timeout=60)
        manager = service.memory.index_manager
        loads: list[object] = []
        real_load = EmbeddingCache._load
        monkeypatch.setattr(
            EmbeddingCache, "_load", lambda self: loads.append(self) or real_load(self)
        )
        cache = manager.embedding_cache()  # read by the watcher's start, not by a sync
        assert loads == []
        held = cache._matrix  # with room for the next vectors: the edit adds, never copies
        assert len(held) > len(cache._rows)
        _first_edit_found(service, workspace)
        assert manager._cache is cache and cache._matrix is held
        assert cache.unsaved == 1  # the edit's new text went into this cache
    finally:
        service.stop()


def test_the_first_edit_finds_the_files_newest_version_at_hand(
    workspace: Path, exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history's delta of a hand edit is built on the file's newest version: a
    watcher holds it from its start, so the first edit does not read it back and
    decompress it from the history (≈ 0.2 s of that edit's 0.5 s at 100k entries)."""
    from memcli.store.history_objects import Objects

    mem = Memory(workspace, notify=lambda m: None)
    mem.add("Keeps the release notes in docs/changes.md", type="fact")  # a version memcli wrote
    mem.index()
    service = WatchService(workspace, log=lambda message: None)
    monkeypatch.setattr(service.server, "detach_stdin", False)
    service.start()
    try:
        service.cache_reader.join(timeout=60)
        history = service.memory.store.history
        head = history.head("memory.md")
        assert head is not None
        read_back: list[str] = []
        real = Objects._read

        def reading(self, digest, header_only=False):  # noqa: ANN001, ANN202
            if not header_only:
                read_back.append(digest)
            return real(self, digest, header_only)

        monkeypatch.setattr(Objects, "_read", reading)
        _first_edit(service, workspace)
        assert history.head("memory.md") not in (None, head)  # the edit is in the history
        assert history.objects.base_of(history.head("memory.md")) == head  # a delta on it
        assert head not in read_back  # the delta's base: held since the start
    finally:
        service.stop()


def test_the_first_edit_carries_the_search_view_over(
    workspace: Path, exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watcher derives the search view before serving, from the entries as the store
    parsed them: the first request finds it, and the first hand edit's reparse keeps the
    unchanged entries, so the view carries over to them (not derived anew for every
    entry: ≈ 0.15 s of the first edit at 100k entries)."""
    Memory(workspace, notify=lambda m: None).index()
    service = WatchService(workspace, log=lambda message: None)
    monkeypatch.setattr(service.server, "detach_stdin", False)
    service.start()
    try:
        # the entries served are the store's own parse (not a snapshot's copies)
        held = service.memory.index_manager.snapshot_entries()
        parsed = {e.id: e for e in service.memory.store.entries(include_archived=True)}
        assert held and all(parsed[e.id] is e for e in held)
        searcher = service.memory.searcher
        assert searcher._view is not None  # derived at start
        before = searcher._view[1]
        assert "arrays" in vars(before)
        _first_edit_found(service, workspace)
        after = searcher._view[1]
        assert after is not before
        kept = [b is a for b, a in zip(before.ordered, after.ordered, strict=True)]
        assert kept.count(False) == 1  # only the edited entry is a new object
    finally:
        service.stop()


def test_a_batch_whose_sync_failed_is_caught_up_without_another_edit(
    workspace: Path, exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand edit whose batch could not sync (another process held the index's lock
    past MEMCLI_LOCK_TIMEOUT) is indexed once the lock is free, with no further event:
    the watcher looks for an index the files moved past once a second. Without that it
    stayed out of date until the next edit or search (seen under load in the suite's
    concurrency scenario)."""
    from memcli.store.locks import file_lock
    from tests.support.processes import wait_for

    Memory(workspace, notify=lambda m: None).index()
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "0.3")
    said: list[str] = []
    service = WatchService(workspace, log=said.append)
    monkeypatch.setattr(service.server, "detach_stdin", False)
    service.start()
    try:
        manager = service.memory.index_manager
        memory = workspace / "memory.md"
        with file_lock(manager.lock):
            memory.write_text(memory.read_text() + "\n- Keeps spare quartz zebracorns\n")
            wait_for(lambda: any(line.startswith("error:") for line in said), timeout=30)
            assert not manager.is_current(manager.read_manifest())
        wait_for(lambda: manager.is_current(manager.read_manifest()), timeout=30)
        hits = service.memory.search("quartz zebracorns", mode="keyword", limit=1, touch=False)
        assert hits and "zebracorns" in hits[0].entry.text
    finally:
        service.stop()


def _first_edit(service: WatchService, workspace: Path) -> None:
    """A hand edit of memory.md, handed to the watcher as its first batch."""
    memory = workspace / "memory.md"
    memory.write_text(
        memory.read_text().replace("- Likes dark editor themes", "- Likes quartz zebracorns")
    )
    service.on_batch(["memory.md"])


def _first_edit_found(service: WatchService, workspace: Path) -> None:
    """The first edit, then a search that finds its new text."""
    _first_edit(service, workspace)
    hits = service.memory.search("quartz zebracorns", mode="keyword", limit=1, touch=False)
    assert hits and "zebracorns" in hits[0].entry.text


def _in_place(path: Path, line: str) -> None:
    """A hand edit as an editor saving in place makes it: the same inode overwritten,
    then cut (tests/support/reliability.py's HAND_IN_PLACE)."""
    data = path.read_text().replace("## Lessons\n", f"## Lessons\n- {line}\n", 1).encode()
    with path.open("r+b") as handle:
        handle.write(data)
        handle.truncate()


def _index_matches_the_files(root: Path) -> bool:
    """The index says it is current and holds every entry of the files, as they are now
    (what tests/support/reliability.py's concurrency scenario checks at its end)."""
    from memcli.index.sync import content_key

    mem = Memory(root, notify=lambda m: None)
    manager = mem.index_manager
    if not manager.is_current(manager.read_manifest()):
        return False
    seen: dict[str, str] = {}
    for entry in mem.store.entries(include_archived=True, warn=lambda p: None):
        seen.setdefault(entry.id, content_key(entry))
    return manager.backend.fingerprint().keys == seen


MOMENTS = ["after-start-sync", "inside-hold", "held-not-serving", "reading-heads"]


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_hand_edit_landing_while_the_watcher_starts_is_indexed(
    workspace: Path, exported, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    """A hand edit saved in place while the watcher starts (after its start-up sync,
    between the check and the parse of the entries it holds, after holding them but
    before serving, or while its start-up thread reads the files' newest versions)
    reaches no file event (the observer starts last): the watcher's catch-up indexes it,
    and no state held from before it ever makes the index say it is current without it.
    (Written for the loss test_reliability's concurrency scenario saw with these start-up
    steps in, which none of these moments reproduces.)"""
    from memcli.services.indexing import IndexManager
    from memcli.store import history_objects

    Memory(workspace, notify=lambda m: None).index()
    learnings = workspace / "learnings.md"
    service = WatchService(workspace, log=lambda message: None)
    monkeypatch.setattr(service.server, "detach_stdin", False)
    edits: list[str] = []

    def edit_once() -> None:
        if not edits:
            edits.append("Keeps quartz zebracorns in the staging cluster")
            _in_place(learnings, edits[0])

    held: list[bool] = []
    holding: list[bool] = []
    real_hold = IndexManager.hold_parsed

    def hold(self: IndexManager) -> bool:
        if moment == "after-start-sync":
            edit_once()
        holding.append(True)
        held.append(real_hold(self))
        return held[-1]

    monkeypatch.setattr(IndexManager, "hold_parsed", hold)
    if moment == "inside-hold":  # after its check that the index is current
        real_read = IndexManager._read_entries

        def read_after_edit(self: IndexManager) -> tuple:
            if holding and not held:
                edit_once()
            return real_read(self)

        monkeypatch.setattr(IndexManager, "_read_entries", read_after_edit)
    elif moment == "held-not-serving":
        real_start = service.server.start

        def serve_after_edit() -> None:
            edit_once()
            real_start()

        monkeypatch.setattr(service.server, "start", serve_after_edit)
    elif moment == "reading-heads":  # learnings.md read and hashed, its head not checked
        real_sha = history_objects.sha256

        def hash_then_edit(data: bytes) -> str:
            digest = real_sha(data)
            if b"## Lessons" in data:
                edit_once()
            return digest

        monkeypatch.setattr(history_objects, "sha256", hash_then_edit)
    service.start()
    try:
        service.cache_reader.join(timeout=60)
        monkeypatch.undo()  # the hooks have done their part
        assert edits, f"the edit at {moment} did not happen"
        # the entries are held only when the index was current for the files then (the
        # heads are read before they are held)
        assert held == [moment == "held-not-serving"]
        service._catch_up()
        assert _index_matches_the_files(workspace)
        hits = service.memory.search("quartz zebracorns", mode="keyword", limit=1, touch=False)
        assert hits and "zebracorns" in hits[0].entry.text
        # and the first edit that does reach the watcher as an event
        _in_place(learnings, "Keeps spare onyx narwhals in the billing rack")
        service.on_batch(["learnings.md"])
        assert _index_matches_the_files(workspace)
        hits = service.memory.search("onyx narwhals", mode="keyword", limit=1, touch=False)
        assert hits and "narwhals" in hits[0].entry.text
    finally:
        service.stop()
