"""Planning `compress` (docs/maintenance.md): the steps in order — duplicates merged, contradictions
superseded, old similar entries and old episode notes consolidated
(memcli.logic.consolidation), faded entries forgotten and, with --target-tokens, more
archived until the files fit (memcli.logic.forgetting). Pure: entries, their vectors and
access statistics in, a Plan out; nothing here reads or writes files. Memory.compress
shows the plan as a diff and applies it.

Provenance decides what may fade (Entry.provenance, `[forget] scope`): by default only
entries a program wrote that nobody confirmed, and episodes; a hand-kept entry leaves
only as a duplicate, as superseded, or under --target-tokens. Whether two entries are
one fact or contradict is memcli.logic.similarity's verdict; a merge never drops a
detail (`merges`). Each step leaves what it acted on to no later step, and leaves
nothing a second run would act on (idempotent, §5.6).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memcli.core.models import BY_KEY, Entry, fmt_unit, format_time, normalize_text
from memcli.core.registry import BUILTIN, Registry
from memcli.core.review import held_of
from memcli.logic.consolidation import (
    Summarize,
    consolidate,
    episodes,
    similar_pairs,
    union_keywords,
)
from memcli.logic.forgetting import fit, forget, newest_first, written_at
from memcli.logic.similarity import OVERLAP_WEIGHT, Verdict, features, judge, units
from memcli.store.access import Access
from memcli.store.changes import Action, Plan, Removal, Write
from memcli.store.config import CompressSettings


@dataclass(frozen=True)
class Context:
    """What planning needs besides the entries."""

    settings: CompressSettings
    now: dt.datetime
    new_id: Callable[[str], str]  # file -> a fresh id for an entry written there
    access: dict[str, Access]
    summarize: Summarize | None = None  # abstractive merge (an LLM: llm_summary)
    forget_scope: str = "machine"  # [forget] scope: machine | all | none
    files: Registry = BUILTIN  # the workspace's files: where a consolidated type goes


def plan_compress(
    entries: Sequence[Entry],
    vectors: np.ndarray,
    ctx: Context,
    *,
    target_tokens: int | None = None,
    tokens_after: Callable[[Plan], int] | None = None,
    entry_tokens: Callable[[Entry], int] | None = None,
) -> Plan:
    """The compress plan for the workspace's entries (vectors aligned, normalized)."""
    plan = Plan()
    order = {e.id: i for i, e in enumerate(entries)}
    row = {e.id: vectors[i] for i, e in enumerate(entries)}
    taken: set[str] = set()  # ids a step already acted on
    # pinned entries stay; so do the turns of an imported conversation: a record of what
    # was said (two turns saying "Yes!" are two turns, not a duplicate), never merged,
    # superseded or faded; and a program's rewrite of the person's entry until they
    # review it (merged away, `memcli review` would no longer show it)
    movable = [
        e
        for e in entries
        if not e.pinned and e.provenance != "conversation" and held_of(e).rewrite is None
    ]
    matrix = np.stack([row[e.id] for e in movable]) if movable else np.zeros((0, 1))
    verdicts = {
        (movable[i].id, movable[j].id): said
        for (i, j), said in judged_pairs(movable, matrix, ctx.settings).items()
    }

    cfg, now, access, new_id = ctx.settings, ctx.now, ctx.access, ctx.new_id
    _duplicates(plan, movable, verdicts, order, now, taken)
    _contradictions(plan, movable, verdicts, order, taken)
    consolidate(
        plan,
        movable,
        row,
        taken,
        cfg=cfg,
        now=now,
        access=access,
        scope=ctx.forget_scope,
        new_id=new_id,
        summarize=ctx.summarize,
    )
    episodes(
        plan,
        movable,
        row,
        taken,
        cfg=cfg,
        now=now,
        new_id=new_id,
        summarize=ctx.summarize,
        files=ctx.files,
    )
    forget(plan, movable, taken, cfg=cfg, access=access, now=now, scope=ctx.forget_scope)
    if target_tokens is not None and tokens_after is not None:
        fit(
            plan,
            movable,
            taken,
            target_tokens,
            tokens_after,
            entry_tokens,
            cfg=cfg,
            access=access,
            now=now,
        )
    return plan


def conflicting_values(a: str, b: str) -> bool:
    """Same statement with a different value: "uses Python 3.10" / "uses Python 3.12",
    "lives in Berlin" / "lives in Paris", "drinks coffee" / "doesn't drink coffee"
    (memcli.logic.similarity's structural signs, without the topic check)."""
    pair = features(a, b, 1.0)
    return pair.conflict or pair.negated


