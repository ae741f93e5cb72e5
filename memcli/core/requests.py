"""One spelling of each operation's parameters, shared by every surface.

The Typer CLI, the Typer-free quick path, the daemon, the MCP server, the hooks and the
llm plugin all build one of these and hand it to the library as is (the Memory facade
takes it, or every layer the workspace reads: memcli.surfaces.operations); the daemon's
client sends one over the socket (`to_wire` / `from_wire`, which checks every field's
type). None means "the workspace's
setting" (memcli.toml); the services resolve and validate. Values are as the library
takes them, except where a field says the command line's forms are allowed (resolved
by memcli.surfaces.cli.args before the call). Plain data, standard library only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from memcli.core.records import record

#: the search modes: both relevances, embeddings only, BM25 only
MODES = ("hybrid", "semantic", "keyword")
#: the formats of an inject block
FORMATS = ("markdown", "xml", "json")


@record(frozen=True)
class SearchQuery:
    """Parameters of a search (`memcli search`, MCP `search_memory`, `Memory.search`)."""

    query: str
    mode: str | None = None  # hybrid | semantic | keyword; None: [search] mode
    types: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    since: str | None = None  # ISO date (the command line's 7d / today: cli.args resolves)
    until: str | None = None
    limit: int | None = None  # None: [search] limit
    min_score: float | None = None
    include_archived: bool = False
    touch: bool = True  # count the results as accessed (statistics only, never ranking)


@record(frozen=True)
class InjectRequest:
    """Parameters of an inject block (`memcli inject`, MCP `inject_memory`, hooks)."""

    context: str | None = None
    max_tokens: int | None = None  # None: [inject] max_tokens
    encoding: str | None = None
    fmt: str = "markdown"  # markdown | xml | json
    types: tuple[str, ...] = ()
    touch: bool = True


@record(frozen=True)
class AddRequest:
    """Parameters of an added entry (`memcli add`, MCP `add_memory`, `Memory.add`)."""

    text: str
    type: str = "fact"
    importance: float | None = None
    confidence: float | None = None
    keywords: tuple[str, ...] | None = None
    source: str | None = None
    pin: bool = False
    allow_secret: bool = False
    by: str = "agent"  # who wrote it: "agent" (API, MCP), "person" (the CLI), "import"
    created: str | None = None  # when it was first written, as a date an import gave; None: now


@record(frozen=True)
class GetRequest:
    """One entry with its access statistics (`memcli get`, MCP `get_memory_detail`)."""

    entry_id: str


@record(frozen=True)
class ListRequest:
    """Parameters of a listing (`memcli list`, MCP `list_memories`)."""

    types: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    include_archived: bool = False
    pinned: bool = False
    sort: str | None = None  # file | created | updated | importance; None: file order
    limit: int | None = None


def to_wire(request: Any) -> dict[str, Any]:
    """A request as a JSON-ready dict tagged with its kind (the daemon's wire format)."""
    return {"kind": type(request).__name__, **dataclasses.asdict(request)}


KINDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (SearchQuery, InjectRequest, AddRequest, GetRequest, ListRequest)
}


def from_wire(data: dict[str, Any]) -> Any:
    """The request a `to_wire` dict describes; ValueError names what is wrong."""
    kind = data.get("kind")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown request kind {kind!r}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(names) - {"kind"})
    if unknown:
        raise ValueError(f"{kind}: unknown field(s) {', '.join(unknown)}")
    values = {}
    for name, value in data.items():
        if name == "kind":
            continue
        value = tuple(value) if isinstance(value, list) else value
        if not _fits(value, str(names[name].type)):
            raise ValueError(f"{kind}.{name}: {value!r} is not {names[name].type}")
        values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ValueError(f"{kind}: {exc}") from None


_SCALARS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "None": (type(None),),
}


def _fits(value: Any, annotation: str) -> bool:
    """Whether a decoded wire value has a field's type (its annotation as written)."""
    for option in annotation.split(" | "):
        if option == "tuple[str, ...]":
            if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
                return True
        elif isinstance(value, _SCALARS[option]) and not (
            isinstance(value, bool) and option in ("int", "float")
        ):
            return True
    return False
