"""Which files of a workspace hold entries (memcli.store.store.Store.entry_files), with
one stat per name: a watcher asks on every search whether the files changed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memcli.core.errors import MemcliError
from memcli.store.store import Store


def _file(ws: Path, name: str) -> None:
    (ws / name).parent.mkdir(parents=True, exist_ok=True)
    (ws / name).write_text("# Memory\n")


def _dir(ws: Path, name: str) -> None:
    (ws / name).mkdir(parents=True)


def _dangling(ws: Path, name: str) -> None:
    (ws / name).symlink_to(ws / "nowhere.md")


def _link_to_file(ws: Path, name: str) -> None:
    _file(ws, "elsewhere.txt")
    (ws / name).symlink_to(ws / "elsewhere.txt")


def _loop(ws: Path, name: str) -> None:
    (ws / name).symlink_to(ws / name)


# (what is at `name`, the name, found?, an error naming it?)
CASES: list[tuple[Callable[[Path, str], None], str, bool, bool]] = [
    (_file, "learnings.md", True, False),
    (_dir, "learnings.md", False, True),  # a directory where a curated file belongs
    (_dangling, "learnings.md", False, False),
    (_link_to_file, "learnings.md", True, False),
    (_loop, "learnings.md", False, False),  # a symlink loop: not there
    (_file, "episodes/2026-01-02.md", True, False),
    (_file, "episodes/notes.txt", False, False),  # not Markdown
    (_file, "archive.md", True, False),  # include_archived
]


@pytest.mark.parametrize(("make", "name", "found", "error"), CASES)
def test_entry_files(
    tmp_path: Path, make: Callable[[Path, str], None], name: str, found: bool, error: bool
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _file(ws, "memory.md")
    make(ws, name)
    store = Store(ws)
    if error:
        with pytest.raises(MemcliError, match="not a regular file"):
            store.entry_files(include_archived=True)
        return
    names = store.entry_files(include_archived=True)
    assert names[0] == "memory.md"
    assert (name in names) is found
    assert all((ws / n).is_file() for n in names)


def test_episodes_as_a_file_holds_no_entries(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _file(ws, "memory.md")
    _file(ws, "episodes")
    assert Store(ws).entry_files(include_archived=True) == ["memory.md"]


def test_one_stat_per_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("memory.md", "learnings.md", "archive.md"):
        _file(ws, name)
    store = Store(ws)
    store.entry_files(include_archived=True)  # the registry read once
    calls: list[str] = []
    real = os.stat

    def counted(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        calls.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    assert store.entry_files(include_archived=True) == ["memory.md", "learnings.md", "archive.md"]
    assert sorted(c for c in calls if c.endswith(".md")) == sorted(
        str(ws / n) for n in ("memory.md", "learnings.md", "archive.md")
    )