#: pairs sharing a word that more than this many entries hold are not compared for it
_COMMON_UNIT = 64


def judged_pairs(
    entries: Sequence[Entry], vectors: np.ndarray, cfg: CompressSettings
) -> dict[tuple[int, int], Verdict]:
    """The verdict (memcli.logic.similarity) on every pair that could be a duplicate or a
    contradiction: pairs close by cosine, and pairs that share enough words (an English
    model's cosine misses "Works at TechCorp" / "Works at DataSoft" and Chinese)."""
    floor = min(
        cfg.contradiction_similarity,
        (cfg.duplicate_threshold - OVERLAP_WEIGHT) / (1.0 - OVERLAP_WEIGHT),
    )
    candidates: dict[tuple[int, int], float] = {}
    if len(entries) > 1:
        for i, j in similar_pairs(vectors, max(floor, 0.0)):
            candidates[(i, j)] = -1.0
    bags = [units(e.text) for e in entries]
    postings: dict[str, list[int]] = {}
    for i, bag in enumerate(bags):
        for unit in bag:
            postings.setdefault(unit, []).append(i)
    shared: dict[tuple[int, int], int] = {}
    for members in postings.values():
        if 1 < len(members) <= _COMMON_UNIT:
            for x, i in enumerate(members):
                for j in members[x + 1 :]:
                    shared[(i, j)] = shared.get((i, j), 0) + 1
    lexical = min(cfg.contradiction_similarity, cfg.duplicate_threshold)
    for (i, j), count in shared.items():
        if 2 * count / (len(bags[i]) + len(bags[j])) >= lexical:
            candidates.setdefault((i, j), -1.0)
    verdicts: dict[tuple[int, int], Verdict] = {}
    for i, j in sorted(candidates):
        cosine = float(vectors[i] @ vectors[j])
        pair = features(entries[i].text, entries[j].text, cosine)
        said = judge(pair, cfg.duplicate_threshold, cfg.contradiction_similarity)
        if said != "distinct":
            verdicts[(i, j)] = said
    return verdicts


def _union_find(n: int) -> tuple[Callable[[int], int], Callable[[int, int], None]]:
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    return find, union


