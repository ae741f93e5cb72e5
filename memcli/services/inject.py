"""The inject block: a token-budgeted memory block for a prompt (docs/search.md, Inject).

This module gathers the candidates (through search for a context, every entry without
one) and hands them to the pure choice and packing of memcli.logic.inject. Search is
reached through the two callables the caller passes (the Memory facade's search and its
view of the index), so the search service can move without touching this one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from memcli.core.filters import filter_entries
from memcli.core.models import CONVERSATIONS_DIR
from memcli.core.requests import InjectRequest
from memcli.core.validate import MAX_QUERY_CHARS, check_type, clean_context
from memcli.services.entries import all_entries
from memcli.services.runtime import Runtime

if TYPE_CHECKING:
    from memcli.adapters.tokens import TokenCounter
    from memcli.core.models import Entry
    from memcli.logic.inject import Candidate, Packed
    from memcli.logic.search import Hit


class View(Protocol):
    """The entries not archived, as the search index holds them."""

    by_confidence: list[Entry]  # most confident first (file order on ties)
    pinned: list[Entry]  # of those, the ones a person pinned

    def of_types(self, types: frozenset[str]) -> list[Entry]:
        """by_confidence's entries of `types` (made only those where it can)."""
        ...


#: search(query, types=..., limit=..., touch=False) -> hits, best first
Search = Callable[..., "list[Hit]"]


def inject(rt: Runtime, request: InjectRequest, search: Search, view: Callable[[], View]) -> Packed:
    """A memory block of at most `max_tokens` tokens (see Memory.inject); entries that
    make it into the block count as accessed unless `touch` is False."""
    packed = pack_block(rt, request, search, view)
    if request.touch and packed.chosen:
        rt.access.touch(c.entry.id for c in packed.chosen)
    return packed


def pack_block(
    rt: Runtime, request: InjectRequest, search: Search, view: Callable[[], View]
) -> Packed:
    """The block, without counting accesses."""
    from memcli.logic.inject import pack

    cfg = rt.settings.inject
    budget = cfg.max_tokens if request.max_tokens is None else request.max_tokens
    if request.context and rt.settings.search.mode != "keyword":
        rt.index_manager.start_query_embedder()  # its session loads while tiktoken does
    counter = counter_for(rt, request)
    found = candidates(rt, request, search, view, budget)
    packed = pack(found, budget, counter, request.fmt, cfg.reserved_share)
    if getattr(counter, "unsaved", False) and not rt.long_lived_process:
        entries = [c.entry for c in found]
        if request.context:  # the workspace's entries too (without one: they are `found`)
            entries += view().by_confidence
        keep_counts(rt, counter, entries, request.fmt)
    return packed


def keep_counts(rt: Runtime, counter: TokenCounter, entries: list[Entry], fmt: str) -> None:
    """When tiktoken counted a text whose count was not kept (memcli.adapters.token_memo),
    count the text of each entry (a block's candidates, the workspace's entries) too and
    keep the counts, so the next cold inject does not load tiktoken: once per new or
    changed entry; the block's frame (wrapper, headings) too. No digest of an entry that
    looks like it holds a credential (memcli.core.credentials) is kept."""
    from memcli.adapters.tokens import KnownCounter
    from memcli.core.credentials import withheld
    from memcli.logic.inject import frame_texts, item_texts

    if rt.long_lived_process:  # a watcher keeps them when requests pause
        return
    if isinstance(counter, KnownCounter) and counter.unsaved:
        unique = list({id(e): e for e in entries}.values())
        texts = item_texts(unique, fmt) + frame_texts({e.type for e in unique}, fmt)
        new = [i for i, text in enumerate(texts) if not counter.knows(text)]
        secret = {i for i in new if i < len(unique) and withheld(unique[i].text, unique[i].meta)}
        counter.count_many([texts[i] for i in new if i not in secret])  # the others were
        counter.save()


def counter_for(rt: Runtime, request: InjectRequest) -> TokenCounter:
    """The token counter of the request's encoding (else the workspace's)."""
    from memcli.adapters.tokens import get_counter

    return get_counter(request.encoding or rt.settings.inject.encoding)


def candidates(
    rt: Runtime,
    request: InjectRequest,
    search: Search,
    view: Callable[[], View],
    budget: int,
) -> list[Candidate]:
    """The entries of one workspace that may go into a block of `budget` tokens, scored
    (memcli.logic.inject context_candidates with a context, recall_candidates without)."""
    from memcli.index import coverage
    from memcli.logic.inject_choice import (
        PROFILE_TYPES,
        context_candidates,
        recall_candidates,
        relevant_hit,
    )
    from memcli.logic.prompts import PART_LIMIT, SPLIT_CHARS, merge_hits, prompt_parts
    from memcli.logic.search import check_mode, ranking_time

    cfg = rt.settings.inject
    now = ranking_time()
    types = request.types
    context = request.context
    if context is not None and len(context) > MAX_QUERY_CHARS:
        rt.notify(
            f"the context is {len(context):,} characters long: its last "
            f"{MAX_QUERY_CHARS:,} are used"
        )
    capped = context is not None and len(context) > MAX_QUERY_CHARS
    context = None if context is None else clean_context(context)
    if context is not None and context.strip():
        mode = check_mode(rt.settings.search.mode)
        # the whole context, then each thing its prompt names (memcli.logic.prompts); a
        # context cut to the cap is split from its newest end (its start is cut mid-way)
        said = context[-SPLIT_CHARS:].partition(" ")[2] if capped else context
        parts = prompt_parts(said, cfg.prompt_parts)
        if parts and mode != "keyword":
            prefetch(rt, [context, *parts] if len(context) <= SPLIT_CHARS else parts)
        searches = [(context, search(context, types=types, limit=10_000, touch=False))]
        searches += [
            (part, search(part, types=types, limit=PART_LIMIT, touch=False)) for part in parts
        ]
        reads = functools.partial(coverage.reads, rt.settings.index.model)
        hits, relevant = merge_hits(
            searches, lambda hit, query: relevant_hit(hit, query, mode, cfg, reads)
        )
        found = view()
        return context_candidates(
            hits,
            found.of_types(PROFILE_TYPES),
            found.pinned,
            cfg,
            mode=mode,
            wanted=frozenset(check_type(t) for t in types or []),
            now=now,
            budget=budget,
            relevant=lambda hit: hit.entry.id in relevant,
        )
    entries = filter_entries(all_entries(rt), types=types)
    # imported conversations are records to search, not what a session starts with
    entries = [e for e in entries if not e.file.startswith(CONVERSATIONS_DIR + "/")]
    return recall_candidates(entries, now, rt.settings.search)


def prefetch(rt: Runtime, parts: list[str]) -> None:
    """Embed a prompt and its parts in one batch for the searches that follow (the ONNX
    query path: one pass over the model's weights instead of one per text; a long
    context is embedded alone, its padding would cost each part)."""
    from memcli.index.sync import query_text

    index = rt.index_manager
    fetch = getattr(index.query_embedder, "prefetch", None)
    if fetch is not None:
        fetch([query_text(p, index.glossed) for p in parts])  # as the searches embed them
