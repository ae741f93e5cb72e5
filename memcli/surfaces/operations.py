"""A request a surface built (memcli.core.requests), handed to the Memory facade as is,
or to every layer the workspace reads when it reads more than itself
(memcli.services.layers). Every surface (the Typer CLI, the quick path, the daemon,
the MCP server, the hooks, the llm plugin) calls these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memcli.core.requests import AddRequest, GetRequest, InjectRequest, ListRequest, SearchQuery


def search(mem: Any, q: SearchQuery, progress: Callable[[int, int], None] | None = None) -> Any:
    """The hits of `q` (list[Hit]; of every layer the workspace reads, each a LayerHit
    naming its layer, when it reads more than itself)."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.search(layers, q, progress=progress)
    return mem.search(q, progress=progress)


def _layers(mem: Any) -> Any:
    """The layers `mem` reads when more than itself, else None."""
    if not _may_read_others(mem):
        return None  # the single workspace: memcli.services.layers is not even imported
    from memcli.services.layers import layered

    return layered(mem)


def _may_read_others(mem: Any) -> bool:
    """Whether a layer `[layers] read` names may exist besides `mem` (a few stats): when
    none does, a read of one workspace imports none of the layers' machinery (≈ 35 ms of
    a one-off search: the inject packer, the read-only index). memcli.services.layers.
    open_layers decides which of them are read."""
    import os

    from memcli.core.names import CURATED_BUILTIN
    from memcli.store.workspace import default_workspace

    rt = mem.runtime
    names = [part.strip() for part in rt.settings.layers.read.split(",") if part.strip()]
    here = os.path.realpath(mem.root)
    for name in names:
        if name == "user":
            path = os.path.realpath(default_workspace(rt.env))
            if path == here:
                return False  # the per-user workspace reads no other layer
        else:
            path = os.path.realpath(os.path.join(mem.root, os.path.expanduser(name)))
        if path != here and any(os.path.isfile(os.path.join(path, n)) for n in CURATED_BUILTIN):
            return True
    return False


def layer_name(mem: Any, dest: Any) -> str | None:
    """The name of the layer `dest` (a Memory) is among those `mem` reads, when `mem`
    reads more than itself (what a write's output names), else None."""
    layers = _layers(mem)
    if layers is None:
        return None
    root = dest.root.resolve()
    return next((layer.name for layer in layers if layer.memory.root.resolve() == root), None)


def doctor(mem: Any, extra: Any = ()) -> dict[str, Any]:
    """`mem`'s doctor report (the surfaces' `extra` checks among its own), with one per
    other layer it reads or names (memcli.services.layer_health) when there are any."""
    from memcli.services.layer_health import doctor as layered
    from memcli.services.layers import open_layers

    return layered(open_layers(mem), mem.doctor(extra=extra))


def inject(mem: Any, r: InjectRequest) -> Any:
    """The inject block of `r` (Packed), of every layer the workspace reads."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.inject(layers, r)
    return mem.inject(r)


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
    return write_target(mem, to, r.type).add(r)


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
    return mem.get(r)


def holder(mem: Any, entry_id: str) -> Any:
    """The Memory of the nearest layer holding `entry_id` (`mem` when none does, or when
    it reads no other layer): where a change to that entry (forget) is written."""
    layers = _layers(mem)
    if layers is None:
        return mem
    from memcli.services import layers as layered

    return layered.holder(layers, entry_id).memory


def review_layers(mem: Any) -> list[tuple[str | None, Any]]:
    """(layer name, Memory) of each layer `memcli review` shows: every layer `mem` reads
    (an agent's forget or extract's rewrite there waits in that layer), or `mem` alone
    (no name) when it reads no other layer."""
    layers = _layers(mem)
    if layers is None:
        return [(None, mem)]
    return [(layer.name, layer.memory) for layer in layers]


def list_entries(mem: Any, r: ListRequest) -> Any:
    """The entries `r` selects (list[Entry]; list[LayerEntry] when the workspace reads
    more layers than itself)."""
    layers = _layers(mem)
    if layers is not None:
        from memcli.services import layers as layered

        return layered.list_entries(layers, r)
    return mem.list(r)
