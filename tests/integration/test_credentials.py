"""Credential-shaped text (issue 14 §6) through the CLI: add and log refuse it unless
allowed, inject withholds it, extract never adds it. The detector's table:
tests/unit/test_credentials.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.cli import envelope
from tests.support.cli import invoke as run
from tests.support.fakes import use_fake_memory


@pytest.fixture(autouse=True)
def _fake_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_memory(monkeypatch)


KEY = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def test_add_refuses_a_credential_unless_allowed(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    before = (ws / "memory.md").read_bytes()
    for args in (["add", f"CI token is {KEY}"], ["log", f"used {KEY}"]):
        result = run(runner, ws, *args)
        assert result.exit_code == 1 and "GitHub token" in result.stderr
        assert "--allow-secret" in result.stderr and KEY not in result.stderr
    assert (ws / "memory.md").read_bytes() == before and not (ws / "episodes").exists()
    added = run(runner, ws, "add", f"CI token is {KEY}", "--allow-secret", "--json")
    assert envelope(added.stdout)["entry"]["meta"]["secret"] == "ok"
    assert KEY in run(runner, ws, "inject").stdout  # allowed: it may be injected


def test_inject_withholds_unmarked_credentials(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    with (ws / "memory.md").open("a") as handle:
        handle.write(f"- Deploy token {KEY} for CI\n- The token budget is 2000\n")
    for args in (["inject"], ["inject", "-q", "deploy token CI"], ["inject", "-f", "json"]):
        out = run(runner, ws, *args).stdout
        assert KEY not in out and "token budget" in out, args
    entry_id = envelope(run(runner, ws, "list", "--json").stdout)["entries"][0]["id"]
    refused = run(runner, ws, "edit", entry_id, "--text", f"Deploy token {KEY}!")
    assert refused.exit_code == 1 and "GitHub token" in refused.stderr
    assert run(runner, ws, "edit", entry_id, "--allow-secret").exit_code == 0
    assert KEY in run(runner, ws, "inject").stdout


def test_extract_never_adds_a_credential(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    said = [
        {"role": "user", "content": f"Remember that my GitHub token is {KEY}."},
        {"role": "user", "content": "Remember that the deploy day is Friday."},
    ]
    path = ws.parent / "chat.json"
    path.write_text(json.dumps(said))
    result = run(runner, ws, "extract", "--messages", str(path), "--json")
    decisions = envelope(result.stdout)["decisions"]
    assert [d["action"] for d in decisions] == ["SKIP", "ADD"]
    assert "GitHub token" in decisions[0]["reason"] and KEY not in result.stdout
    assert KEY not in (ws / "memory.md").read_text()
    plain = run(runner, ws, "extract", "--messages", str(path), "--dry-run").stdout
    assert "SKIP" in plain and "[redacted GitHub token]" in plain and KEY not in plain
