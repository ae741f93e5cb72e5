"""`memcli mcp`: the memory as MCP tools over stdio (mcp 2.x `MCPServer`).

Tools follow seed 001 (`search_memories` with its SearchMemoriesInput/Output shape) and
DESIGN §9; each is a thin call into the same Memory the CLI uses. Bad arguments and
domain errors become MCP tool errors, never crashes; nothing is printed on stdout, which
belongs to the protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcli.errors import MemcliError
from memcli.memory import Memory, shared_memory

MODES = ("semantic", "keyword", "hybrid")


def build_server(workspace: str | Path | None):  # noqa: ANN201 - MCPServer
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    def memory() -> Memory:
        return shared_memory(workspace)

    def call(fn, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN001
        try:
            return fn(*args, **kwargs)
        except MemcliError as exc:
            raise ToolError(str(exc)) from None

    server = MCPServer(
        name="memcli",
        instructions=(
            "Long-term memory of the user and of past work, kept in Markdown. Search it "
            "before answering questions that may depend on the user's preferences, facts "
            "about them or their projects, or lessons from earlier sessions; add a memory "
            "when the user states a lasting preference or fact, or corrects one."
        ),
    )

    @server.tool(
        description=(
            "Search long-term memory. Use it when the answer may depend on what the user "
            "told you before (preferences, facts, projects, decisions) or on lessons from "
            "past work, and before asking the user something they may have said already. "
            "search_mode: hybrid (default, best), semantic (meaning), keyword (exact words). "
            "time_range: {start, end} as YYYY-MM-DD. limit: 1-20."
        )
    )
    def search_memories(
        query: str,
        search_mode: str = "hybrid",
        keywords: list[str] | None = None,
        memory_types: list[str] | None = None,
        time_range: dict[str, str] | None = None,
        limit: int = 10,
        min_relevance_score: float = 0.0,
    ) -> dict[str, Any]:
        if search_mode not in MODES:
            raise ToolError(f"search_mode must be one of {', '.join(MODES)}")
        if not 1 <= limit <= 20:
            raise ToolError("limit must be between 1 and 20")
        span = time_range or {}
        hits = call(
            memory().search,
            query,
            mode=search_mode,
            types=memory_types,
            keywords=keywords,
            since=span.get("start"),
            until=span.get("end"),
            limit=limit,
            min_score=min_relevance_score,
        )
        return {
            "total_found": len(hits),
            "results": [_result(h) for h in hits],
            "search_strategy_used": search_mode,
        }

    @server.tool(description="Everything about one memory (text, metadata, access counts).")
    def get_memory_detail(memory_key: str) -> dict[str, Any]:
        return call(memory().get, memory_key).to_dict()

    @server.tool(
        description=(
            "Remember something lasting: a user preference, a fact about the user or their "
            "work, a pattern, a skill or a lesson. The same text again updates the existing "
            "memory instead of duplicating it. memory_type: preference, fact, pattern, "
            "correction, skill, lesson. importance: 0-1."
        )
    )
    def add_memory(
        content: str,
        memory_type: str = "fact",
        importance: float | None = None,
        keywords: list[str] | None = None,
        source: str | None = None,
    ) -> dict[str, Any]:
        result = call(
            memory().add,
            content,
            type=memory_type,
            importance=importance,
            keywords=keywords,
            source=source,
        )
        return {
            "action": result.action,
            "memory_key": result.entry.id,
            "memory": result.entry.to_dict(),
        }

    @server.tool(
        description=(
            "A ready-to-use memory block for a prompt, at most max_tokens tokens "
            "(cl100k_base), with the memories most relevant to the context first."
        )
    )
    def inject_memory(context: str = "", max_tokens: int = 2000) -> dict[str, Any]:
        packed = call(memory().inject, context or None, max_tokens=max_tokens)
        return {
            "block": packed.text,
            "tokens": packed.tokens,
            "budget": packed.budget,
            "memory_keys": [c.entry.id for c in packed.chosen],
        }

    @server.tool(
        description=(
            "Forget a memory that is wrong or no longer true: it moves to archive.md "
            "(restorable with `memcli restore`)."
        )
    )
    def forget_memory(memory_key: str) -> dict[str, Any]:
        entry = call(memory().forget, memory_key)
        return {"forgotten": entry.id, "text": entry.text}

    return server


def _result(hit: Any) -> dict[str, Any]:
    entry = hit.entry
    first_line = entry.text.split("\n", 1)[0]
    return {
        "memory_key": entry.id,
        "summary": first_line if len(first_line) <= 120 else first_line[:119] + "…",
        "content_preview": entry.text[:200],
        "memory_type": entry.type,
        "relevance_score": round(hit.score, 6),
        "created_at": entry.meta.get("created"),
        "keywords": entry.keywords,
        "metadata": {**entry.meta, "file": entry.file, "line": entry.line},
    }


def serve(workspace: str | Path | None) -> None:
    """Run the MCP server on stdio until the client disconnects."""
    memory = shared_memory(workspace)
    memory._ready()
    build_server(workspace).run("stdio")
