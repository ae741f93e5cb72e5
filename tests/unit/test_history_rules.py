"""The history's table-driven rules (issue 25): which file names a log line may carry,
and when an append makes a prune due."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from memcli.store import history_prune
from memcli.store.history import History
from memcli.store.history_log import own_file

OWN = ["memory.md", "learnings.md", "archive.md", "episodes/2026-01-02.md",
       "episodes/standup notes.md", "conversations/chat-1.md"]
NOT_OWN = [
    "../outside.txt", "episodes/../../x.md", "episodes/../memory.md", "/tmp/abs.md",
    "memory.md/../../y.md", "memcli.toml", ".memcli/history/log.jsonl", "memory.md ",
    "Memory.md", "episodes/.hidden.md", "episodes/sub/2026-01-02.md", "episodes/x.txt",
    "episodes\\..\\x.md", "conversations/../x.md", "notes/2026-01-02.md", "episodes/.md",
    "episodes/a\x00.md", "episodes/a\n.md", "", None, 3, ["memory.md"],
]


@pytest.mark.parametrize("name", OWN)
def test_the_workspace_entry_files_are_own(name: str) -> None:
    assert own_file(name)


@pytest.mark.parametrize("name", NOT_OWN, ids=[repr(n) for n in NOT_OWN])
def test_anything_else_is_refused(name: object) -> None:
    assert not own_file(name)


def _state(root: Path, age: float = 0, **values: float) -> None:
    """The counter as a prune `age` seconds ago left it, then added to."""
    (root / "history").mkdir(parents=True, exist_ok=True)
    base = {"t": time.time() - age, "bytes": 0, "lines": 0}
    (root / "history" / "prune.json").write_text(json.dumps({**base, **values}))


KEEP_MB = 100  # a quarter of it is 25 MB, above PRUNE_BYTES: PRUNE_BYTES decides
CASES = [  # (state before, bytes this append stored, due?)
    ({}, 0, False),
    ({"bytes": history_prune.PRUNE_BYTES - 11}, 10, False),
    ({"bytes": history_prune.PRUNE_BYTES - 10}, 10, True),
    ({"lines": history_prune.PRUNE_LINES - 2}, 0, False),
    ({"lines": history_prune.PRUNE_LINES - 1}, 0, True),
    ({"age": history_prune.PRUNE_SECONDS - 60}, 0, False),
    ({"age": history_prune.PRUNE_SECONDS + 1}, 0, True),
]


@pytest.mark.parametrize(("state", "stored", "due"), CASES)
def test_a_prune_is_due_by_bytes_lines_or_age(
    tmp_path: Path, state: dict, stored: int, due: bool
) -> None:
    _state(tmp_path, **state)
    history = History(tmp_path, keep_mb=KEEP_MB)
    assert history_prune.note_append(history, stored) is due
    after = json.loads((tmp_path / "history" / "prune.json").read_text())
    assert (after["bytes"], after["lines"]) == ((0, 0) if due else (
        state.get("bytes", 0) + stored, state.get("lines", 0) + 1))


def test_a_small_keep_mb_makes_a_prune_due_at_a_quarter_of_it(tmp_path: Path) -> None:
    _state(tmp_path, bytes=24_999)
    assert not history_prune.note_append(History(tmp_path, keep_mb=0.1), 0)
    assert history_prune.note_append(History(tmp_path, keep_mb=0.1), 1)


def test_a_damaged_counter_is_started_again(tmp_path: Path) -> None:
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "prune.json").write_text("{not json")
    assert not history_prune.note_append(History(tmp_path), 5)
    assert json.loads((tmp_path / "history" / "prune.json").read_text())["bytes"] == 5
