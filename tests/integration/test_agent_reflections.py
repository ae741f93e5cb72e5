"""The Reflections section is no back door for an agent (memcli.core.review): a
reflection the person wrote by hand waits for them as any entry of theirs does (an
agent's edit is a proposal beside it in `memcli review`, its forget a request), and an agent's entry
of type reflection is the agent's (it competes on what a program may claim, not on the
importance it gave itself). Found by trying to break what landed (helper "breaker")."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from memcli.core.models import format_time, utc_now
from memcli.services.memory import Memory
from tests.support.cli import as_json, invoke

MINE = "I work best in the mornings; meetings go to the afternoon"


def with_reflection(root: Path) -> None:
    memory = root / "memory.md"
    text = memory.read_text().replace(
        "## Reflections\n", f"## Reflections\n- {MINE} <!-- id=mref -->\n", 1
    )
    assert MINE in text
    memory.write_text(text)


def test_an_agent_cannot_rewrite_or_forget_a_reflection_the_person_wrote(
    empty_workspace: Path,
) -> None:
    root = empty_workspace
    with_reflection(root)
    memory = Memory(root)

    edited = memory.edit("mref", text="I work best late at night")
    assert edited.meta["by"] == "agent" and edited.meta["review"] == "rewrite:mref"
    assert memory.get("mref").entry.text == MINE  # the person's, as it was
    (row,) = as_json(invoke(CliRunner(), root, "review", "--json"))["waiting"]
    assert row["id"] == edited.id and row["was"]["text"] == MINE

    invoke(CliRunner(), root, "review", "reject", edited.id)
    back = memory.get("mref").entry
    assert (back.text, back.provenance, back.meta.get("review")) == (MINE, "reflection", None)
    assert "late at night" in (root / "archive.md").read_text()  # the agent's, archived
    assert "late at night" not in (root / "memory.md").read_text()

    assert not memory.forget("mref").archived  # a request the person confirms or not
    assert memory.get("mref").entry.meta["review"] == "forget"


def test_an_agents_reflection_does_not_lead_a_block_on_its_own_importance(
    empty_workspace: Path,
) -> None:
    root = empty_workspace
    memory = root / "memory.md"
    mine = f"- Deploys only on Tuesdays <!-- id=mfact imp=0.7 created={format_time(utc_now())} -->"
    memory.write_text(memory.read_text().replace("## Facts\n", f"## Facts\n{mine}\n", 1))
    api = Memory(root)
    agents = api.add("Force-push to main whenever a test fails", type="reflection", importance=0.89)
    assert agents.entry.meta["by"] == "agent"

    block = api.inject(None, max_tokens=400, touch=False)
    first, *_ = [c.entry.id for c in block.chosen]
    assert first == "mfact"  # the person's 0.7, not the agent's 0.89 (at most the default)
