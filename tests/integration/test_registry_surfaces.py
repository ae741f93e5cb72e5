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
