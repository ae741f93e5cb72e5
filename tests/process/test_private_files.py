"""Issue 25 #12: whatever memcli creates in a workspace is no more readable than its
memory.md (archive.md with forgotten entries, the index and its entry snapshot, the
history, caches, statistics, locks, episodes), with real files and modes."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from memcli.store import modes
from memcli.store.atomic import atomic_write
from memcli.store.workspace import init_workspace
from tests.support.fakes import fake_memory
from tests.support.processes import memcli

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes")


@pytest.fixture(autouse=True)
def own_umask() -> Iterator[None]:
    """Opening a private workspace tightens the process's umask: give it back after."""
    saved = os.umask(0o022)
    roots = dict(modes._roots)
    yield
    os.umask(saved)
    modes._roots.clear()
    modes._roots.update(roots)


def too_open(root: Path, allowed_file: int, allowed_dir: int) -> list[str]:
    """Everything below root (root itself aside) with a permission bit beyond those
    allowed for its kind."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(folder, name)
            mode = path.lstat().st_mode
            allowed = allowed_dir if stat.S_ISDIR(mode) else allowed_file
            if mode & 0o077 & ~allowed:
                found.append(f"{stat.filemode(mode)} {path.relative_to(root)}")
    return found


def exercise(root: Path) -> None:
    """add, forget (archive.md), log (episodes/), index, search, in this process."""
    mem = fake_memory(root)
    mem.add("Secret plan alpha for the launch")
    gone = mem.add("Secret plan beta, to forget")
    mem.forget(gone.entry.id, by="person")
    mem.log("a private note")
    mem.index()
    assert mem.search("plan", limit=5)
    mem.flush()


@pytest.mark.parametrize(
    ("memory_mode", "allowed_file", "allowed_dir"),
    [
        (0o600, 0o000, 0o000),
        (0o640, 0o040, 0o050),  # the group reads memory.md: it may read and enter
        (0o660, 0o060, 0o070),
        (0o604, 0o004, 0o005),
    ],
)
def test_nothing_created_is_more_readable_than_memory_md(
    tmp_path: Path, memory_mode: int, allowed_file: int, allowed_dir: int
) -> None:
    root = tmp_path / "ws"
    init_workspace(root)
    os.chmod(root / "memory.md", memory_mode)
    exercise(root)
    assert (root / "archive.md").is_file() and (root / ".memcli" / "index").is_dir()
    assert too_open(root, allowed_file, allowed_dir) == []
    assert (root / "memory.md").stat().st_mode & 0o777 == memory_mode


def test_what_was_there_before_memory_md_went_private_is_made_private(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root)
    exercise(root)  # .memcli/, archive.md, episodes/ at the umask's 0644 / 0755
    assert too_open(root, 0, 0)
    os.chmod(root / "memory.md", 0o600)
    fake_memory(root).list()
    assert too_open(root, 0, 0) == []


def test_a_shared_workspace_stays_shared_beside_a_private_one(tmp_path: Path) -> None:
    """One process, two workspaces (a user layer at 0600, a project shared with its
    group at 0664): the project's files keep their group bits."""
    private, shared = tmp_path / "private", tmp_path / "shared"
    init_workspace(private)
    init_workspace(shared)
    os.chmod(private / "memory.md", 0o600)
    os.chmod(shared / "memory.md", 0o664)
    fake_memory(private).add("mine alone")
    mem = fake_memory(shared)
    mem.add("the team's fact")
    atomic_write(shared / "archive.md", "# Archive\n")
    assert (shared / "memory.md").stat().st_mode & 0o777 == 0o664
    assert (shared / "archive.md").stat().st_mode & 0o040  # the group reads it
    assert (private / "memory.md").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("mode", "bits"),
    [
        (0o600, 0o077),
        (0o644, 0o022),
        (0o664, 0o002),
        (0o666, 0o000),
        (0o640, 0o027),
        (0o620, 0o077),  # the group may write but not read: nothing for it
        (0o660, 0o007),
        (0o604, 0o072),
        (0o400, 0o077),
        (0o755, 0o022),
        (0o777, 0o000),
    ],
)
def test_lacking_bits(mode: int, bits: int) -> None:
    assert modes.lacking(mode) == bits


@pytest.mark.slow
def test_real_processes_leave_nothing_readable(tmp_path: Path) -> None:
    """The CLI as a person runs it (real model, real index): init, chmod 600, add,
    forget, log, index, search, inject, history."""
    root = tmp_path / "ws"
    assert memcli(root, "init").returncode == 0
    os.chmod(root / "memory.md", 0o600)
    for args in (
        ("add", "Secret plan alpha for the launch"),
        ("add", "Secret plan beta, to forget"),
        ("log", "a private note"),
        ("index",),
        ("search", "plan"),
        ("inject", "--query", "plan"),
        ("history",),
    ):
        result = memcli(root, *args)
        assert result.returncode == 0, (args, result.stderr)
    listed = memcli(root, "list").stdout.splitlines()
    victim = next(line for line in listed if "beta" in line).split("\t")[0]
    assert memcli(root, "forget", victim).returncode == 0
    assert "Secret plan" in (root / "archive.md").read_text(encoding="utf-8")
    assert too_open(root, 0, 0) == []
