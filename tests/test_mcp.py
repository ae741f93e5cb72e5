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
        env={k: v for k, v in os.environ.items() if k.startswith(("XDG_", "HF_", "PATH", "HOME"))},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
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
        assert "between 1 and 20" in errors[0].content[0].text
        still_alive = payload(
            await session.call_tool("get_memory_detail", {"memory_key": "m1b2c3d4"})
        )
        return still_alive

    detail = anyio.run(_session_run, workspace, steps)
    assert detail["id"] == "m1b2c3d4"
    assert "Prefers Vim keybindings" in (workspace / "archive.md").read_text()
