"""A real MCP client (the `mcp` package's stdio client) drives `memcli mcp`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

pytestmark = pytest.mark.slow


async def _session_run(ws: Path, steps):  # noqa: ANN001, ANN202
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcli", "-w", str(ws), "mcp"],
        env={
            k: v
            for k, v in os.environ.items()
            if k.startswith(("XDG_", "HF_", "PATH", "HOME", "MEMCLI_WATCH_AUTOSTART"))
        },
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        session.init_result = await session.initialize()
        return await steps(session)


def payload(result) -> dict:  # noqa: ANN001
    assert not result.is_error, result
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def test_tools_over_stdio(workspace: Path) -> None:
    async def steps(session):  # noqa: ANN001, ANN202
        tools = await session.list_tools()
        names = {t.name for t in tools.tools}
        assert names >= {
            "search_memories",
            "get_memory_detail",
            "add_memory",
            "inject_memory",
            "forget_memory",
        }
        search_tool = next(t for t in tools.tools if t.name == "search_memories")
        assert "before" in search_tool.description  # tells an agent when to use it

        found = payload(
            await session.call_tool(
                "search_memories", {"query": "How should I write Python tests?", "limit": 3}
            )
        )
        assert found["total_found"] == 3 and found["search_strategy_used"] == "hybrid"
        top = found["results"][0]
        assert top["memory_key"] == "m8f3a2c1" and top["memory_type"] == "preference"
        assert set(top) == {
            "memory_key",
            "summary",
            "content_preview",
            "memory_type",
            "relevance_score",
            "created_at",
            "keywords",
            "metadata",
        }

        keyword = payload(
            await session.call_tool(
                "search_memories",
                {"query": "迁移", "search_mode": "keyword", "memory_types": ["lesson"], "limit": 1},
            )
        )
        assert keyword["results"][0]["memory_key"] == "l6a0e9c3"

        detail = payload(await session.call_tool("get_memory_detail", {"memory_key": "m8f3a2c1"}))
        assert detail["text"].startswith("Prefers pytest") and detail["importance"] == 0.8

        added = payload(
            await session.call_tool(
                "add_memory",
                {
                    "content": "Prefers Vim keybindings",
                    "memory_type": "preference",
                    "importance": 0.6,
                },
            )
        )
        assert added["action"] == "added"
        assert added["memory"]["meta"]["by"] == "agent"  # a program wrote it: may fade
        again = payload(
            await session.call_tool("add_memory", {"content": "prefers vim keybindings."})
        )
        assert again["action"] == "updated" and again["memory_key"] == added["memory_key"]

        block = payload(
            await session.call_tool(
                "inject_memory", {"context": "editor keybindings", "max_tokens": 120}
            )
        )
        assert block["tokens"] <= 120 and "Vim" in block["block"]

        gone = payload(
            await session.call_tool("forget_memory", {"memory_key": added["memory_key"]})
        )
        assert gone["forgotten"] == added["memory_key"]

        errors = [
            await session.call_tool("search_memories", {"query": "x", "limit": 50}),
            await session.call_tool("search_memories", {"query": "x", "search_mode": "fuzzy"}),
            await session.call_tool("search_memories", {"query": "   "}),
            await session.call_tool("get_memory_detail", {"memory_key": "../../etc/passwd"}),
            await session.call_tool("add_memory", {"content": "x", "importance": 7}),
            await session.call_tool("forget_memory", {"memory_key": "nope"}),
            await session.call_tool("inject_memory", {"max_tokens": 1}),
        ]
        assert all(r.is_error for r in errors)
        assert "less than or equal to 20" in errors[0].content[0].text
        still_alive = payload(
            await session.call_tool("get_memory_detail", {"memory_key": "m1b2c3d4"})
        )
        return still_alive

    detail = anyio.run(_session_run, workspace, steps)
    assert detail["id"] == "m1b2c3d4"
    assert "Prefers Vim keybindings" in (workspace / "archive.md").read_text()


def test_schemas_version_resources_and_prompt(workspace: Path) -> None:
    """What a host sees before calling anything: described parameters, enums, ranges
    (limit 1..20 at its boundaries 0/20/21), the version, resources and a prompt."""

    from memcli import __version__

    async def steps(session):  # noqa: ANN001, ANN202
        assert session.init_result.server_info.name == "memcli"
        assert session.init_result.server_info.version == __version__
        tools = {t.name: t for t in (await session.list_tools()).tools}
        for tool in tools.values():
            for name, prop in tool.input_schema["properties"].items():
                assert prop.get("description"), (tool.name, name)
        search = tools["search_memories"].input_schema["properties"]
        assert search["search_mode"]["enum"] == ["hybrid", "semantic", "keyword"]
        assert "preference" in search["memory_types"]["anyOf"][0]["items"]["enum"]
        assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, 20)
        add = tools["add_memory"].input_schema["properties"]
        assert "lesson" in add["memory_type"]["enum"]
        assert add["importance"]["anyOf"][0] == {"maximum": 1.0, "minimum": 0.0, "type": "number"}

        limits = {}
        for limit in (0, 1, 20, 21):
            limits[limit] = await session.call_tool(
                "search_memories", {"query": "python", "limit": limit}
            )
        assert limits[0].is_error and "greater than or equal to 1" in limits[0].content[0].text
        assert limits[21].is_error and "less than or equal to 20" in limits[21].content[0].text
        assert payload(limits[1])["total_found"] == 1
        # at most 20, and more than limit 1 gave (the floor leaves out what does not fit)
        assert 1 < payload(limits[20])["total_found"] <= 20
        bad_type = await session.call_tool(
            "add_memory", {"content": "x y z", "memory_type": "rumour"}
        )
        assert bad_type.is_error

        resources = {str(r.uri): r for r in (await session.list_resources()).resources}
        assert set(resources) == {"memory://memory.md", "memory://learnings.md"}
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memory://entry/{memory_key}"]
        memory_md = (await session.read_resource("memory://memory.md")).contents[0].text
        assert memory_md == (workspace / "memory.md").read_text()
        learnings = (await session.read_resource("memory://learnings.md")).contents[0].text
        assert learnings == (workspace / "learnings.md").read_text()
        entry = json.loads(
            (await session.read_resource("memory://entry/m8f3a2c1")).contents[0].text
        )
        assert entry["id"] == "m8f3a2c1" and entry["type"] == "preference"
        with pytest.raises(Exception, match="nope"):  # noqa: B017 - an MCP error
            await session.read_resource("memory://entry/nope")

        prompts = (await session.list_prompts()).prompts
        assert [p.name for p in prompts] == ["memory_context"]
        assert all(a.description for a in prompts[0].arguments)
        got = await session.get_prompt(
            "memory_context", {"query": "How should I write Python tests?", "max_tokens": "300"}
        )
        text = got.messages[0].content.text
        assert "<memory>" in text and "Prefers pytest" in text

    anyio.run(_session_run, workspace, steps)
