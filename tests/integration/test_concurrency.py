"""A hand edit between memcli's read and its write is kept. With writer processes:
tests/process/test_concurrency.py."""

from __future__ import annotations

from pathlib import Path

from memcli.services.memory import Memory


def test_hand_edit_between_reads_is_kept(empty_workspace: Path) -> None:
    """A change made by a person after memcli read the file is re-read, not overwritten."""
    mem = Memory(empty_workspace)
    mem.add("first", type="fact")
    path = empty_workspace / "memory.md"
    calls = 0

    from memcli.store import files

    real = files._prepare

    def edit_then_prepare(target: Path, text: str) -> str:
        nonlocal calls
        calls += 1
        if calls == 1:  # the person saves while memcli is about to write
            path.write_text(path.read_text().replace("- first", "- first (edited by hand)"))
        return real(target, text)

    files._prepare = edit_then_prepare
    try:
        mem.add("second", type="fact")
    finally:
        files._prepare = real
    texts = [e.text for e in mem.entries()]
    assert "first (edited by hand)" in texts and "second" in texts
    assert calls == 2
