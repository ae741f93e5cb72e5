"""`memcli mcp`: the memory as MCP tools over stdio (mcp 2.x `MCPServer`).

Tools (docs/agents.md; `search_memories` takes a SearchMemoriesInput and answers a
SearchMemoriesOutput); each is a thin call into the same Memory the CLI uses. Every parameter has a
description, modes and types are enums and numbers have ranges in the tools' JSON
schemas, so a host validates before calling (the types a workspace's `[files]` declares
are in the enums too). Resources: each curated file (`memory://memory.md`,
`memory://learnings.md`, …: the workspace's registry), those of the other layers it
reads (`memory://layer/user/memory.md`: memcli.surfaces.mcp_layers) and
`memory://entry/{id}` (an id of any layer); the
prompt `memory_context` hands an agent the inject block. The server reports memcli's
version. Bad arguments and domain errors become MCP errors, never crashes; nothing is
printed on stdout, which belongs to the protocol, and logs are plain lines on stderr,
never Rich's (`plain_logging`).

One vocabulary (issue 29): what to look for is `query` in every tool (`inject_memory`
still takes its old name `context`), an entry is a `memory_key`. An argument a tool
does not take is an error naming it (the schemas say `additionalProperties: false`),
never silently dropped. Every tool carries MCP's annotations (read-only, destructive,
idempotent; none reaches beyond the workspace: openWorldHint false).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from memcli.core.errors import MemcliError
from memcli.core.requests import MODES, AddRequest, GetRequest, InjectRequest, SearchQuery
from memcli.core.validate import strip_invisible
from memcli.core.version import VERSION as __version__
from memcli.services.memory import Memory, shared_memory
from memcli.surfaces import operations

SearchMode = Literal[MODES]  # type: ignore[valid-type]
#: the built-in types an agent may search for (episode: notes of `memcli log`); a
#: workspace's server adds those its `[files]` declares
SEARCH_TYPES = (
    "preference",
    "fact",
    "pattern",
    "reflection",
    "correction",
    "skill",
    "lesson",
    "episode",
)
#: the built-in types an agent may add (reflections come from `memcli reflect`)
ADD_TYPES = ("preference", "fact", "pattern", "correction", "skill", "lesson")
MemoryType = Literal[SEARCH_TYPES]  # type: ignore[valid-type]
AddType = Literal[ADD_TYPES]  # type: ignore[valid-type]
MemoryKey = Annotated[
    str,
    Field(
        description="The memory's id (memory_key of a search result), e.g. m8f3a2c1.",
        min_length=1,
        max_length=64,
    ),
]


#: a wait for the model shorter than this goes unmentioned in a tool's result
NOTICE_AFTER = 0.5

#: (readOnlyHint, destructiveHint, idempotentHint) of each tool
ANNOTATIONS: dict[str, tuple[bool, bool, bool]] = {
    "search_memories": (True, False, True),
    "get_memory_detail": (True, False, True),
    "add_memory": (False, False, True),  # the same text again updates the same memory
    "inject_memory": (True, False, True),
    "forget_memory": (False, True, True),  # restorable, but it leaves the memory
}


def annotations(name: str):  # noqa: ANN201 - mcp.types.ToolAnnotations
    """The MCP annotations of tool `name` (ANNOTATIONS)."""
    from mcp.types import ToolAnnotations

    read_only, destructive, idempotent = ANNOTATIONS[name]
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def strict_arguments(server: Any) -> None:
    """Make every tool of `server` refuse an argument it does not take, naming it and
    the ones it does take (the mcp package's argument models ignore extras)."""
    from pydantic import ConfigDict, model_validator

    for tool in server._tool_manager.list_tools():  # noqa: SLF001 - no public way in
        base = tool.fn_metadata.arg_model
        known = sorted(f.alias or n for n, f in base.model_fields.items())

        def refuse_unknown(data: Any, name: str = tool.name, known: list = known) -> Any:
            if isinstance(data, dict):
                unknown = sorted(set(data) - set(known))
                if unknown:
                    raise ValueError(
                        f"{name} takes no argument {', '.join(map(repr, unknown))}; "
                        f"its arguments: {', '.join(known)}"
                    )
            return data

        strict = type(
            base.__name__,
            (base,),
            {
                "__module__": base.__module__,
                "model_config": ConfigDict(**base.model_config, extra="forbid"),
                "_refuse_unknown": model_validator(mode="before")(refuse_unknown),
            },
        )
        tool.fn_metadata.arg_model = strict
        tool.parameters = strict.model_json_schema(by_alias=True)


def retyped(**hints: Any) -> Any:
    """Give parameters of a tool function these annotations (built per workspace: its
    types) before the server reads its signature."""

    def wrap(fn: Any) -> Any:
        fn.__annotations__.update(hints)
        return fn

    return wrap


def plain_logging() -> None:
    """Log plain lines to stderr (memcli.surfaces.http_limits.plain_logging, warnings and
    worse), for stdio as for HTTP, and never through Rich: the mcp package's
    `configure_logging`, which every MCPServer calls when it is built, imports Rich and
    installs its handler (wrapped, boxed lines with a clock; Rich's tracebacks). It is
    replaced by this before a server is built, so Rich is never imported."""
    import logging

    from mcp.server.mcpserver import server as sdk

    from memcli.surfaces.http_limits import plain_logging as plain

    sdk.configure_logging = lambda *args, **kwargs: None  # type: ignore[assignment]
    plain()
    logging.getLogger("mcp").setLevel(logging.WARNING)  # its INFO lines are not for people


def build_server(  # noqa: ANN201 - MCPServer
    workspace: str | Path | None, ready: Callable[[], float] | None = None
):
    """The server of `workspace`'s memory. `ready` (memcli.surfaces.mcp_stdio.Warm.wait)
    blocks a call until the model readied in the background is, and says how many
    seconds it waited: a tool's result then says so (`waited`)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    from memcli.surfaces.mcp_layers import add_layer_resources, read_for_model

    waits = threading.local()

    def memory() -> Memory:
        waited = ready() if ready is not None else 0.0
        if waited >= NOTICE_AFTER:
            waits.notice = (
                f"this first call waited {waited:.1f} s for the embedding model to load "
                "(it loads once, when the server starts)"
            )
        return shared_memory(workspace)

    def noted(answer: dict[str, Any]) -> dict[str, Any]:
        """The answer, with the notice of a wait for the model when this call waited."""
        notice = getattr(waits, "notice", None)
        if notice:
            waits.notice = None
            return {**answer, "notice": notice}
        return answer

    try:
        files = shared_memory(workspace).store.files
    except MemcliError:  # a bad [files]: every tool call says what is wrong
        from memcli.core.registry import BUILTIN as files
    declared = tuple(t for t in files.types if t not in SEARCH_TYPES)
    search_type: Any = Literal[(*SEARCH_TYPES, *declared)]  # type: ignore[valid-type]
    add_type: Any = Literal[(*ADD_TYPES, *declared)]  # type: ignore[valid-type]

    def call(fn, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN001
        try:
            return fn(*args, **kwargs)
        except MemcliError as exc:
            raise ToolError(str(exc)) from None

    server = MCPServer(
        name="memcli",
        version=__version__,
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
        ),
        annotations=annotations("search_memories"),
    )
    @retyped(
        memory_types=Annotated[
            list[search_type] | None, Field(description="Only memories of these types.")
        ]
    )
    def search_memories(
        query: Annotated[
            str, Field(description="What to look for, in the user's words or a question.")
        ],
        search_mode: Annotated[
            SearchMode,
            Field(
                description="hybrid: meaning and exact words (best); semantic: meaning; "
                "keyword: exact words."
            ),
        ] = "hybrid",
        keywords: Annotated[
            list[str] | None,
            Field(description="Only memories tagged with one of these keywords."),
        ] = None,
        memory_types: Annotated[
            list[MemoryType] | None, Field(description="Only memories of these types.")
        ] = None,
        time_range: Annotated[
            dict[Literal["start", "end"], str] | None,
            Field(
                description="Only memories created in this span: {start, end} as YYYY-MM-DD "
                "(either may be left out)."
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=20, description="At most this many results.")] = 10,
        min_relevance_score: Annotated[
            float | None,
            Field(
                ge=0.0,
                description="Drop results scoring less than this. Left out, results less "
                "relevant than the memory's relevance floor are dropped instead; given (0 "
                "too), it replaces that floor.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        span = time_range or {}
        request = SearchQuery(
            query,
            mode=search_mode,
            types=tuple(memory_types or ()),
            keywords=tuple(keywords or ()),
            since=span.get("start"),
            until=span.get("end"),
            limit=limit,
            min_score=min_relevance_score,
        )
        hits = call(operations.search, memory(), request)
        return noted(
            {
                "total_found": len(hits),
                "results": [_result(h) for h in hits],
                "search_strategy_used": search_mode,
            }
        )

    @server.tool(
        description="Everything about one memory (text, metadata, access counts).",
        annotations=annotations("get_memory_detail"),
    )
    def get_memory_detail(memory_key: MemoryKey) -> dict[str, Any]:
        detail = call(operations.get, memory(), GetRequest(memory_key)).to_dict()
        return {**detail, "text": strip_invisible(detail["text"])}

    @server.tool(
        description=(
            "Remember something lasting: a user preference, a fact about the user or their "
            "work, a pattern, a skill or a lesson. The same text again updates the existing "
            "memory instead of duplicating it. memory_type: preference, fact, pattern, "
            "correction, skill, lesson. importance: 0-1. A correction, or an importance of "
            "0.9 or more, waits for the user to confirm it (`memcli review`)."
        ),
        annotations=annotations("add_memory"),
    )
    @retyped(memory_type=Annotated[add_type, Field(description="What kind of memory it is.")])
    def add_memory(
        content: Annotated[
            str,
            Field(
                description="The memory as one self-contained statement, e.g. 'Prefers "
                "pytest over unittest'.",
                min_length=1,
            ),
        ],
        memory_type: Annotated[AddType, Field(description="What kind of memory it is.")] = "fact",
        importance: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description="0-1; how much it matters (default 0.5)."),
        ] = None,
        keywords: Annotated[
            list[str] | None, Field(description="A few keywords to find it by.")
        ] = None,
        source: Annotated[
            str | None, Field(description="Where it comes from: a conversation or session id.")
        ] = None,
        layer: Annotated[
            Literal["user", "project"] | None,
            Field(
                description="Where to keep it: 'user' (the user's own memory, for every "
                "project) or 'project' (this workspace); default: this workspace, or the "
                "user's for the types the user's settings send there."
            ),
        ] = None,
    ) -> dict[str, Any]:
        request = AddRequest(
            content,
            type=memory_type,
            importance=importance,
            keywords=None if keywords is None else tuple(keywords),
            source=source,
            by="agent",
        )
        result = call(operations.add, memory(), request, layer)
        answer = {
            "action": result.action,
            "memory_key": result.entry.id,
            "memory": result.entry.to_dict(),
        }
        if "review" in result.entry.meta:
            answer["waits_for_review"] = (
                "a correction, a pin or an importance of 0.9 or more waits for the user "
                "to confirm it (memcli review)"
            )
        return noted(answer)

    @server.tool(
        description=(
            "A ready-to-use memory block for a prompt, at most max_tokens tokens "
            "(cl100k_base), with the memories most relevant to the query first; when the "
            "user's own memory is read beside this workspace's, `layers` says where each "
            "memory_key comes from ('project', 'user' or a path)."
        ),
        annotations=annotations("inject_memory"),
    )
    def inject_memory(
        query: Annotated[
            str,
            Field(
                description="The conversation, task or question the memories are for (empty: "
                "the most important memories)."
            ),
        ] = "",
        max_tokens: Annotated[
            int, Field(ge=1, le=100_000, description="Token budget of the whole block.")
        ] = 2000,
        context: Annotated[
            str | None, Field(description="The old name of `query` (give one of them).")
        ] = None,
    ) -> dict[str, Any]:
        if context is not None and query and context != query:
            raise ToolError("give `query` or its old name `context`, not both")
        wanted = query or context or None
        packed = call(operations.inject, memory(), InjectRequest(wanted, max_tokens))
        answer = {
            "block": packed.text,
            "tokens": packed.tokens,
            "budget": packed.budget,
            "memory_keys": [c.entry.id for c in packed.chosen],
        }
        if any(hasattr(c, "layer") for c in packed.chosen):  # several layers were read
            answer["layers"] = {c.entry.id: c.layer for c in packed.chosen}
        return noted(answer)

    @server.tool(
        description=(
            "Forget a memory that is wrong or no longer true. A memory an agent or "
            "extraction wrote moves to archive.md at once (restorable with `memcli "
            "restore`); one the user wrote or confirmed stays until the user confirms "
            "forgetting it (`memcli review`): the answer then says waits_for_review."
        ),
        annotations=annotations("forget_memory"),
    )
    def forget_memory(memory_key: MemoryKey) -> dict[str, Any]:
        done = call(lambda: operations.holder(memory(), memory_key).forget(memory_key))
        text = strip_invisible(done.entry.text)
        if done.archived:
            return {"forgotten": done.entry.id, "text": text}
        return {
            "memory_key": done.entry.id,
            "text": text,
            "waits_for_review": "the user wrote this memory: it is archived once they "
            "confirm it (memcli review); until then it stays as it is",
        }

    def read_file(name: str) -> str:
        return read_for_model(memory().root, name)

    for spec in files.curated:  # one resource per curated file
        server.resource(
            f"memory://{spec.name}",
            name=spec.name,
            description=f"{spec.title}: the user's {', '.join(spec.types)} entries "
            "(Markdown; metadata in trailing comments).",
            mime_type="text/markdown",
        )(functools.partial(read_file, spec.name))

    add_layer_resources(server, memory)  # memory://layer/user/memory.md, …

    @server.resource(
        "memory://entry/{memory_key}",
        name="memory entry",
        description="One memory with its metadata and access counts, as JSON.",
        mime_type="application/json",
    )
    def entry_resource(memory_key: str) -> str:
        try:
            detail = operations.get(memory(), GetRequest(memory_key)).to_dict()
        except MemcliError as exc:
            raise ResourceError(str(exc)) from None
        detail["text"] = strip_invisible(detail["text"])
        return json.dumps(detail, ensure_ascii=False, indent=1)

    @server.prompt(
        name="memory_context",
        title="Memory context",
        description="What memcli remembers that matters for a task or question: a "
        "token-budgeted memory block to start a conversation with.",
    )
    def memory_context(
        query: Annotated[
            str, Field(description="The task or question (empty: the most important memories).")
        ] = "",
        max_tokens: Annotated[
            int, Field(ge=1, le=100_000, description="Token budget of the block.")
        ] = 1500,
    ) -> str:
        packed = call(operations.inject, memory(), InjectRequest(query or None, max_tokens))
        return (
            "Long-term memory about the user and past work (from memcli). Use it where it "
            "applies; the user's newer words take precedence.\n\n" + packed.text
        )

    strict_arguments(server)
    return server


def _result(hit: Any) -> dict[str, Any]:
    """A search hit as the tool returns it; the text without invisible characters (a
    hand edit may hold some: they never reach a model, as in inject blocks)."""
    entry = hit.entry
    text = strip_invisible(entry.text)
    first_line = text.split("\n", 1)[0]
    layer = getattr(hit, "layer", None)  # several layers were read (services.layers)
    return {
        **({} if layer is None else {"layer": layer}),
        "memory_key": entry.id,
        "summary": first_line if len(first_line) <= 120 else first_line[:119] + "…",
        "content_preview": text[:200],
        "memory_type": entry.type,
        "relevance_score": round(hit.score, 6),
        # no strong match: one of the query's closest, not an answer (docs/search.md)
        **({"weak": True} if getattr(hit, "weak", False) else {}),
        "created_at": entry.meta.get("created"),
        "keywords": entry.keywords,
        "metadata": {**entry.meta, "file": entry.file, "line": entry.line},
    }
