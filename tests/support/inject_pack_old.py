"""The inject packer as it was before pieces were counted apart (a copy of
memcli/logic/inject.py's `pack` at a1e1072, counting the whole block after each change):
tests/unit/test_inject_pack_joins.py checks the packer of today chooses, renders and
counts exactly as this one did. Not to be changed with the packer: it is the reference."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from memcli.adapters.tokens import TokenCounter
from memcli.core.credentials import withheld
from memcli.core.errors import ValidationError
from memcli.core.validate import escape_controls
from memcli.logic.inject import (
    FORMATS,
    JOIN_SLACK,
    MAX_EXACT_TRIES,
    NOTE,
    SCAN_AT_LEAST,
    SCAN_BUDGETS,
    Candidate,
    Packed,
    _section_key,
    heading,
    render_header,
    render_item,
    visible_text,
)


def render_block(chosen: Sequence[Candidate], fmt: str) -> str:
    """The whole block: sections in a stable order, entries by score within each."""
    groups: dict[str, list[Candidate]] = {}
    for candidate in chosen:
        groups.setdefault(candidate.entry.type, []).append(candidate)
    ordered = sorted(groups, key=_section_key)
    if fmt == "json":
        payload = {
            heading(t): [
                escape_controls(visible_text(c.entry.text))
                for c in sorted(groups[t], key=lambda c: -c.score)
            ]
            for t in ordered
        }
        return json.dumps(
            {"note": NOTE, "memory": payload}, ensure_ascii=False, separators=(",", ":")
        )
    parts = ["<memory>\n", f"<!-- {NOTE} -->\n" if fmt == "xml" else f"({NOTE})\n"]
    for entry_type in ordered:
        parts.append(render_header(entry_type, fmt))
        parts.extend(
            render_item(c.entry, fmt) for c in sorted(groups[entry_type], key=lambda c: -c.score)
        )
        if fmt == "xml":
            parts.append("</section>\n")
    parts.append("</memory>")
    return "".join(parts)


def _leading_costs(
    ranked: list[Candidate], counter: TokenCounter, fmt: str, scan_tokens: float
) -> list[int]:
    """Token costs of the leading candidates, until they add up to `scan_tokens` (and
    at least SCAN_AT_LEAST of them). Candidates that look like they hold a credential
    (and are not marked secret=ok) are dropped from `ranked` on the way: only the ones
    looked at are checked."""
    costs: list[int] = []
    total = 0
    step = 64
    start = 0
    while start < len(ranked):
        chunk = ranked[start : start + step]
        kept = [c for c in chunk if not withheld(c.entry.text, c.entry.meta)]
        if len(kept) < len(chunk):
            ranked[start : start + step] = kept
            chunk = kept
        start += len(chunk)
        if not chunk:
            continue
        if fmt == "json":
            texts = [
                json.dumps(escape_controls(c.entry.text), ensure_ascii=False) + "," for c in chunk
            ]
        else:
            texts = [render_item(c.entry, fmt) for c in chunk]
        counted = counter.count_many(texts)
        costs.extend(counted)
        total += sum(counted)
        if total > scan_tokens and len(costs) >= SCAN_AT_LEAST:
            break
    return costs


def pack(
    candidates: Sequence[Candidate],
    budget: int,
    counter: TokenCounter,
    fmt: str = "markdown",
    reserved_share: float = 0.3,
) -> Packed:
    """Choose entries for a block of at most `budget` tokens (see module docstring)."""
    if fmt not in FORMATS:
        raise ValidationError(f"unknown format {fmt!r}", hint="use markdown, xml or json")
    empty = counter.count(render_block([], fmt))
    if budget < empty:
        raise ValidationError(
            f"--max-tokens {budget} is smaller than an empty memory block ({empty} tokens)",
            hint=f"give at least {empty}",
        )
    ranked = sorted(candidates, key=lambda c: (not c.priority, -c.score))
    costs = _leading_costs(ranked, counter, fmt, SCAN_BUDGETS * budget)
    tail = ranked[len(costs) :]
    del ranked[len(costs) :]
    headers = _header_costs({c.entry.type for c in ranked}, counter, fmt)

    chosen: list[int] = []
    used = empty
    open_sections: set[str] = set()
    reserve_limit = empty + int(reserved_share * (budget - empty))

    def try_add(i: int, limit: int) -> bool:
        nonlocal used
        entry_type = ranked[i].entry.type
        cost = costs[i] + (0 if entry_type in open_sections else headers[entry_type])
        if used + cost > limit:
            return False
        used += cost
        open_sections.add(entry_type)
        chosen.append(i)
        return True

    for i, candidate in enumerate(ranked):
        if candidate.priority:
            try_add(i, reserve_limit)
    first_pass = set(chosen)
    for i in range(len(ranked)):  # then everything else (priority entries lead) by score
        if i not in first_pass:
            try_add(i, budget)

    # Exact count of the real text; estimates can be off by a token at joins.
    def exact(indices: list[int]) -> tuple[str, int]:
        text = render_block([ranked[i] for i in indices], fmt)
        return text, counter.count(text)

    text, tokens = exact(chosen)
    while tokens > budget and chosen:
        chosen.remove(max(chosen, key=lambda i: (not ranked[i].priority, i)))
        text, tokens = exact(chosen)
    # The exact count may leave room the estimates did not: fill it with skipped entries
    # by estimate, then count the whole block once more (dropping the last ones taken
    # until it fits) rather than once per entry tried.
    taken = set(chosen)
    sections = {ranked[i].entry.type for i in chosen}
    estimate = tokens
    filled: list[int] = []
    for i in range(len(ranked)):
        if estimate >= budget:
            break
        entry_type = ranked[i].entry.type
        extra = costs[i] + (0 if entry_type in sections else headers[entry_type])
        if i not in taken and estimate + extra <= budget:
            filled.append(i)
            sections.add(entry_type)
            estimate += extra
    if filled:
        chosen.extend(filled)
        taken.update(filled)
        text, tokens = exact(chosen)
        while tokens > budget and filled:
            taken.discard(filled[-1])
            chosen.remove(filled.pop())
            text, tokens = exact(chosen)
    # Estimates can also overshoot (a heading and an item share a token at the join):
    # try a few more entries that fit the exact room left, counting each exactly.
    tries = 0
    for i in range(len(ranked)):
        if tries >= MAX_EXACT_TRIES or budget - tokens <= 0:
            break
        if i in taken or costs[i] > budget - tokens:
            continue
        tries += 1
        new_text, new_tokens = exact([*chosen, i])
        if new_tokens <= budget:
            chosen.append(i)
            taken.add(i)
            text, tokens = new_text, new_tokens
    if not chosen:  # every try above was a near-fit: never an empty block when one fits
        costs.extend(_leading_costs(tail, counter, fmt, float("inf")))  # the unscanned too
        ranked.extend(tail)
        headers = _header_costs({c.entry.type for c in ranked}, counter, fmt)
        estimates = [costs[i] + headers[ranked[i].entry.type] for i in range(len(ranked))]
        chosen = _fits_alone(ranked, estimates, budget, empty, exact)
        if chosen:
            text, tokens = exact(chosen)
    picked = [
        ranked[i] for i in sorted(chosen, key=lambda i: (not ranked[i].priority, -ranked[i].score))
    ]
    return Packed(picked, text, tokens, budget, counter.name, counter.exact, len(ranked))


def _header_costs(types: set[str], counter: TokenCounter, fmt: str) -> dict[str, int]:
    """Estimated tokens a section adds besides its entries (heading, closing tag)."""
    if fmt == "json":
        return {
            t: counter.count(json.dumps(heading(t), ensure_ascii=False) + ":[],") for t in types
        }
    closing = 1 if fmt == "xml" else 0
    return {t: counter.count(render_header(t, fmt)) + closing for t in types}


def _fits_alone(
    ranked: list[Candidate],
    estimates: list[int],
    budget: int,
    empty: int,
    exact: Callable[[list[int]], tuple[str, int]],
) -> list[int]:
    """Greedy fallback for a block left empty: candidates by estimated cost (smallest
    first, then rank), each counted exactly, taken while the block stays within budget.
    Estimates of one entry are off by a few tokens at the joins (JSON merges quotes and
    brackets), so those up to JOIN_SLACK over the room are still counted."""
    chosen: list[int] = []
    room = budget - empty
    tries = 0
    for i in sorted(range(len(ranked)), key=lambda i: (estimates[i], i)):
        if estimates[i] > room + JOIN_SLACK or (chosen and tries >= MAX_EXACT_TRIES):
            break
        tries += 1 if chosen else 0
        _, tokens = exact([*chosen, i])
        if tokens <= budget:
            chosen.append(i)
            room = budget - tokens
    return chosen
