"""Layered memory (docs/layers.md): a workspace reads its own entries and those of the
layers its `[layers] read` setting names (the per-user workspace by default), ranked
in one list, each result naming its layer.

`open_layers` finds the layers of a Memory: the workspace itself ("project"), then
"user" (the per-user workspace) and paths (named by their path as written). A layer
directory must pass the walk up's ownership check (memcli.store.workspace
unsafe_dir_problem) and hold a workspace; one that does not is left out with one
notice (a per-user workspace that does not exist is left out silently: most people
have none). When the workspace is the per-user one, it is the only layer. Each layer
is read with its own settings (its memcli.toml, applied as its own trust says) and its
own index; the list is decided again on every call, so a watcher follows changes.

`search`, `inject`, `list_entries` and `get` read every layer; writes go to one layer
(`target`, and `extract` by type; `holder` for a change to an existing entry).
Maintenance (compress, reflect) never comes here: it works on one Memory.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcli.core.errors import ValidationError
from memcli.core.models import Entry, normalize_text
from memcli.core.requests import InjectRequest, ListRequest, SearchQuery
from memcli.logic.inject import Candidate, Packed
from memcli.logic.search import Hit
from memcli.services.memory import Memory
from memcli.services.readonly_index import obey_mode, read_only

#: the name of the workspace's own layer, and of the per-user workspace's
HERE = "project"
USER = "user"


@dataclass(frozen=True)
class Layer:
    """One layer a workspace reads: its name and its Memory."""

    name: str
    memory: Memory


@dataclass(frozen=True)
class LayerHit(Hit):
    """A search hit and the layer it came from."""

    layer: str = HERE

    def to_dict(self, explain: bool = False) -> dict[str, object]:
        return {**super().to_dict(explain), "layer": self.layer}


@dataclass(frozen=True, slots=True)
class LayerCandidate(Candidate):
    """A candidate of an inject block and the layer it came from."""

    layer: str = HERE


@dataclass(frozen=True)
class LayerEntry:
    """An entry and the layer it came from (list)."""

    layer: str
    entry: Entry


#: directories already named in a notice by this process (one notice each)
_told: set[str] = set()


def open_layers(mem: Memory) -> list[Layer]:
    """The layers `mem` reads, nearest first: itself, then those `[layers] read` names
    that can be read. Which those are is decided again on every call (a few stats: a
    long-lived process, the watcher, sees a layer appear or go, and a changed setting,
    without restarting); a layer's Memory is kept on `mem` while what decides its
    settings stays the same (its index and query embedder warm)."""
    from memcli.services.tenancy import granted
    from memcli.store.workspace import default_workspace

    rt, allowed = mem.runtime, granted(mem)  # served to tenants: only layers granted them
    kept: dict[str, tuple[object, Memory]] = mem.__dict__.setdefault("_layer_memories", {})
    layers = [Layer(HERE, mem)]
    user = os.path.realpath(default_workspace(rt.env))
    seen = {os.path.realpath(mem.root)}
    if user in seen:  # the per-user workspace reads no other layer
        return layers
    for name in _names(rt.settings.layers.read):
        path = user if name == USER else os.path.realpath(mem.root / os.path.expanduser(name))
        if path in seen or (allowed is not None and path not in allowed):
            continue
        seen.add(path)
        if not _usable(path, quiet=name == USER, notify=rt.notify):
            continue
        stamp = _stamp(path)
        if path not in kept or kept[path][0] != stamp:
            kept[path] = (stamp, _open(mem, path, [layer.memory for layer in layers]))
        layers.append(Layer(name, kept[path][1]))
    return layers


def _open(mem: Memory, path: str, nearer: Sequence[Memory]) -> Memory:
    """The Memory of the layer at `path`, with its own index: when its settings would
    put it in the index partition of a nearer layer (a Milvus `[index] workspace` key
    set for every workspace, in the user's config or MEMCLI_INDEX_WORKSPACE), it keeps
    its entries under its own key (its folder name and path hash, the default), so a
    layer's candidates are never crowded out by another's."""
    from dataclasses import replace

    rt = mem.runtime
    other = Memory(path, env=rt.env, embedder_factory=mem._embedder_factory, notify=rt.notify)
    taken = {_index_identity(m.settings, m.root) for m in nearer}
    if _index_identity(other.settings, other.root) in taken - {None}:
        own = replace(other.settings.index, workspace="")
        other = Memory(
            path,
            settings=replace(other.settings, index=own),
            env=rt.env,
            embedder_factory=mem._embedder_factory,
            notify=rt.notify,
        )
    _share_queries(mem, other)
    obey_mode(other)  # a layer the person made read-only is only read
    return other


def _index_identity(settings: Any, root: Path) -> tuple[str, str, str] | None:
    """(uri, collection, workspace key) of a Milvus index whose key is set, else None
    (a local index lives in the workspace; a default key is the workspace's own)."""
    index = settings.index
    if index.backend != "milvus" or not index.workspace:
        return None
    uri = index.uri
    if uri and "://" not in uri:
        uri = os.path.realpath(root / os.path.expanduser(uri))  # relative to the workspace
    return uri, index.collection or "memcli", index.workspace


def _stamp(path: str) -> object:
    """What decides a layer's own settings besides the process's MEMCLI_* variables (a
    change of those makes the workspace's Memory, and so its layers, anew: services.
    memory.shared_memory): its memcli.toml, the user's config, the approvals; its mode."""
    from memcli.services.runtime import settings_stamp

    return settings_stamp(Path(path), with_env=False), read_only(Path(path)) is None


def _share_queries(mem: Memory, other: Memory) -> None:
    """Let `other` embed queries with `mem`'s query embedder when both use the same
    model: one query embedder per process, and a query embedded once for every layer
    (the embedding is most of a warm search's time)."""
    ours, theirs = mem.settings.index, other.settings.index
    if (ours.model, ours.onnx) != (theirs.model, theirs.onnx):
        return
    manager = mem.index_manager
    shared = manager._query  # noqa: SLF001 - the seam until backends declare it
    if not isinstance(shared, LastQuery):
        make = manager._query_factory  # noqa: SLF001
        built = shared

        def inner() -> Any:
            return built or (make() if make else None) or manager.embedder

        shared = manager._query = LastQuery(inner)  # noqa: SLF001
    other.index_manager._query = shared  # noqa: SLF001


class LastQuery:
    """A query embedder (built on first use) that remembers its last answer: the
    layers of one search embed the same query once."""

    def __init__(self, build: Any) -> None:
        self._build = build
        self._inner: Any = None
        self._last: tuple[tuple[str, ...], Any] | None = None

    @property
    def inner(self) -> Any:
        if self._inner is None:
            self._inner = self._build()
        return self._inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        key = tuple(texts)
        if self._last is None or self._last[0] != key:
            self._last = (key, self.inner.embed(texts))
        return self._last[1].copy()


def user_types(mem: Memory) -> list[str]:
    """The entry types `[layers] user_types` sends to the person's own layer."""
    return _names(mem.settings.layers.user_types)


def _names(setting: str) -> list[str]:
    return [part.strip() for part in setting.split(",") if part.strip()]


def unreadable(path: str) -> str | None:
    """Why the directory cannot be read as a layer (NO_WORKSPACE, or the walk up's
    ownership check), or None."""
    from memcli.core.names import CURATED_BUILTIN
    from memcli.store.workspace import unsafe_dir_problem

    if not any(os.path.isfile(os.path.join(path, n)) for n in CURATED_BUILTIN):
        return NO_WORKSPACE
    return unsafe_dir_problem(path)


NO_WORKSPACE = "it holds no memcli workspace"


def _usable(path: str, *, quiet: bool, notify: Any) -> bool:
    """Whether the directory can be read as a layer; one notice per directory if not
    (none for a missing one when `quiet`)."""
    problem = unreadable(path)
    if problem is None or (quiet and problem == NO_WORKSPACE):
        return problem is None
    if path not in _told:
        _told.add(path)
        notify(f"not reading the layer {path}: {problem}")
    return False


def search(layers: Sequence[Layer], query: str | SearchQuery, **kwargs: Any) -> list[LayerHit]:
    """Every layer's hits (Memory.search's arguments) in one list, best score first;
    of hits with the same normalised text the nearest layer's stays. At most `limit`."""
    limit = query.limit if isinstance(query, SearchQuery) else kwargs.get("limit")
    hits: list[LayerHit] = []
    for layer in layers:
        for hit in layer.memory.search(query, **kwargs):
            hits.append(LayerHit(hit.entry, hit.score, hit.components, hit.weak, layer.name))
    merged = merge(hits, [layer.name for layer in layers])
    if limit is None:
        limit = layers[0].memory.settings.search.limit
    return merged[:limit]


def merge(hits: Sequence[LayerHit], order: Sequence[str]) -> list[LayerHit]:
    """`hits` of several layers, each in its layer's search's order, interleaved by the
    score of each layer's next hit (the nearest layer first on ties); without a farther
    layer's hit whose normalised text a nearer layer's hit has."""
    near = {name: i for i, name in enumerate(order)}
    best: dict[str, LayerHit] = {}
    for hit in sorted(hits, key=lambda h: near[h.layer]):
        best.setdefault(normalize_text(hit.entry.text), hit)
    kept = set(map(id, best.values()))
    queues: dict[str, list[LayerHit]] = {name: [] for name in order}
    for hit in (h for h in hits if id(h) in kept):
        queues[hit.layer].append(hit)
    heads = dict.fromkeys(queues, 0)
    merged: list[LayerHit] = []
    while len(merged) < len(kept):
        layer = min(
            (name for name in queues if heads[name] < len(queues[name])),
            key=lambda name: (-queues[name][heads[name]].score, near[name]),
        )
        merged.append(queues[layer][heads[layer]])
        heads[layer] += 1
    return merged


def inject(layers: Sequence[Layer], request: InjectRequest, keyword_only: bool = False) -> Packed:
    """One block under one budget from the candidates of every layer (the nearest
    layer's settings choose the budget, encoding and reserved share); the chosen
    entries count as accessed in their own layer unless `touch` is False. With
    `keyword_only` each layer answers from its keyword side alone, as
    services.search.inject_keyword_only does (no model loaded, no index touched)."""
    from memcli.logic.inject import pack
    from memcli.services import inject as one

    rt = layers[0].memory.runtime
    cfg = rt.settings.inject
    budget = cfg.max_tokens if request.max_tokens is None else request.max_tokens
    counter = one.counter_for(rt, request)
    found: list[LayerCandidate] = []
    for layer in layers:
        mem = layer.memory
        if keyword_only:
            side, search, view = _keyword_side(mem)
        else:
            mem.ready()
            # every hit, as Memory.inject asks: inject has its own relevance rule
            side, search = mem.runtime, functools.partial(mem.search, floor=0.0)
            view = lambda m=mem: m._search_view(None)[1]  # noqa: E731
        for c in one.candidates(side, request, search, view, budget):
            found.append(LayerCandidate(c.entry, c.score, c.priority, layer.name))
    kept = dedupe(found, [layer.name for layer in layers])
    packed = pack(kept, budget, counter, request.fmt, cfg.reserved_share)
    one.keep_counts(rt, counter, [c.entry for c in kept], request.fmt)
    if request.touch and packed.chosen:
        for layer in layers:
            ids = [c.entry.id for c in packed.chosen if getattr(c, "layer", None) == layer.name]
            if ids:
                layer.memory.access.touch(ids)
    return packed


def _keyword_side(mem: Memory) -> tuple[Any, Any, Any]:
    """(runtime, search, view) of `mem`'s keyword side (services.search.KeywordOnly)."""
    import dataclasses

    from memcli.services.runtime import Runtime
    from memcli.services.search import KeywordOnly

    rt = mem.runtime
    search = dataclasses.replace(rt.settings.search, mode="keyword")
    settings = dataclasses.replace(rt.settings, search=search)
    side = Runtime(rt.root, settings=settings, env=rt.env, notify=rt.notify)
    only = KeywordOnly(side.store, settings)
    return side, only.search, only.view


def dedupe(found: Sequence[LayerCandidate], order: Sequence[str]) -> list[LayerCandidate]:
    """Candidates of several layers without a farther layer's entry whose normalised
    text a nearer layer has (in the given order otherwise)."""
    near = {name: i for i, name in enumerate(order)}
    owner: dict[str, int] = {}
    for c in found:
        key = normalize_text(c.entry.text)
        owner[key] = min(owner.get(key, len(order)), near[c.layer])
    seen: set[str] = set()
    kept = []
    for c in found:
        key = normalize_text(c.entry.text)
        if near[c.layer] == owner[key] and key not in seen:
            seen.add(key)
            kept.append(c)
    return kept


@dataclass(frozen=True)
class LayerDetail:
    """An entry with its access statistics (services.entries.EntryDetail) and its layer."""

    layer: str
    detail: Any

    @property
    def entry(self) -> Entry:
        return self.detail.entry

    def to_dict(self) -> dict[str, Any]:
        return {**self.detail.to_dict(), "layer": self.layer}


def holder(layers: Sequence[Layer], entry_id: str) -> Layer:
    """The nearest layer holding an entry (archived too) with this id; the workspace's
    own when none does (its error then names the id)."""
    from memcli.core.errors import NotFoundError
    from memcli.services.entries import find

    for layer in layers:
        try:
            find(layer.memory.runtime, entry_id, include_archived=True)
        except NotFoundError:
            continue
        return layer
    return layers[0]


def get(layers: Sequence[Layer], entry_id: str) -> LayerDetail:
    """The entry with this id in the nearest layer holding it, naming its layer."""
    layer = holder(layers, entry_id)
    return LayerDetail(layer.name, layer.memory.get(entry_id))


def list_entries(layers: Sequence[Layer], request: ListRequest) -> list[LayerEntry]:
    """The entries `request` selects in each layer, layer by layer (nearest first); the
    limit applies to the whole list."""
    from dataclasses import replace

    from memcli.services.entries import list_entries as one

    every = [
        LayerEntry(layer.name, e)
        for layer in layers
        for e in one(layer.memory.runtime, replace(request, limit=None))
    ]
    return every[: request.limit] if request.limit is not None else every


def target(mem: Memory, to: str | None, entry_type: str) -> Memory:
    """The Memory a write of `entry_type` goes to: the layer `to` names ("user", or
    "project" for the workspace itself), else the user layer when `[layers] user_types`
    names the type, else the workspace itself."""
    from memcli.services.tenancy import granted, refuse_user_layer
    from memcli.store.workspace import default_workspace

    if to is None:
        if entry_type not in user_types(mem) or granted(mem) is not None:
            return mem
        to = USER
    if to == HERE:
        return mem
    if to != USER:
        raise ValidationError(f"unknown layer {to!r} to write to", hint=f"use {USER!r} or {HERE!r}")
    refuse_user_layer(mem)
    path = Path(os.path.realpath(default_workspace(mem.runtime.env)))
    if path == Path(os.path.realpath(mem.root)):
        return mem
    other = Memory(path, env=mem.runtime.env, embedder_factory=mem._embedder_factory)
    obey_mode(other)  # a layer the person made read-only gets no write
    return other


def extract(
    mem: Memory, messages: Sequence[dict], *, source: str | None = None, dry_run: bool = False
) -> list[Any]:
    """Memory.extract with the statements of the types `[layers] user_types` names
    remembered in the person's own layer (compared with its entries there), the others
    in `mem`; the statements are found once (one LLM call). Without such types, or
    without a per-user workspace, it is `mem.extract` as it was."""
    from memcli.core.validate import check_meta_value
    from memcli.services import intake

    wanted = user_types(mem)
    theirs = target(mem, None, wanted[0]) if wanted else mem
    many = layered(mem) is not None  # then each decision names its layer
    if theirs is mem or not _usable(str(theirs.root), quiet=True, notify=mem.runtime.notify):
        return _named(mem.extract(messages, source=source, dry_run=dry_run), many and HERE)
    check_meta_value("--source", source)
    found = intake.statements(mem.runtime, messages)
    order = {id(c): i for i, c in enumerate(found)}
    decisions = []
    for where, name, part in (
        (theirs, USER, [c for c in found if c.type in wanted]),
        (mem, HERE, [c for c in found if c.type not in wanted]),
    ):
        if part:
            kept = dict(source=source, dry_run=dry_run, found=part)
            done = intake.extract(where.runtime, messages, **kept)
            decisions += _named(done, many and name)
    return sorted(decisions, key=lambda d: order.get(id(d.candidate), len(order)))


def _named(decisions: list[Any], layer: str | bool) -> list[Any]:
    """`decisions` naming the layer they went to (as they are when `layer` is False)."""
    from dataclasses import replace

    return [replace(d, layer=layer) for d in decisions] if layer else decisions


class Layers:
    """A workspace and the layers it reads, for Python callers (the surfaces call the
    functions above through memcli.surfaces.operations)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.layers = open_layers(memory)

    def search(self, query: str, **kwargs: Any) -> list[LayerHit]:
        """Memory.search over every layer, one ranking; each hit names its layer."""
        return search(self.layers, query, **kwargs)

    def inject(
        self,
        context: str | None = None,
        *,
        max_tokens: int | None = None,
        encoding: str | None = None,
        fmt: str = "markdown",
        types: Sequence[str] | None = None,
        touch: bool = True,
    ) -> Packed:
        """Memory.inject over every layer: one block under one budget."""
        request = InjectRequest(context, max_tokens, encoding, fmt, tuple(types or ()), touch)
        return inject(self.layers, request)

    def list(self, **kwargs: Any) -> list[LayerEntry]:
        """ListRequest's selection in every layer, each entry with its layer."""
        return list_entries(self.layers, ListRequest(**kwargs))


def layered(mem: Memory) -> list[Layer] | None:
    """The layers of `mem` when it reads more than itself, else None (the single
    workspace path stays exactly as it was)."""
    layers = open_layers(mem)
    return layers if len(layers) > 1 else None


__all__ = [
    "HERE", "USER", "Layer", "LayerDetail", "LayerEntry", "LayerHit", "Layers", "extract", "get",
    "holder", "inject", "layered", "list_entries", "merge", "open_layers", "search", "target",
    "user_types",
]
