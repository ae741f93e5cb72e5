"""Layered memory with the real model (issue 27's done-when): inside a project, the
person's own testing preferences (the per-user workspace) and the project's test facts
come back together in one block under one budget, through the CLI, the prompt hook and
MCP; writes go to the layer asked for; compress stays within its layer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.store.workspace import init_workspace
from tests.integration.test_mcp import payload
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


async def _mcp(ws: Path, steps):  # noqa: ANN001, ANN202
    """tests.integration.test_mcp's stdio session, with this checkout's code (PYTHONPATH)
    in the server's process."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    keep = ("XDG_", "HF_", "PATH", "HOME", "PYTHONPATH", "MEMCLI_WATCH_AUTOSTART")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcli", "-w", str(ws), "mcp"],
        env={k: v for k, v in os.environ.items() if k.startswith(keep)},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await steps(session)


def _served(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`memcli -w ws ARGS` in its own process (a watcher, when one runs, answers it)."""
    env = {k: v for k, v in os.environ.items() if k != "MEMCLI_NO_DAEMON"}
    cli = [sys.executable, "-m", "memcli", "-w", str(ws), *args]
    return subprocess.run(cli, capture_output=True, text=True, timeout=120, env=env)


def _requests(ws: Path) -> int:
    """How many requests the workspace's watcher has answered."""
    return json.loads(_served(ws, "watch", "--status", "--json").stdout)["data"]["requests"]


@pytest.mark.slow
def test_done_when_one_block_through_the_cli_the_prompt_hook_and_mcp(
    layered: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    exported,  # noqa: ANN001
) -> None:
    """Issue 27's done-when, end to end over the three surfaces: `inject -q "how should I
    write tests?"` in a project returns the person's testing preferences (their own
    layer) with the project's test facts, in one block under one budget; the same from
    the prompt hook (in its own process, and served by the project's watcher) and from
    MCP's inject_memory, which names each entry's layer as search_memories does."""
    from tests.support.processes import start_watch, stop_watch

    project, user = layered
    runner = CliRunner()
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    done = invoke(runner, project, "inject", "-q", QUESTION, "--json")
    assert done.exit_code == 0, done.output
    packed = envelope(done.output)
    _both_kinds(packed["block"])
    assert packed["tokens"] <= packed["budget"] == 2000
    where = {e["id"]: e["layer"] for e in packed["entries"]}
    by_text = {e["text"]: e["layer"] for e in packed["entries"]}
    assert by_text[PROJECT_FACT] == "project" and by_text[PREFERENCES[1]] == "user"
    # one budget for both layers: a token less than both need leaves one out
    less = str(packed["tokens"] - 1)
    small = envelope(
        invoke(runner, project, "inject", "-q", QUESTION, "--max-tokens", less, "--json").output
    )
    assert small["tokens"] < packed["tokens"] and 0 < len(small["entries"]) < len(packed["entries"])

    found = envelope(invoke(runner, project, "search", "tests", "--json").output)["hits"]
    layers = {hit["entry"]["text"]: hit["layer"] for hit in found}
    assert layers[PROJECT_FACT] == "project" and layers[PREFERENCES[0]] == "user"
    table = invoke(runner, project, "search", "tests", "--explain")
    assert "(user)" in table.output and "layer=user" in table.output

    # the prompt hook, in its own process without a watcher
    alone = dict(os.environ, MEMCLI_NO_DAEMON="1")
    hook = run_hook("user-prompt-submit", prompt_payload(project, QUESTION), env=alone)
    assert hook.returncode == 0, hook.stderr
    _both_kinds(json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"])

    # the same, served by the project's watcher
    monkeypatch.delenv("MEMCLI_NO_DAEMON")
    proc = start_watch(project)
    try:
        before = _requests(project)
        served = envelope(_served(project, "inject", "-q", QUESTION, "--json").stdout)
        _both_kinds(served["block"])
        assert {e["id"]: e["layer"] for e in served["entries"]} == where
        hook = run_hook("user-prompt-submit", prompt_payload(project, QUESTION))
        assert hook.returncode == 0, hook.stderr
        _both_kinds(json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"])
        assert _requests(project) >= before + 2  # the watcher answered both
    finally:
        stop_watch(proc)

    # MCP: the inject tool's block naming each entry's layer, search results naming theirs
    async def steps(session):  # noqa: ANN001, ANN202
        block = payload(await session.call_tool("inject_memory", {"query": QUESTION}))
        hits = payload(await session.call_tool("search_memories", {"query": "tests"}))
        theirs = next(r["memory_key"] for r in hits["results"] if r.get("layer") == "user")
        detail = payload(await session.call_tool("get_memory_detail", {"memory_key": theirs}))
        assert detail["layer"] == "user" and detail["id"] == theirs
        added = payload(
            await session.call_tool(
                "add_memory",
                {"content": "Likes small commits", "memory_type": "preference", "layer": "user"},
            )
        )
        return block, hits, added

    block, hits, added = anyio.run(_mcp, project, steps)
    _both_kinds(block["block"])
    assert block["layers"] == where and set(block["memory_keys"]) == set(where)
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
    # the project keeps its own copy of what the user layer also holds, and no id of the
    # user layer came into the project's files (nothing moved across)
    assert ("project", "tern") in {(e["layer"], e["text"].split()[-1].strip(".")) for e in listed}
    user_ids = {e["id"] for e in listed if e["layer"] == "user"}
    ours = b"".join(p.read_bytes() for p in project.iterdir() if p.is_file())
    assert user_ids and not any(i.encode() in ours for i in user_ids)


@pytest.mark.slow
def test_reflect_stays_in_its_layer(tmp_path: Path, exported) -> None:  # noqa: ANN001
    """Reflect works on one layer's entries: three notes on a theme in the person's own
    layer and two in the project make no insight in the project (two are too few there)
    and none of the person's notes is cited or moved; in the person's layer they make one,
    written there and citing only its own notes."""
    from tests.integration.test_reflect import THEMED, ago

    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    user.mkdir(parents=True)
    (user / "memory.md").write_text(THEMED.format(t=ago(2), old=ago(72)), encoding="utf-8")
    (user / "learnings.md").write_text("# Learnings\n", encoding="utf-8")
    project = tmp_path / "project"
    init_workspace(project)
    stamp = ago(1)
    with (project / "memory.md").open("a", encoding="utf-8") as out:
        out.write(
            f"- Pins pytest to 8.x for the Python tests <!-- id=mp1 imp=0.9 created={stamp} kw=pytest,testing -->\n"
            f"- Runs the pytest suite in CI on every push <!-- id=mp2 imp=0.9 created={stamp} kw=pytest,testing -->\n"
        )
    runner = CliRunner()

    def files(root: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}

    mine = files(user)
    done = invoke(runner, project, "reflect", "--force", "--json")
    assert done.exit_code == 0, done.output
    assert envelope(done.output)["written"] == []  # the user layer's three do not count here
    assert files(user) == mine
    assert not any(i in (project / "memory.md").read_text() for i in ("mt1", "mt2", "mt3"))

    ours = files(project)
    done = invoke(runner, user, "reflect", "--force", "--json")
    assert done.exit_code == 0, done.output
    written = envelope(done.output)["written"]
    assert len(written) == 1 and files(project) == ours
    insight = next(
        e for e in Memory(user, notify=lambda m: None).entries() if e.meta.get("by") == "reflect"
    )
    assert set(insight.source.split(",")) == {"mt1", "mt2", "mt3"}


@pytest.mark.slow
def test_a_watcher_serves_the_layers_it_reads(layered: tuple[Path, Path], exported) -> None:  # noqa: ANN001
    """The project's watcher answers with every layer the workspace reads: a later write
    and a hand edit in the user layer (which no watcher of its own watches) are found;
    a `[layers]` change in memcli.toml, and a `memcli trust` that applies a withheld one,
    take effect without restarting it."""
    from memcli.services.memory import Memory
    from tests.support.processes import start_watch, stop_watch

    project, user = layered
    notes = project.parent / "notes"
    init_workspace(notes)
    Memory(notes, notify=lambda m: None).add("Integration tests need a running postgres")

    def hits(query: str) -> set[tuple[str, str | None]]:
        done = _served(project, "search", query, "--json")
        assert done.returncode == 0, done.stderr
        return {
            (h["entry"]["text"], h.get("layer")) for h in json.loads(done.stdout)["data"]["hits"]
        }

    proc = start_watch(project)
    try:
        before = _requests(project)
        assert {layer for _, layer in hits("tests")} == {"project", "user"}
        Memory(user, notify=lambda m: None).add("Runs tests with -x to stop early", by="person")
        assert ("Runs tests with -x to stop early", "user") in hits("tests")
        mine = user / "memory.md"  # a hand edit, as a person saves it in an editor
        mine.write_text(mine.read_text() + "- Keeps each test under a second <!-- id=mhand1 -->\n")
        assert ("Keeps each test under a second", "user") in hits("tests")

        config = project / "memcli.toml"
        config.write_text('[layers]\nread = ""\n')  # reading less needs no approval
        alone = hits("tests")
        assert (PROJECT_FACT, None) in alone and all(layer is None for _, layer in alone)
        config.write_text('[layers]\nread = "user, ../notes"\n')  # a path: withheld...
        assert {layer for _, layer in hits("postgres tests")} == {"project", "user"}
        assert _served(project, "trust").returncode == 0  # ...until approved
        assert ("Integration tests need a running postgres", "../notes") in hits("postgres tests")
        assert _requests(project) >= before + 6  # the watcher answered every search
    finally:
        stop_watch(proc)


@pytest.mark.slow
def test_milvus_each_layer_keeps_its_own_partition(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    exported,  # noqa: ANN001
) -> None:
    """On the Milvus backend (Milvus Lite, the engine path), with one partition key set
    for every workspace (MEMCLI_INDEX_WORKSPACE, as the team recipe sets it), the
    person's layer keeps its entries under its own key: the project's entries, many more
    of them, never crowd its candidates out, and the project's partition holds only the
    project's entries."""
    pytest.importorskip("pymilvus")
    from memcli.services.layers import Layers

    for key, value in {
        "BACKEND": "milvus",
        "URI": str(tmp_path / "milvus.db"),
        "WORKSPACE": "team",
        "COLLECTION": "layers",
    }.items():
        monkeypatch.setenv(f"MEMCLI_INDEX_{key}", value)
    monkeypatch.setenv("MEMCLI_SEARCH_CANDIDATE_POOL", "2")  # crowding, at this size
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    project = tmp_path / "project"
    for root in (user, project):
        init_workspace(root)
    Memory(user, notify=lambda m: None).add("Writes unit tests before fixing a bug", by="person")
    ours = Memory(project, notify=lambda m: None)
    for text in ("Unit tests live in tests/unit", "Unit tests must pass before a merge"):
        ours.add(text, by="person")
    ours.add("The unit tests run with make test", by="person")

    done = invoke(CliRunner(), project, "search", "unit tests", "--json")
    assert done.exit_code == 0, done.output
    found = {(h["entry"]["text"], h["layer"]) for h in envelope(done.output)["hits"]}
    assert ("Writes unit tests before fixing a bug", "user") in found
    assert {layer for _, layer in found} == {"project", "user"}

    layers = Layers(Memory(project, notify=lambda m: None)).layers
    keys = [layer.memory.index_manager.backend.workspace for layer in layers]
    assert keys[0] == "team" and keys[1] not in ("team", "")
    counts = [layer.memory.index_manager.backend.count() for layer in layers]
    assert counts == [3, 1]  # each partition holds its own layer's entries, no more


@pytest.mark.slow
def test_git_works_per_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each layer is its own repository: a write to the person's layer from inside a
    project lands in the person's repository (the project's stays clean), and that
    repository's merge driver merges it with another machine's write, entry by entry."""
    from tests.process.test_gitmerge import assert_clean, git, sync, two_clones

    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    user.mkdir(parents=True)
    desk, laptop = two_clones(user, tmp_path)
    for clone in (desk, laptop):  # re-indexing after a merge is not what this tests
        (clone / ".git" / "hooks" / "post-merge").unlink()
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    init_workspace(project)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "project")

    runner = CliRunner()
    told = invoke(runner, project, "add", "--to", "user", "Prefers tabs over spaces")
    assert told.exit_code == 0, told.output
    assert invoke(runner, laptop, "add", "Prefers a dark terminal theme").exit_code == 0
    assert git(project, "status", "--porcelain") == ""  # nothing written in the project
    assert "memory.md" in git(desk, "status", "--porcelain")
    sync(desk, laptop)
    for clone in (desk, laptop):
        texts = sorted(e.text for e in assert_clean(clone).values())
        assert texts == ["Prefers a dark terminal theme", "Prefers tabs over spaces"]
    listed = envelope(invoke(runner, project, "list", "--json").output)["entries"]
    assert {(e["text"], e["layer"]) for e in listed} >= {("Prefers a dark terminal theme", "user")}


@pytest.mark.slow  # the real model (exported)
@pytest.mark.parametrize("query", ["How should I write Python tests?", "docker"])
def test_a_user_layer_leaves_a_workspaces_order_as_it_is(
    workspace: Path, query: str, exported  # noqa: ANN001
) -> None:
    """The hits of one workspace come out in its search's ranking whether or not a
    per-user workspace is read beside it (an empty one changed the order: the merge
    sorted every hit by score, and the ranking is not the score)."""
    alone = [h.entry.id for h in Memory(workspace, notify=lambda m: None).search(query, touch=False)]
    assert len(alone) >= 3
    init_workspace(Path(os.environ["XDG_DATA_HOME"]) / "memcli")  # the per-user layer, empty
    found = envelope(invoke(CliRunner(), workspace, "search", query, "--json", "--no-touch").stdout)
    assert [h["id"] for h in found["hits"]] == alone
