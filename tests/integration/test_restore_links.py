"""`restore` into an episodes/ folder that is a link or not a folder (issue 35, a links
leftover): an episode's entry brought back from archive.md (`forget` then `restore`) or
from the history (its file edited by hand, then `restore`) when episodes/ has become a
link to a folder outside the workspace that does not exist, or a file. A clear error
naming episodes/ (a raw FileExistsError before), nothing changed on disk; a link
inside the workspace whose folder is missing is followed, as `log` follows it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memcli.core.errors import MemcliError
from memcli.services.memory import Memory
from tests.support.fakes import HashingEmbedder


def _memory(ws: Path) -> Memory:
    return Memory(ws, embedder_factory=HashingEmbedder, notify=lambda message: None)


def archived(ws: Path) -> str:
    """An episode's entry, forgotten: restore takes it from archive.md."""
    entry = _memory(ws).log("Deployed the billing API today")
    _memory(ws).forget(entry.id, by="person")
    return entry.id


def deleted(ws: Path) -> str:
    """An episode's entry, deleted by hand: restore takes it from the history."""
    mem = _memory(ws)
    entry = mem.log("Deployed the billing API today")
    mem.log("Rotated the staging certificates")
    episode = ws / entry.file
    episode.write_text("".join(
        line for line in episode.read_text().splitlines(keepends=True) if entry.id not in line
    ))
    assert entry.id in [r["id"] for r in _memory(ws).removed()]  # the history has it
    return entry.id


def dangling_outside(ws: Path) -> str:
    (ws / "episodes").symlink_to(ws.parent / "nowhere")
    return "does not exist"


def a_file(ws: Path) -> str:
    (ws / "episodes").write_text("not a folder\n")
    return "not a folder"


def _files(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.rglob("*.md"))}


@pytest.mark.parametrize("plant", [dangling_outside, a_file])
@pytest.mark.parametrize("gone", [archived, deleted])
def test_restore_into_an_episodes_link_it_cannot_follow_names_it(
    empty_workspace: Path, gone: Callable[[Path], str], plant: Callable[[Path], str]
) -> None:
    ws = empty_workspace
    entry_id = gone(ws)
    shutil.rmtree(ws / "episodes")
    said = plant(ws)
    before = _files(ws)
    with pytest.raises(MemcliError) as refused:
        _memory(ws).restore(entry_id)
    message = str(refused.value)
    assert str(ws / "episodes") in message and said in message, message
    assert _files(ws) == before  # nothing written
    assert not (ws.parent / "nowhere").exists()


@pytest.mark.parametrize("gone", [archived, deleted])
def test_restore_follows_an_episodes_link_inside_the_workspace(
    empty_workspace: Path, gone: Callable[[Path], str]
) -> None:
    ws = empty_workspace
    entry_id = gone(ws)
    shutil.rmtree(ws / "episodes")
    (ws / "episodes").symlink_to("kept-episodes")
    back = _memory(ws).restore(entry_id)
    assert (ws / "episodes").is_symlink()
    assert entry_id in (ws / "kept-episodes" / Path(back.file).name).read_text()


def _log(ws: Path) -> None:
    _memory(ws).log("Deployed the billing API today")


def _import_conversation(ws: Path) -> None:
    _memory(ws).import_conversation('[{"role": "user", "content": "I like tea"}]', "chat.json")


@pytest.mark.parametrize(("write", "folder"), [(_log, "episodes"), (_import_conversation, "conversations")])
def test_a_write_into_a_folder_that_is_a_file_names_it(
    empty_workspace: Path, write: Callable[[Path], None], folder: str
) -> None:
    """`log` and `import --conversation` where their folder is a plain file: a clear error
    naming it (a raw FileExistsError before), nothing changed."""
    ws = empty_workspace
    shutil.rmtree(ws / folder, ignore_errors=True)
    (ws / folder).write_text("not a folder\n")
    before = _files(ws) | {folder: (ws / folder).read_bytes()}
    with pytest.raises(MemcliError) as refused:
        write(ws)
    assert str(ws / folder) in str(refused.value) and "not a folder" in str(refused.value)
    assert _files(ws) | {folder: (ws / folder).read_bytes()} == before
