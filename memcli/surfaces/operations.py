"""Requests into library calls: the one place that turns a core.requests object into
the Memory facade's keyword arguments.

Every surface (the Typer CLI, the quick path, the daemon, the MCP server, the hooks)
builds a request and calls these; when the services take requests themselves, this
module shrinks to the calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memcli.core.requests import AddRequest, GetRequest, InjectRequest, ListRequest, SearchQuery


def search_kwargs(q: SearchQuery) -> dict[str, Any]:
    """Memory.search's keyword arguments for `q` (all but the query)."""
    return {
        "mode": q.mode,
        "types": list(q.types) or None,
        "keywords": list(q.keywords) or None,
        "since": q.since,
        "until": q.until,
        "limit": q.limit,
        "min_score": q.min_score,
        "include_archived": q.include_archived,
        "touch": q.touch,
    }


def search(mem: Any, q: SearchQuery, progress: Callable[[int, int], None] | None = None) -> Any:
    """The hits of `q` (list[Hit]; of every layer the workspace reads, each a LayerHit
    naming its layer, when it reads more than itself: memcli.services.layers)."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.search(layers, q.query, **search_kwargs(q), progress=progress)
    return mem.search(q.query, **search_kwargs(q), progress=progress)


def _layers(mem: Any) -> Any:
    """The layers `mem` reads when more than itself, else None."""
    from memcli.services.layers import layered

    return layered(mem)


def inject(mem: Any, r: InjectRequest) -> Any:
    """The inject block of `r` (Packed), of every layer the workspace reads."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.inject(layers, r)
    return mem.inject(
        r.context,
        max_tokens=r.max_tokens,
        encoding=r.encoding,
        fmt=r.fmt,
        types=list(r.types) or None,
        touch=r.touch,
    )


def inject_keyword_only(mem: Any, r: InjectRequest) -> Any:
    """The inject block of `r` from the keyword side alone, of every layer (no model
    loaded, no index touched: the prompt hook's answer before the first indexing)."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.inject(layers, r, keyword_only=True)
    from memcli.services.search import inject_keyword_only as one

    return one(mem.runtime, r)


def add(mem: Any, r: AddRequest, to: str | None = None) -> Any:
    """The entry `r` adds, or the one it updates (AddResult); in the layer `to` names
    ("user", "project"), else the one `[layers] user_types` gives its type, else `mem`."""
    mem = write_target(mem, to, r.type)
    return mem.add(
        r.text,
        type=r.type,
        importance=r.importance,
        confidence=r.confidence,
        keywords=None if r.keywords is None else list(r.keywords),
        source=r.source,
        pin=r.pin,
        allow_secret=r.allow_secret,
        by=r.by,
    )


def write_target(mem: Any, to: str | None, entry_type: str) -> Any:
    """The Memory a write goes to (memcli.services.layers.target)."""
    from memcli.services.layers import target

    return target(mem, to, entry_type)


def extract(mem: Any, messages: Any, *, source: str | None = None, dry_run: bool = False) -> Any:
    """The decisions of an extraction (list[Decision]); the statements of the types
    `[layers] user_types` names go to the person's own layer
    (memcli.services.layers.extract)."""
    from memcli.services.layers import extract as layered

    return layered(mem, messages, source=source, dry_run=dry_run)


def get(mem: Any, r: GetRequest) -> Any:
    """One entry with its access statistics (EntryDetail; a LayerDetail naming its layer,
    from the nearest layer holding the id, when the workspace reads more than itself)."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.get(layers, r.entry_id)
    return mem.get(r.entry_id)


def holder(mem: Any, entry_id: str) -> Any:
    """The Memory of the nearest layer holding `entry_id` (`mem` when none does, or when
    it reads no other layer): where a change to that entry (forget) is written."""
    layers = _layers(mem)
    if layers is None:
        return mem
    from memcli.services import layers as layered

    return layered.holder(layers, entry_id).memory


def list_entries(mem: Any, r: ListRequest) -> Any:
    """The entries `r` selects (list[Entry]; list[LayerEntry] when the workspace reads
    more layers than itself)."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.list_entries(layers, r)
    return mem.list(
        types=list(r.types) or None,
        since=r.since,
        until=r.until,
        keywords=list(r.keywords) or None,
        include_archived=r.include_archived,
        pinned=r.pinned,
        sort=r.sort or "file",
        limit=r.limit,
    )
