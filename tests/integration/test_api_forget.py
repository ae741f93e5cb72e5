"""Who forgets decides what forgetting does (docs/agents.md, Python API): `Memory.forget`
is an agent's, as `Memory.add` is (`by="agent"`, the default): what a program wrote goes
to archive.md at once, an entry the person stands behind waits for them in `memcli
review` and stays as it is. `by="person"` and `memcli forget` archive at once. The MCP
tool's side: tests/integration/test_agent_forget.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.core.errors import ValidationError
from memcli.services.memory import Memory
from tests.support.cli import as_json, invoke

LINES = {
    "hand": "- Lives in Munich <!-- id=mone -->",
    "person": "- Lives in Munich <!-- id=mone by=person -->",
    "pinned": "- Lives in Munich <!-- id=mone by=agent pin=true -->",
    "agent": "- Lives in Munich <!-- id=mone by=agent -->",
    "extract": "- Lives in Munich <!-- id=mone by=extract src=chat-1 -->",
}


def workspace_with(root: Path, kind: str) -> str:
    memory = root / "memory.md"
    memory.write_text(memory.read_text().replace("## Facts\n", f"## Facts\n{LINES[kind]}\n"))
    return LINES[kind]


def reasons(root: Path) -> list[str]:
    return [e.meta["reason"] for e in Memory(root).store.load("archive.md").entries()]


# whose entry, who asks -> archived at once (else: waits in review), archive.md's reason
CASES = [
    ("hand", {}, False, None),  # the API's default: an agent's forget
    ("person", {}, False, None),
    ("pinned", {}, False, None),  # a program's entry the person pinned
    ("agent", {}, True, "forgotten by an agent"),
    ("extract", {"reason": "moved"}, True, "forgotten by an agent: moved"),
    ("hand", {"by": "agent"}, False, None),
    ("hand", {"by": "person"}, True, "forgotten"),
    ("pinned", {"by": "person", "reason": "moved"}, True, "moved"),
    ("agent", {"by": "person"}, True, "forgotten"),
]


@pytest.mark.parametrize(("kind", "how", "at_once", "reason"), CASES)
def test_the_apis_forget_is_an_agents_unless_it_says_person(
    empty_workspace: Path, kind: str, how: dict, at_once: bool, reason: str | None
) -> None:
    root = empty_workspace
    line = workspace_with(root, kind)
    done = Memory(root).forget("mone", **how)
    assert (done.entry.id, done.entry.text, done.archived) == ("mone", "Lives in Munich", at_once)
    memory = (root / "memory.md").read_text()
    waiting = as_json(invoke(CliRunner(), root, "review", "--json"))["waiting"]
    if at_once:
        assert "Munich" not in memory and reasons(root) == [reason]
        assert waiting == []
    else:  # as it was, with the request beside what it held
        assert line.replace(" -->", " review=forget -->") in memory
        assert reasons(root) == []
        assert [(w["id"], w["asked"]) for w in waiting] == [("mone", "forgetting")]


@pytest.mark.parametrize("kind", ["hand", "person", "pinned", "agent"])
def test_memcli_forget_is_the_persons_and_archives_at_once(
    empty_workspace: Path, kind: str
) -> None:
    root = empty_workspace
    workspace_with(root, kind)
    done = as_json(invoke(CliRunner(), root, "forget", "mone", "--json"))
    assert (done["entry"]["id"], done["reason"]) == ("mone", "forgotten")
    assert "Munich" not in (root / "memory.md").read_text()
    assert reasons(root) == ["forgotten"]


@pytest.mark.parametrize("by", ["agent", "person"])
def test_an_empty_reason_is_refused_and_nothing_changes(empty_workspace: Path, by: str) -> None:
    root = empty_workspace
    workspace_with(root, "agent")
    before = (root / "memory.md").read_text()
    with pytest.raises(ValidationError, match="reason is empty"):
        Memory(root).forget("mone", reason="  ", by=by)
    assert (root / "memory.md").read_text() == before and reasons(root) == []
