"""A type that `[files]` declares, through the agent surfaces: the MCP server's enums and
resources, its add tool, and the Python API (issue 27 item 2). No model: adding and
listing do not embed."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from memcli.services.memory import Memory
from memcli.store.workspace import init_workspace

DECLARED = '[files."projects.md"]\ntypes = ["project", "host"]\nheadings = { host = "Hosts" }\n'


@pytest.fixture
def declared(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    init_workspace(ws)
    (ws / "memcli.toml").write_text(DECLARED, encoding="utf-8")
    return ws


def test_the_python_api_writes_and_reads_a_declared_type(declared: Path) -> None:
    mem = Memory(declared)
    added = mem.add("bx1 is the build box", type="host")
    assert (added.entry.file, added.entry.type) == ("projects.md", "host")
    assert "## Hosts\n- bx1 is the build box" in (declared / "projects.md").read_text()
    assert [e.text for e in mem.list(types=["host"])] == ["bx1 is the build box"]
    assert mem.get(added.entry.id).entry.file == "projects.md"


def test_the_mcp_server_offers_the_declared_types_and_files(declared: Path) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from memcli.surfaces.mcp_server import build_server

    server = build_server(declared)
    tools = {t.name: t for t in server._tool_manager.list_tools()}  # noqa: SLF001
    add_enum = tools["add_memory"].parameters["properties"]["memory_type"]["enum"]
    search = tools["search_memories"].parameters["properties"]["memory_types"]
    assert {"project", "host", "preference"} <= set(add_enum)
    assert {"project", "host", "episode"} <= set(search["anyOf"][0]["items"]["enum"])
    plain = build_server(declared.parent / "other")  # a workspace without [files]
    plain_tools = {t.name: t for t in plain._tool_manager.list_tools()}  # noqa: SLF001
    assert "host" not in plain_tools["add_memory"].parameters["properties"]["memory_type"]["enum"]

    async def steps() -> None:
        uris = [str(r.uri) for r in await server.list_resources()]
        assert uris == ["memory://memory.md", "memory://learnings.md", "memory://projects.md"]
        await server.call_tool("add_memory", {"content": "db3 is the database host",
                                              "memory_type": "host"})
        (content,) = await server.read_resource("memory://projects.md")
        assert "- db3 is the database host" in content.content
        with pytest.raises(ToolError):
            await server.call_tool("add_memory", {"content": "x", "memory_type": "rumour"})

    anyio.run(steps)


def test_each_layer_reads_its_own_registry(tmp_path: Path) -> None:
    """The project declares projects.md, the person's own workspace habits.md: a layered
    listing reads both files, each in its layer, and a write to the user layer goes to
    the user's file for that type."""
    import os

    from memcli.services.layers import Layers, target

    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    init_workspace(user)
    (user / "memcli.toml").write_text('[files."habits.md"]\ntypes = ["habit"]\n')
    project = tmp_path / "project"
    init_workspace(project)
    (project / "memcli.toml").write_text(DECLARED, encoding="utf-8")
    (project / "projects.md").write_text("## Hosts\n- bx1 is the build box\n")
    (user / "habits.md").write_text("- Runs the tests before every commit\n")

    mem = Memory(project, notify=lambda m: None)
    found = {(e.layer, e.entry.file, e.entry.type, e.entry.text) for e in Layers(mem).list()}
    assert ("project", "projects.md", "host", "bx1 is the build box") in found
    assert ("user", "habits.md", "habit", "Runs the tests before every commit") in found

    mine = target(mem, "user", "habit")
    assert mine.add("Reviews diffs before pushing", type="habit").entry.file == "habits.md"
    assert "Reviews diffs before pushing" in (user / "habits.md").read_text()
    assert not (project / "habits.md").exists()


def test_open_offers_the_declared_files(declared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from typer.testing import CliRunner

    from tests.support.cli import envelope, invoke

    monkeypatch.setenv("VISUAL", f"{sys.executable} -c pass")  # an editor that saves nothing
    (declared / "projects.md").write_text("## Hosts\n")
    runner = CliRunner()
    opened = invoke(runner, declared, "open", "projects.md", "--json")
    assert envelope(opened.output)["file"] == str(declared / "projects.md")
    assert envelope(invoke(runner, declared, "open", "--json").output)["file"].endswith("memory.md")
    refused = invoke(runner, declared, "open", "notes.md")
    assert refused.exit_code == 2
    assert "memory.md, learnings.md, projects.md, archive.md" in refused.output


def test_restore_of_a_hand_deleted_entry_keeps_its_declared_type(declared: Path) -> None:
    """An entry deleted by hand from projects.md (before its first heading: the file's
    default type) comes back from the history as that type, not as a fact."""
    projects = declared / "projects.md"
    projects.write_text("# Projects\n- Zeus is the billing service\n", encoding="utf-8")
    mem = Memory(declared, notify=lambda m: None)
    added = mem.add("Apollo ships in March", type="project")  # memcli keeps both versions
    (zeus,) = [e for e in mem.entries() if e.text == "Zeus is the billing service"]
    assert zeus.type == "project"
    projects.write_text(projects.read_text().replace("- Zeus is the billing service\n", ""))
    back = Memory(declared, notify=lambda m: None).restore(zeus.id)
    assert (back.file, back.type) == ("projects.md", "project")
    text = projects.read_text()
    assert "## Facts" not in text and "- Zeus is the billing service" in text
    assert added.entry.id in text


def test_an_add_to_a_read_file_goes_under_the_declared_heading(declared: Path) -> None:
    """An add reuses the parse its read made (Store._document): that parse knows the
    declared heading `## Hosts` is type host, so no second `## Host` section appears."""
    projects = declared / "projects.md"
    projects.write_text("# Projects\n- Apollo ships in March\n\n## Hosts\n", encoding="utf-8")
    mem = Memory(declared, notify=lambda m: None)
    assert [e.type for e in mem.list()] == ["project"]  # read, and memoized
    mem.add("db3 stores the orders", type="host")
    text = projects.read_text(encoding="utf-8")
    assert text.count("## Host") == 1
    assert "## Hosts\n- db3 stores the orders" in text