def components(n: int, pairs: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Connected groups (size ≥ 2) of the similarity graph, each sorted, in order."""
    find, union = _union_find(n)
    for i, j in pairs:
        union(i, j)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


# ---------------------------------------------------------------------- steps


def _duplicates(
    plan: Plan,
    entries: Sequence[Entry],
    verdicts: dict[tuple[str, str], Verdict],
    order: dict[str, int],
    now: dt.datetime,
    taken: set[str],
) -> None:
    """Same normalized text, or the same fact in other words (memcli.logic.similarity) → one
    entry: a person's wording over a program's, then the newest text, unless another says more
    (`merges`: a merge never drops a detail), the highest importance, the union of
    keywords, summed access counts. A group in which two entries contradict each other is
    left to the contradiction step."""
    pool = [e for e in entries if e.id not in taken]
    index = {e.id: i for i, e in enumerate(pool)}
    pairs = [
        (index[a], index[b])
        for (a, b), said in verdicts.items()
        if said == "duplicate" and a in index and b in index
    ]
    by_text: dict[str, int] = {}
    for i, entry in enumerate(pool):
        key = normalize_text(entry.text)
        if key in by_text:
            pairs.append((by_text[key], i))
        else:
            by_text[key] = i
    same = {frozenset((pool[i].id, pool[j].id)) for i, j in pairs}
    for group in components(len(pool), pairs):
        members = newest_first([pool[i] for i in group], order)
        ids = {e.id for e in members}
        if any(
            said == "contradiction" and a in ids and b in ids for (a, b), said in verdicts.items()
        ):
            continue
        for keep, rest in merges(members, lambda a, b: frozenset((a.id, b.id)) in same):
            _merge(plan, keep, rest, now)
            taken.update(e.id for e in (keep, *rest))


def _merge(plan: Plan, keep: Entry, rest: Sequence[Entry], now: dt.datetime) -> None:
    members = [keep, *rest]
    meta = dict(keep.meta)
    meta["id"] = keep.id
    meta["imp"] = fmt_unit(max(e.importance for e in members))
    if any("conf" in e.meta for e in members):
        meta["conf"] = fmt_unit(max(e.confidence for e in members))
    keywords = union_keywords(members, limit=12)
    if keywords:
        meta["kw"] = ",".join(keywords)
    earlier = [s for s in (keep.source or "").split(",") if s]
    meta["src"] = ",".join(dict.fromkeys([*earlier, *(e.id for e in rest)]))
    if any(e.confirmed for e in members):
        meta[BY_KEY] = "person"  # a person stands behind it: src= must not make it fade
    meta["updated"] = format_time(now)
    plan.writes.append(Write(replace(keep, meta=meta, id_explicit=True), keep))
    for other in rest:
        plan.removals.append(Removal(other, f"duplicate of {keep.id}", keep.id))
    plan.access_merges.append((keep.id, tuple(e.id for e in rest)))
    summary = f"merged {len(rest)} duplicate(s) into {keep.id}"
    plan.actions.append(Action("merge", summary, (keep.id, *(e.id for e in rest))))


def merges(
    members: Sequence[Entry], same: Callable[[Entry, Entry], bool]
) -> list[tuple[Entry, list[Entry]]]:
    """How a duplicate group (newest first) merges: (kept entry, entries merged into it).

    A merge never drops a detail: an entry goes into one that is the same fact (`same`,
    the verdict on that very pair: no chains) and that lacks no more of its content words
    (memcli.logic.similarity.units) than it holds words the entry lacks — a rewording
    swaps words both ways, a lost detail is one-sided, so "Prefers pytest over unittest
    for Python tests, with fixtures instead of setUp methods" absorbs "Prefers pytest for
    testing Python code", never the other way round. Kept entries are chosen a person's
    before a program's, then from the most content words down, then the newest (so of two
    rewordings the newest text stays); each other entry goes into the first kept one that
    absorbs it, else is kept itself. No kept entry can absorb another (one ranked later
    never absorbs one ranked earlier, which would have had to be absorbed first, or is a
    person's): a second compress finds nothing to merge.

    A person's wording stays: entries a person stands behind (hand-written,
    added, pinned) are kept before a program's, and never go into a program's entry — if
    the program's says more, both stay."""
    bags = {e.id: units(e.text) for e in members}
    ranked = sorted(
        range(len(members)),
        key=lambda i: (not members[i].confirmed, -len(bags[members[i].id]), i),
    )
    kept: list[tuple[Entry, list[Entry]]] = []
    for i in ranked:
        entry, mine = members[i], bags[members[i].id]
        home = next(
            (
                (keep, rest)
                for keep, rest in kept
                if same(keep, entry)
                and len(mine - bags[keep.id]) <= len(bags[keep.id] - mine)
                and (keep.confirmed or not entry.confirmed)
            ),
            None,
        )
        if home is None:
            kept.append((entry, []))
        else:
            home[1].append(entry)
    return [(keep, rest) for keep, rest in kept if rest]


def newer_of(a: Entry, b: Entry, order: dict[str, int]) -> tuple[Entry, Entry]:
    """(newer, older) of two entries that contradict. Both dated: the later date. An
    undated entry's age is unknown: a person's entry (hand-written, added or edited by a
    person) beats a program's, else the later one in the workspace wins."""
    if written_at(a) is not None and written_at(b) is not None:
        newer, older = newest_first([a, b], order)
        return newer, older
    if a.confirmed != b.confirmed:
        return (a, b) if a.confirmed else (b, a)
    return (a, b) if order[a.id] > order[b.id] else (b, a)


def _contradictions(
    plan: Plan,
    entries: Sequence[Entry],
    verdicts: dict[tuple[str, str], Verdict],
    order: dict[str, int],
    taken: set[str],
) -> None:
    """Same subject, different value (memcli.logic.similarity) → keep the newer, archive the
    older as superseded."""
    pool = {e.id: e for e in entries if e.id not in taken and e.type != "reflection"}
    superseded: dict[str, Entry] = {}
    for (a_id, b_id), said in verdicts.items():
        if said != "contradiction" or a_id not in pool or b_id not in pool:
            continue
        a, b = pool[a_id], pool[b_id]
        if a.type != b.type or a.id in superseded or b.id in superseded:
            continue
        newer, older = newer_of(a, b, order)
        superseded[older.id] = newer
    for old_id, newer in superseded.items():
        older = pool[old_id]
        plan.removals.append(Removal(older, f"superseded by {newer.id}", newer.id))
        plan.actions.append(
            Action(
                "supersede",
                f"{older.id} contradicts the newer {newer.id}: kept the newer",
                (older.id, newer.id),
            )
        )
        taken.update((older.id, newer.id))
