"""The watcher's pure parts: which paths are relevant, and the debouncer that batches
bursts of events. The watcher as a process: tests/integration/test_watch.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.surfaces.daemon.watch import Debouncer, is_relevant

# ------------------------------------------------------------------ pure parts


def test_relevant_paths(tmp_path: Path) -> None:
    root = tmp_path
    for name in (
        "memory.md",
        "learnings.md",
        "archive.md",
        "memcli.toml",
        "episodes/2026-11-01.md",
    ):
        assert is_relevant(root / name, root), name
    for name in (
        ".memcli/index/manifest.json",
        ".memory.md.swp",
        "memory.md~",
        "4913",
        ".#memory.md",
        "notes.md",
        "episodes/x/y.md",
        "memory.md.tmp",
        "../memory.md",
    ):
        assert not is_relevant(root / name, root), name


def test_debouncer_batches_bursts() -> None:
    d = Debouncer(quiet=0.1, max_wait=1.0)
    assert d.due(0.0) is None
    d.add("memory.md", 0.0)
    d.add("memory.md", 0.05)
    d.add("learnings.md", 0.08)
    assert d.due(0.1) == pytest.approx(0.08)  # quiet since the last event at 0.08
    assert d.ready(0.1) is None
    assert d.due(0.2) == 0.0
    assert d.ready(0.2) == ["learnings.md", "memory.md"]
    assert d.ready(0.3) is None
    for t in range(0, 20):  # a never-ending burst still flushes after max_wait
        d.add("memory.md", t * 0.06)
        if t * 0.06 >= 1.0:
            assert d.ready(t * 0.06) == ["memory.md"]
            break


