"""A watcher reads the embedding cache at start (issue 27 item 4): the first hand edit
after it starts is indexed as later ones are, without reading the cache from disk nor
growing it (at 100k entries that took 1.2 s against 0.2 s for later edits). The real
model (its ONNX export), real FAISS and the real WatchService, in this process so that
its state can be looked at."""

from __future__ import annotations

from pathlib import Path

import pytest

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
        cache = manager._cache  # read by the watcher's start, not by a sync
        assert cache is not None
        held = cache._matrix  # with room for the next vectors: the edit adds, never copies
        assert len(held) > len(cache._rows)
        memory = workspace / "memory.md"
        memory.write_text(
            memory.read_text().replace("- Likes dark editor themes", "- Likes quartz zebracorns")
        )
        service.on_batch(["memory.md"])
        hits = service.memory.search("quartz zebracorns", mode="keyword", limit=1, touch=False)
        assert hits and "zebracorns" in hits[0].entry.text
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
        memory = workspace / "memory.md"
        memory.write_text(
            memory.read_text().replace("- Likes dark editor themes", "- Likes quartz zebracorns")
        )
        service.on_batch(["memory.md"])
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
        memory = workspace / "memory.md"
        memory.write_text(
            memory.read_text().replace("- Likes dark editor themes", "- Likes quartz zebracorns")
        )
        service.on_batch(["memory.md"])
        hits = service.memory.search("quartz zebracorns", mode="keyword", limit=1, touch=False)
        assert hits and "zebracorns" in hits[0].entry.text
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
