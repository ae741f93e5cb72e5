"""What an agent may forget, over a real MCP stdio client (`memcli mcp`): what a program
wrote is archived at once; an entry the person wrote waits for them in `memcli review`
(confirm archives it, reject keeps it), and meanwhile it keeps its standing — a pinned
correction still leads the inject block. An agent's repeat of the person's text through
`add_memory` leaves the entry the person's (DESIGN §4, §5)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from memcli.core.models import format_time, utc_now
from memcli.services.memory import Memory
from tests.integration.test_mcp import _session_run, payload
from tests.support.cli import as_json, invoke

HAND = (
    "\n## Preferences\n"
    "- Prefers tea over coffee <!-- id=mtea imp=0.95 conf=1 created={now} -->\n"
    "\n## Corrections\n"
    "- Always answer in German <!-- id=mger pin=true -->\n"
    "- Lives in the CET timezone <!-- id=mcet -->\n"
)


@pytest.mark.slow  # a server process that loads the model
def test_an_agent_forgets_its_own_at_once_and_the_persons_after_review(
    empty_workspace: Path,
) -> None:
    root = empty_workspace
    memory = root / "memory.md"
    now = format_time(utc_now())  # a fresh, important preference: first unless pinned first
    memory.write_text(memory.read_text().replace("\n## Preferences\n", "") + HAND.format(now=now))

    async def steps(session):  # noqa: ANN001, ANN202
        again = payload(
            await session.call_tool(
                "add_memory", {"content": "always answer in German.", "importance": 1.0}
            )
        )
        assert (again["action"], again["memory_key"]) == ("updated", "mger")
        assert "waits_for_review" in again
        asked = {}
        for key in ("mger", "mcet"):
            asked[key] = payload(await session.call_tool("forget_memory", {"memory_key": key}))
        own = payload(
            await session.call_tool("add_memory", {"content": "The build server is ci-7"})
        )
        gone = payload(
            await session.call_tool("forget_memory", {"memory_key": own["memory_key"]})
        )
        block = payload(await session.call_tool("inject_memory", {"max_tokens": 200}))
        return asked, own["memory_key"], gone, block

    asked, own, gone, block = anyio.run(_session_run, root, steps)
    assert gone["forgotten"] == own  # a program's entry: archived at once
    for key in ("mger", "mcet"):
        assert "forgotten" not in asked[key] and asked[key]["memory_key"] == key
        assert "memcli review" in asked[key]["waits_for_review"]
    assert block["memory_keys"][0] == "mger"  # still the person's pinned correction
    entry = Memory(root).get("mger").entry
    assert entry.provenance == "hand" and entry.pinned and entry.type == "correction"
    assert entry.text == "Always answer in German"  # add_memory's repeat: the person's words
    archive = (root / "archive.md").read_text()
    assert "The build server is ci-7" in archive and "forgotten by an agent" in archive
    assert "German" not in archive and "CET" not in archive

    runner = CliRunner()
    waiting = {w["id"]: w["asked"] for w in as_json(invoke(runner, root, "review", "--json"))["waiting"]}
    assert waiting == {"mger": "importance 1, forgetting", "mcet": "forgetting"}
    (kept,) = as_json(invoke(runner, root, "review", "reject", "mger", "--json"))["rejected"]
    assert kept["archived"] is False
    entry = Memory(root).get("mger").entry
    assert entry.pinned and entry.importance == 0.5 and "review" not in entry.meta
    assert entry.file == "memory.md" and entry.provenance == "hand"
    (done,) = as_json(invoke(runner, root, "review", "confirm", "mcet", "--json"))["confirmed"]
    assert done["archived"] is True and "CET" not in memory.read_text()
    archive = (root / "archive.md").read_text()
    assert "Lives in the CET timezone" in archive and "confirmed in review" in archive
    assert as_json(invoke(runner, root, "review", "--json")) == {"waiting": []}
    restored = as_json(invoke(runner, root, "restore", "mcet", "--json"))
    assert "CET" in memory.read_text(), restored
