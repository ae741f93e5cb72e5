"""`doctor` after `review reject` of an agent's rewrite, then `edit` of the person's entry
(issue 37, item 5): the rewrite waited beside the person's entry as a proposal of its
own, the reject archived it, and editing the person's entry loses nothing: no "lost by
an interrupted move", no `restore` that would bring the outdated text back as a
duplicate. The real CLI (the agent's rewrite through the library, as an MCP host makes
it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from tests.support.cli import invoke

OLD = "Alice owns the payments integration with Stripe"
AGENTS = "Bob owns the payments integration with Stripe"
NEW = "Carol owns the payments integration with Stripe"


@pytest.mark.slow
def test_reject_then_edit_leaves_nothing_lost(
    workspace: Path, exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    runner = CliRunner()
    added = invoke(runner, workspace, "add", OLD, "--json")
    entry_id = json.loads(added.stdout)["data"]["entry"]["id"]
    Memory(workspace, notify=lambda m: None).edit(entry_id, text=AGENTS)  # an agent's
    waiting = json.loads(invoke(runner, workspace, "review", "--json").stdout)["data"]
    [proposal] = [p["id"] for p in waiting["waiting"] if p["kind"] == "rewrite"]
    assert invoke(runner, workspace, "review", "reject", proposal).exit_code == 0
    assert OLD in (workspace / "memory.md").read_text()  # the person's text back
    edited = invoke(runner, workspace, "edit", entry_id, "--text", NEW)
    assert edited.exit_code == 0, edited.output
    doctor = invoke(runner, workspace, "doctor")
    assert doctor.exit_code == 0, doctor.output
    assert "lost" not in doctor.output and "restore" not in doctor.output
    removed = json.loads(invoke(runner, workspace, "history", "--removed", "--json").stdout)
    assert [item["text"] for item in removed["data"]["removed"]] == []
    # memory.md holds the person's last words only
    text = (workspace / "memory.md").read_text()
    assert NEW in text and OLD not in text and AGENTS not in text
