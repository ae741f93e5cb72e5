"""The write guard and the files memcli writes (issue 14): an editor's save landing
after memcli's last check and before its swap is put back and built on; a symlinked
memory.md stays a symlink; a lock another process holds is waited for out loud, then
given up on with nothing changed (it made commands wait forever in silence). The umask
case needs a child process: tests/process/test_files.py. A save between memcli's read
and its last check: tests/process/test_proofs_guard.py."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import pytest

from memcli.core.errors import ConflictError
from memcli.services.memory import Memory
from memcli.store import atomic, files


@pytest.mark.parametrize("exchange", [True, False])
@pytest.mark.parametrize("style", ["rename", "inplace"])
def test_a_save_between_the_last_check_and_the_swap_is_put_back(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, style: str, exchange: bool
) -> None:
    """The editor saves in the instant after memcli checked the file one last time and
    before it swapped its version in. The swap hands back the file it replaced (Linux:
    renameat2's exchange; elsewhere: renamed aside first), which holds the editor's save:
    memcli puts it back where it was and applies its change on top of it."""
    if not exchange:
        monkeypatch.setenv("MEMCLI_NO_EXCHANGE", "1")
    fresh = functools.cache(atomic._renameat2.__wrapped__)  # looked up again, under this env
    monkeypatch.setattr(atomic, "_renameat2", fresh)
    if exchange and fresh() is None:
        pytest.skip("no renameat2 on this platform")
    memory = workspace / "memory.md"
    real_swap_in = files._swap_in
    saves: list[str] = []

    def swap_in(tmp: str, path: Path) -> str | None:
        if not saves:  # the person's save lands now, once
            theirs = memory.read_text().replace("## Facts\n", "## Facts\n- Typed by hand\n", 1)
            if style == "rename":
                swap = memory.with_name(".memory.md.swp")
                swap.write_text(theirs)
                os.replace(swap, memory)
            else:
                with open(memory, "r+") as handle:
                    handle.truncate(0)
                    handle.write(theirs)
            saves.append(theirs)
        return real_swap_in(tmp, path)

    monkeypatch.setattr(files, "_swap_in", swap_in)
    mem = Memory(workspace, notify=lambda m: None)
    added = mem.add("Written by memcli in the same instant").entry
    text = memory.read_text()
    assert saves and text.count("- Typed by hand\n") == 1 and text.count(added.text) == 1
    assert set(saves[0].splitlines()) <= set(text.splitlines())  # all of their save
    assert sorted(p.name for p in workspace.iterdir() if p.name.startswith(".memory")) == []
    assert mem.removed() == []  # nothing of either side to bring back


def test_a_symlinked_memory_file_stays_a_symlink(workspace: Path, tmp_path: Path) -> None:
    """memory.md kept in a dotfiles repository and linked into the workspace: refused
    until the person trusts the workspace (memcli.store.links), then writes go to the
    file it points at (it was replaced by a regular file)."""
    from memcli.store.links import LinkRefused
    from memcli.store.trust import trust

    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "memory.md"
    memory = workspace / "memory.md"
    target.write_bytes(memory.read_bytes())
    before = target.read_bytes()
    memory.unlink()
    memory.symlink_to(target)
    with pytest.raises(LinkRefused, match="not trusted"):
        Memory(workspace, notify=lambda m: None).add("Deploys go out on Mondays")
    assert target.read_bytes() == before
    trust(workspace)
    mem = Memory(workspace, notify=lambda m: None)
    entry = mem.add("Deploys go out on Tuesdays").entry
    mem.edit(entry.id, text="Deploys go out on Wednesdays")
    victim = next(e for e in mem.entries() if e.file == "memory.md" and e.id != entry.id)
    mem.forget(victim.id, by="person")
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
    assert waited >= 1.5  # the whole MEMCLI_LOCK_TIMEOUT (a lower bound: no slow machine fails it)
    assert "still held by another process" in caught.value.message
    assert "nothing was changed" in caught.value.message and str(lock) in caught.value.message
    assert "waiting for another memcli process to finish" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in workspace.glob("*.md")} == before
    assert mem.add("Written once the lock is free").entry.id  # nothing left stuck
