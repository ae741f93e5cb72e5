"""Files memcli writes (issue 14, "smaller" findings): a symlinked memory.md stays a
symlink, and a lock another process holds is waited for out loud, then given up on
with nothing changed (it made commands wait forever in silence). The umask case needs
a child process: tests/process/test_files.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memcli.core.errors import ConflictError
from memcli.services.memory import Memory


def test_a_symlinked_memory_file_stays_a_symlink(workspace: Path, tmp_path: Path) -> None:
    """memory.md kept in a dotfiles repository and linked into the workspace: writes go
    through the link to the file it points at (it was replaced by a regular file)."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "memory.md"
    memory = workspace / "memory.md"
    target.write_bytes(memory.read_bytes())
    memory.unlink()
    memory.symlink_to(target)
    mem = Memory(workspace, notify=lambda m: None)
    entry = mem.add("Deploys go out on Tuesdays").entry
    mem.edit(entry.id, text="Deploys go out on Wednesdays")
    victim = next(e for e in mem.entries() if e.file == "memory.md" and e.id != entry.id)
    mem.forget(victim.id)
    assert memory.is_symlink() and os.readlink(memory) == str(target)
    text = target.read_text()
    assert "Deploys go out on Wednesdays" in text and victim.text not in text
    assert [p.name for p in dotfiles.iterdir()] == ["memory.md"]  # no temp file left there
    mem.undo(mem.plan_undo())  # undo writes through the link too
    assert memory.is_symlink() and victim.text in target.read_text()



def test_a_held_lock_is_waited_for_out_loud_then_given_up(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fcntl = pytest.importorskip("fcntl")  # POSIX; Windows takes the filelock package
    mem = Memory(workspace, notify=lambda m: None)
    mem.add("Warms up the store and its lock files")
    before = {p.name: p.read_bytes() for p in workspace.glob("*.md")}
    monkeypatch.setenv("MEMCLI_LOCK_TIMEOUT", "1.5")
    lock = workspace / ".memcli" / "locks" / "memory.md.lock"
    with open(lock, "a+b") as held:  # another process's flock (one per open file)
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(ConflictError) as caught:
            mem.add("Never written while the lock is held")
        waited = time.monotonic() - started
    assert 1.5 <= waited < 10
    assert "still held by another process" in caught.value.message
    assert "nothing was changed" in caught.value.message and str(lock) in caught.value.message
    assert "waiting for another memcli process to finish" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in workspace.glob("*.md")} == before
    assert mem.add("Written once the lock is free").entry.id  # nothing left stuck
