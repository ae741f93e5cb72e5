"""Layered memory (DESIGN §1.0): a workspace reads its own entries and those of the
layers its `[layers] read` setting names (the per-user workspace by default), ranked
in one list, each result naming its layer.

`open_layers` finds the layers of a Memory: the workspace itself ("project"), then
"user" (the per-user workspace) and paths (named by their path as written). A layer
directory must pass the walk up's ownership check (memcli.store.workspace
unsafe_dir_problem) and hold a workspace; one that does not is left out with one
notice (a per-user workspace that does not exist is left out silently: most people
have none). When the workspace is the per-user one, it is the only layer.

`search`, `inject` and `list_entries` read every layer; writes go to one layer
(`target`). Maintenance (compress, reflect) never comes here: it works on one Memory.
"""

from __future__ import annotations

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
    that can be read (memoized on `mem`)."""
    cached = getattr(mem, "_layers", None)
    if cached is not None:
        return cached
    from memcli.store.workspace import default_workspace

    rt = mem.runtime
    layers = [Layer(HERE, mem)]
    user = os.path.realpath(default_workspace(rt.env))
    seen = {os.path.realpath(mem.root)}
    if user not in seen:  # the per-user workspace reads no other layer
        for name in _names(rt.settings.layers.read):
            path = user if name == USER else os.path.realpath(mem.root / os.path.expanduser(name))
            if path in seen:
                continue
            seen.add(path)
            if _usable(path, quiet=name == USER, notify=rt.notify):
                other = Memory(
                    path, env=rt.env, embedder_factory=mem._embedder_factory, notify=rt.notify
                )
                _share_queries(mem, other)
                layers.append(Layer(name, other))
    mem._layers = layers  # type: ignore[attr-defined]
    return layers


def _share_queries(mem: Memory, other: Memory) -> None:
    """Let `other` embed queries with `mem`'s query embedder when both use the same
    model: one ONNX session per process, and a query embedded once for every layer
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


def _names(setting: str) -> list[str]:
    return [part.strip() for part in setting.split(",") if part.strip()]


def _usable(path: str, *, quiet: bool, notify: Any) -> bool:
    """Whether the directory can be read as a layer; one notice per directory if not
    (none for a missing one when `quiet`)."""
    from memcli.core.names import CURATED_BUILTIN
    from memcli.store.workspace import unsafe_dir_problem

    if any(os.path.isfile(os.path.join(path, n)) for n in CURATED_BUILTIN):
        problem = unsafe_dir_problem(path)
        if problem is None:
            return True
    elif quiet:
        return False
    else:
        problem = "it holds no memcli workspace"
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
            hits.append(LayerHit(hit.entry, hit.score, hit.components, layer.name))
    merged = merge(hits, [layer.name for layer in layers])
    if limit is None:
        limit = layers[0].memory.settings.search.limit
    return merged[:limit]


def merge(hits: Sequence[LayerHit], order: Sequence[str]) -> list[LayerHit]:
    """`hits` of several layers ranked by score (the nearest layer first on ties),
    without a farther layer's hit whose normalised text a nearer layer's hit has."""
    near = {name: i for i, name in enumerate(order)}
    best: dict[str, LayerHit] = {}
    for hit in sorted(hits, key=lambda h: near[h.layer]):
        best.setdefault(normalize_text(hit.entry.text), hit)
    kept = set(map(id, best.values()))
    return sorted((h for h in hits if id(h) in kept), key=lambda h: (-h.score, near[h.layer]))


def inject(layers: Sequence[Layer], request: InjectRequest) -> Packed:
    """One block under one budget from the candidates of every layer (the nearest
    layer's settings choose the budget, encoding and reserved share); the chosen
    entries count as accessed in their own layer unless `touch` is False."""
    from memcli.logic.inject import pack
    from memcli.services import inject as one

    rt = layers[0].memory.runtime
    cfg = rt.settings.inject
    budget = cfg.max_tokens if request.max_tokens is None else request.max_tokens
    counter = one.counter_for(rt, request)
    found: list[LayerCandidate] = []
    for layer in layers:
        mem = layer.memory
        mem.ready()
        view = lambda m=mem: m._search_view(None)[1]  # noqa: E731
        for c in one.candidates(mem.runtime, request, mem.search, view, budget):
            found.append(LayerCandidate(c.entry, c.score, c.priority, layer.name))
    kept = dedupe(found, [layer.name for layer in layers])
    packed = pack(kept, budget, counter, request.fmt, cfg.reserved_share)
    if request.touch and packed.chosen:
        for layer in layers:
            ids = [c.entry.id for c in packed.chosen if getattr(c, "layer", None) == layer.name]
            if ids:
                layer.memory.access.touch(ids)
    return packed


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


def list_entries(layers: Sequence[Layer], request: ListRequest) -> list[LayerEntry]:
    """The entries `request` selects in each layer, layer by layer (nearest first); the
    limit applies to the whole list."""
    from memcli.services.entries import list_entries as one

    every = [
        LayerEntry(layer.name, e)
        for layer in layers
        for e in one(layer.memory.runtime, _unlimited(request))
    ]
    return every[: request.limit] if request.limit is not None else every


def _unlimited(request: ListRequest) -> ListRequest:
    from dataclasses import replace

    return replace(request, limit=None)


def target(mem: Memory, to: str | None, entry_type: str) -> Memory:
    """The Memory a write of `entry_type` goes to: the layer `to` names ("user", or
    "project" for the workspace itself), else the user layer when `[layers] user_types`
    names the type, else the workspace itself."""
    from memcli.store.workspace import default_workspace

    if to is None:
        wanted = _names(mem.settings.layers.user_types)
        if entry_type not in wanted:
            return mem
        to = USER
    if to == HERE:
        return mem
    if to != USER:
        raise ValidationError(f"unknown layer {to!r} to write to", hint=f"use {USER!r} or {HERE!r}")
    path = Path(os.path.realpath(default_workspace(mem.runtime.env)))
    if path == Path(os.path.realpath(mem.root)):
        return mem
    return Memory(path, env=mem.runtime.env, embedder_factory=mem._embedder_factory)


class Layers:
    """A workspace and the layers it reads, for Python callers (the surfaces call the
    functions above through memcli.surfaces.operations).

    >>> Layers(Memory("project")).search("how do we test?")  # doctest: +SKIP
    """

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
    "HERE",
    "USER",
    "Layer",
    "LayerEntry",
    "LayerHit",
    "Layers",
    "inject",
    "layered",
    "list_entries",
    "merge",
    "open_layers",
    "search",
    "target",
]
