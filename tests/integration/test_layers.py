"""Layered memory with the real model (issue 27's done-when): inside a project, the
person's own testing preferences (the per-user workspace) and the project's test facts
come back together in one block under one budget, through the CLI, the prompt hook and
MCP; writes go to the layer asked for; compress stays within its layer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from memcli.store.workspace import init_workspace
from tests.integration.test_mcp import _session_run, payload
from tests.process.test_hooks import prompt_payload, run_hook
from tests.support.cli import envelope, invoke

PREFERENCES = ("Prefers pytest over unittest", "Writes tests before fixing a bug")
PROJECT_FACT = "This project's tests run with `make test` in CI"
QUESTION = "how should I write tests?"


@pytest.fixture
def layered(tmp_path: Path) -> tuple[Path, Path]:
    """(the project workspace, the per-user workspace), both indexed."""
    from memcli.services.memory import Memory

    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    project = tmp_path / "project"
    for root in (user, project):
        init_workspace(root)
    mine = Memory(user, notify=lambda m: None)
    for text in PREFERENCES:
        mine.add(text, type="preference", by="person")
    ours = Memory(project, notify=lambda m: None)
    ours.add(PROJECT_FACT, by="person")
    ours.add("The staging host is called tern", by="person")
    mine.index()
    ours.index()
    return project, user


def _both_kinds(block: str) -> None:
    assert block.startswith("<memory>"), block
    assert PROJECT_FACT.replace("`", "") in block.replace("`", "").replace("\\", ""), block
    assert any(text in block for text in PREFERENCES), block
    assert block.count("<memory>") == 1  # one block


@pytest.mark.slow
def test_inject_reads_the_person_and_the_project_in_one_block(
    layered: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, user = layered
    runner = CliRunner()
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    done = invoke(runner, project, "inject", "-q", QUESTION, "--json")
    assert done.exit_code == 0, done.output
    packed = envelope(done.output)
    _both_kinds(packed["block"])
    assert packed["tokens"] <= packed["budget"] == 2000
    # one budget for both layers: a token less than both need leaves one out
    less = str(packed["tokens"] - 1)
    small = envelope(invoke(runner, project, "inject", "-q", QUESTION, "--max-tokens", less, "--json").output)
    assert small["tokens"] < packed["tokens"] and 0 < len(small["entries"]) < len(packed["entries"])

    found = envelope(invoke(runner, project, "search", "tests", "--json").output)["hits"]
    layers = {hit["entry"]["text"]: hit["layer"] for hit in found}
    assert layers[PROJECT_FACT] == "project" and layers[PREFERENCES[0]] == "user"
    table = invoke(runner, project, "search", "tests", "--explain")
    assert "(user)" in table.output and "layer=user" in table.output

    # the prompt hook, in its own process
    hook = run_hook("user-prompt-submit", prompt_payload(project, QUESTION))
    assert hook.returncode == 0, hook.stderr
    _both_kinds(json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"])

    # MCP: the inject tool's block, and search results naming their layer
    async def steps(session):  # noqa: ANN001, ANN202
        block = payload(await session.call_tool("inject_memory", {"query": QUESTION}))
        hits = payload(await session.call_tool("search_memories", {"query": "tests"}))
        added = payload(
            await session.call_tool(
                "add_memory",
                {"content": "Likes small commits", "memory_type": "preference", "layer": "user"},
            )
        )
        return block, hits, added

    block, hits, added = anyio.run(_session_run, project, steps)
    _both_kinds(block["block"])
    assert {r["layer"] for r in hits["results"]} == {"project", "user"}
    assert added["action"] == "added"
    assert "Likes small commits" in (user / added["memory"]["file"]).read_text()
    assert "Likes small commits" not in (project / added["memory"]["file"]).read_text()


@pytest.mark.slow
def test_writes_go_where_asked_and_compress_stays_in_its_layer(
    layered: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, user = layered
    runner = CliRunner()
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    told = invoke(runner, project, "add", "--to", "user", "Uses a dark theme")
    assert told.exit_code == 0 and f"of {user.resolve()}" in told.output, told.output
    assert invoke(runner, project, "add", "Deploys on Fridays never").exit_code == 0
    mine = {p.name: p.read_bytes() for p in user.iterdir() if p.is_file()}
    assert any(b"Uses a dark theme" in data for data in mine.values())
    assert not any(b"Uses a dark theme" in p.read_bytes() for p in project.iterdir() if p.is_file())
    # a near-duplicate pair in each layer; compress in the project merges only its own
    for root in (project, user):
        invoke(runner, root, "add", "The staging host is called tern.")
        invoke(runner, root, "add", "Our staging host is called tern")
    mine = {p.name: p.read_bytes() for p in user.iterdir() if p.is_file()}
    ours = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}
    done = invoke(runner, project, "compress", "--yes")
    assert done.exit_code == 0, done.output
    assert {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()} != ours  # it merged
    assert {p.name: p.read_bytes() for p in user.iterdir() if p.is_file()} == mine
    listed = envelope(invoke(runner, project, "list", "--json").output)["entries"]
    assert {e["layer"] for e in listed} == {"project", "user"}


@pytest.mark.slow
def test_a_watcher_serves_every_layer(layered: tuple[Path, Path], exported) -> None:  # noqa: ANN001
    """The daemon fast path answers with the layers the workspace reads, and sees a
    later write to the user layer (which no watcher of its own watches)."""
    import subprocess
    import sys

    from memcli.services.memory import Memory
    from tests.support.processes import start_watch, stop_watch

    project, user = layered
    cli = [sys.executable, "-m", "memcli", "-w", str(project)]

    def served(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, *args], capture_output=True, text=True, timeout=120)

    def requests() -> int:
        return json.loads(served("watch", "--status", "--json").stdout)["data"]["requests"]

    proc = start_watch(project)
    try:
        before = requests()
        hits = json.loads(served("search", "tests", "--json").stdout)["data"]["hits"]
        assert {h["layer"] for h in hits} == {"project", "user"}
        Memory(user, notify=lambda m: None).add("Runs tests with -x to stop early", by="person")
        again = json.loads(served("search", "tests", "--json").stdout)["data"]["hits"]
        assert ("Runs tests with -x to stop early", "user") in {
            (h["entry"]["text"], h["layer"]) for h in again
        }
        assert requests() >= before + 2  # the watcher answered both
    finally:
        stop_watch(proc)
