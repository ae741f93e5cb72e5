"""Planning `compress` (DESIGN §5): duplicates, contradictions, consolidation of old
similar entries and of old episode notes, Ebbinghaus forgetting (seed 002), and a token
target. Pure: entries, their vectors and access statistics in, a Plan out; nothing here
reads or writes files. Memory.compress shows the plan as a diff and applies it.

Provenance decides what may fade (Entry.provenance, `[forget] scope`): by default only
entries a program wrote that nobody confirmed, and episodes; a hand-kept entry leaves
only as a duplicate, as superseded, or under --target-tokens. Whether two entries are
one fact or contradict is memcli.logic.similarity's verdict.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memcli.core.models import (
    BY_KEY,
    EPISODES_DIR,
    Entry,
    file_for_type,
    format_time,
    normalize_text,
)
from memcli.index.tokenize import tokenize
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
    summarize: Callable[[list[Entry]], str] | None = None  # abstractive merge (an LLM)
    forget_scope: str = "machine"  # [forget] scope: machine | all | none


# ---------------------------------------------------------------------- pieces


def retention(
    entry: Entry, access: Access | None, now: dt.datetime, cfg: CompressSettings
) -> float:
    """Seed 002: base^(Δt_hours / (24 · strength^access_count)) · (0.5 + 0.5·importance),
    Δt from the last access, else the last update or creation (0 when undated).
    Episode notes fade `episode_decay` times faster."""
    moment = _last_touch(entry, access)
    hours = 0.0 if moment is None else max(0.0, (now - moment).total_seconds() / 3600.0)
    if entry.type == "episode":
        hours *= cfg.episode_decay
    count = access.count if access else 0
    exponent = hours / (24.0 * cfg.forget_strength**count)
    return cfg.forget_base**exponent * (0.5 + 0.5 * entry.importance)


def _last_touch(entry: Entry, access: Access | None) -> dt.datetime | None:
    if access and access.last:
        try:
            return dt.datetime.fromisoformat(access.last.replace("Z", "+00:00"))
        except ValueError:
            pass
    try:
        return entry.updated or entry.created
    except ValueError:
        return None


def _timestamp(entry: Entry) -> dt.datetime | None:
    try:
        return entry.updated or entry.created
    except ValueError:
        return None


def newest_first(entries: Sequence[Entry], order: dict[str, int]) -> list[Entry]:
    """Newest (updated, else created) first; undated count as oldest; later in the
    workspace wins ties."""
    floor = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(entries, key=lambda e: (_timestamp(e) or floor, order[e.id]), reverse=True)


def conflicting_values(a: str, b: str) -> bool:
    """Same statement with a different value: "uses Python 3.10" / "uses Python 3.12",
    "lives in Berlin" / "lives in Paris", "drinks coffee" / "doesn't drink coffee"
    (memcli.logic.similarity's structural signs, without the topic check)."""
    pair = features(a, b, 1.0)
    return pair.conflict or pair.negated


def may_fade(entry: Entry, scope: str) -> bool:
    """Whether age may archive or consolidate this entry under `[forget] scope`: never
    pinned entries, reflections or importance ≥ 0.9; with "machine" only entries a
    program wrote that nobody confirmed, and episodes; "all" every other; "none" none."""
    if scope == "none" or _exempt(entry):
        return False
    return scope == "all" or entry.provenance in ("machine", "episode")


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


def similar_pairs(
    vectors: np.ndarray, threshold: float, block: int = 1024
) -> list[tuple[int, int]]:
    """(i, j), i < j, whose cosine similarity (normalized vectors) is ≥ threshold."""
    pairs: list[tuple[int, int]] = []
    n = len(vectors)
    for start in range(0, n, block):
        sims = vectors[start : start + block] @ vectors.T
        rows, cols = np.nonzero(sims >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if i < c:
                pairs.append((i, c))
    return pairs


def components(n: int, pairs: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Connected groups (size ≥ 2) of the similarity graph, each sorted, in order."""
    find, union = _union_find(n)
    for i, j in pairs:
        union(i, j)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def _union_keywords(entries: Sequence[Entry], limit: int = 8) -> list[str]:
    result: list[str] = []
    for entry in entries:
        for kw in entry.keywords:
            if kw.casefold() not in (r.casefold() for r in result):
                result.append(kw)
    return result[:limit]


def _fmt(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _sources(entries: Sequence[Entry]) -> str:
    ids: list[str] = []
    for entry in entries:
        if entry.id not in ids:
            ids.append(entry.id)
    return ",".join(ids)


def central(members: Sequence[Entry], vectors: np.ndarray) -> int:
    """Index (into members) of the entry most similar to the others."""
    sims = vectors @ vectors.T
    return int(np.argmax(sims.sum(axis=1)))


def extractive_summary(members: Sequence[Entry], vectors: np.ndarray) -> str:
    """The most central entry, then the other entries that add words it lacks, as
    nested points (seed 004: many facts → one)."""
    first = central(members, vectors)
    head = members[first]
    seen = set(tokenize(head.text))
    order = np.argsort(-(vectors @ vectors[first]))
    details = []
    for index in order.tolist():
        if index == first:
            continue
        words = set(tokenize(members[index].text))
        if len(words - seen) >= 2:
            details.append(" ".join(members[index].text.split()))
            seen |= words
    return "\n".join([" ".join(head.text.split()), *(f"- {d}" for d in details)])


# ---------------------------------------------------------------------- planning


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
    movable = [e for e in entries if not e.pinned]
    matrix = np.stack([row[e.id] for e in movable]) if movable else np.zeros((0, 1))
    verdicts = {
        (movable[i].id, movable[j].id): said
        for (i, j), said in judged_pairs(movable, matrix, ctx.settings).items()
    }

    _duplicates(plan, movable, verdicts, order, ctx, taken)
    _contradictions(plan, movable, verdicts, order, taken)
    _consolidate(plan, movable, row, ctx, taken)
    _episodes(plan, movable, row, ctx, taken)
    _forget(plan, movable, ctx, taken)
    if target_tokens is not None and tokens_after is not None:
        _fit(plan, movable, ctx, taken, target_tokens, tokens_after, entry_tokens)
    return plan


def _duplicates(
    plan: Plan,
    entries: Sequence[Entry],
    verdicts: dict[tuple[str, str], Verdict],
    order: dict[str, int],
    ctx: Context,
    taken: set[str],
) -> None:
    """Same normalized text, or the same fact in other words (memcli.logic.similarity) → one
    entry: the newest text (a person's wording over a program's) unless an older one says
    more (`keeper`: a merge never drops a detail), the highest importance,
    the union of keywords, summed access counts. A group in which two entries contradict
    each other is left to the contradiction step."""
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
    now = format_time(ctx.now)
    for group in components(len(pool), pairs):
        members = newest_first([pool[i] for i in group], order)
        ids = {e.id for e in members}
        if any(
            said == "contradiction" and a in ids and b in ids for (a, b), said in verdicts.items()
        ):
            continue
        keep = keeper(members, lambda a, b: frozenset((a.id, b.id)) in same)
        if keep is None:
            continue
        confirmed = [e for e in members if e.confirmed]
        rest = [e for e in members if e.id != keep.id]
        meta = dict(keep.meta)
        meta["id"] = keep.id
        meta["imp"] = _fmt(max(e.importance for e in members))
        if any("conf" in e.meta for e in members):
            meta["conf"] = _fmt(max(e.confidence for e in members))
        keywords = _union_keywords(members, limit=12)
        if keywords:
            meta["kw"] = ",".join(keywords)
        earlier = [s for s in (keep.source or "").split(",") if s]
        meta["src"] = ",".join(dict.fromkeys([*earlier, *(e.id for e in rest)]))
        if confirmed:
            meta[BY_KEY] = "person"  # a person stands behind it: src= must not make it fade
        meta["updated"] = now
        plan.writes.append(Write(replace(keep, meta=meta, id_explicit=True), keep))
        for other in rest:
            plan.removals.append(Removal(other, f"duplicate of {keep.id}", keep.id))
        plan.access_merges.append((keep.id, tuple(e.id for e in rest)))
        ids_in_order = (keep.id, *(e.id for e in rest))
        plan.actions.append(
            Action("merge", f"merged {len(rest)} duplicate(s) into {keep.id}", ids_in_order)
        )
        taken.update(ids)


def keeper(members: Sequence[Entry], same: Callable[[Entry, Entry], bool]) -> Entry | None:
    """The entry of a duplicate group (newest first) whose text the merge keeps: the
    newest (a person's before a program's) that is the same fact as every other member
    (`same`: no chains, "Prefers pytest with fixtures" ~ "Prefers pytest" ~ "Prefers
    pytest with parametrize" is no group) and loses nothing one says: it lacks no more of
    a member's content words (memcli.logic.similarity.units) than it holds words that
    member lacks. A rewording swaps words on both sides; a dropped detail is one-sided
    ("Prefers pytest over unittest, with fixtures" is not replaced by "Prefers pytest for
    Python tests"). None when no member will do: the group stays apart, run after run."""
    ordered = [e for e in members if e.confirmed] + [e for e in members if not e.confirmed]
    bags = {e.id: units(e.text) for e in members}
    for keep in ordered:
        mine = bags[keep.id]
        if all(
            same(keep, other) and len(bags[other.id] - mine) <= len(mine - bags[other.id])
            for other in members
            if other.id != keep.id
        ):
            return keep
    return None


def newer_of(a: Entry, b: Entry, order: dict[str, int]) -> tuple[Entry, Entry]:
    """(newer, older) of two entries that contradict. Both dated: the later date. An
    undated entry's age is unknown: a person's entry (hand-written, added or edited by a
    person) beats a program's, else the later one in the workspace wins."""
    if _timestamp(a) is not None and _timestamp(b) is not None:
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


def _age_days(entry: Entry, now: dt.datetime) -> float | None:
    moment = _timestamp(entry)
    return None if moment is None else (now - moment).total_seconds() / 86400.0


def _consolidate(
    plan: Plan,
    entries: Sequence[Entry],
    row: dict[str, np.ndarray],
    ctx: Context,
    taken: set[str],
) -> None:
    """Groups of old, rarely accessed, similar single-line entries of one type that may
    fade (by default: a program wrote them, nobody confirmed them) become one entry
    (extractive, or abstractive through ctx.summarize)."""
    cfg = ctx.settings
    pool = [
        e
        for e in entries
        if e.id not in taken
        and may_fade(e, ctx.forget_scope)
        and e.type not in ("reflection", "correction", "episode")
        and "\n" not in e.text
        and (_age_days(e, ctx.now) or 0.0) >= cfg.consolidate_age_days
        and _timestamp(e) is not None
        and ctx.access.get(e.id, Access()).count <= cfg.consolidate_max_access
    ]
    by_type: dict[tuple[str, str], list[Entry]] = {}
    for entry in pool:
        by_type.setdefault((entry.file, entry.type), []).append(entry)
    for (file, entry_type), same in by_type.items():
        if len(same) < cfg.consolidate_min_size:
            continue
        matrix = np.stack([row[e.id] for e in same])
        for group in star_groups(matrix, cfg.consolidate_similarity, cfg.consolidate_min_size):
            members = [same[i] for i in group]
            text = (
                ctx.summarize(members)
                if ctx.summarize
                else extractive_summary(members, matrix[group])
            )
            _write_merged(plan, members, text, entry_type, file, ctx, "consolidated")
            taken.update(e.id for e in members)


def star_groups(
    vectors: np.ndarray, threshold: float, min_size: int, max_size: int = 10
) -> list[list[int]]:
    """Groups of ≥ min_size rows that are all similar (≥ threshold) to one central row,
    taken until none is left: no chains of loosely related entries, and what remains
    holds no further group (so a second run finds nothing new)."""
    n = len(vectors)
    neighbours: list[set[int]] = [set() for _ in range(n)]
    for i, j in similar_pairs(vectors, threshold):
        neighbours[i].add(j)
        neighbours[j].add(i)
    alive = [True] * n
    heap = [(-(len(neighbours[i]) + 1), i) for i in range(n) if len(neighbours[i]) + 1 >= min_size]
    heapq.heapify(heap)
    groups: list[list[int]] = []
    while heap:
        size, center = heapq.heappop(heap)
        if not alive[center]:
            continue
        near = [k for k in neighbours[center] if alive[k]]
        if len(near) + 1 != -size:  # stale: members left with other groups
            if len(near) + 1 >= min_size:
                heapq.heappush(heap, (-(len(near) + 1), center))
            continue
        sims = vectors[near] @ vectors[center] if near else np.zeros(0)
        chosen = [near[int(k)] for k in np.argsort(-sims, kind="stable")[: max_size - 1]]
        group = sorted([center, *chosen])
        groups.append(group)
        for k in group:
            alive[k] = False
    return groups


def _write_merged(
    plan: Plan,
    members: Sequence[Entry],
    text: str,
    entry_type: str,
    file: str,
    ctx: Context,
    reason: str,
) -> Entry:
    new_id = ctx.new_id(file)
    meta = {
        "id": new_id,
        "imp": _fmt(max(e.importance for e in members)),
        "created": format_time(ctx.now),
    }
    if any("conf" in e.meta for e in members):
        meta["conf"] = _fmt(min(e.confidence for e in members))
    keywords = _union_keywords(members)
    if keywords:
        meta["kw"] = ",".join(keywords)
    meta["src"] = _sources(members)
    meta[BY_KEY] = "compress"
    entry = Entry(new_id, text, entry_type, file, 0, meta, True)
    plan.writes.append(Write(entry))
    for member in members:
        plan.removals.append(Removal(member, f"{reason} into {new_id}", new_id))
    plan.access_merges.append((new_id, tuple(e.id for e in members)))
    plan.actions.append(
        Action(
            "consolidate",
            f"{reason} {len(members)} {entry_type} entries into {new_id}",
            tuple(e.id for e in members),
        )
    )
    return entry


_LESSON = re.compile(
    r"\b(learned|lesson|worked|failed|broke|mistake|next time|should have)\b|教训|失败|下次", re.I
)
_SKILL = re.compile(r"`[^`]+`|\b(how to|run|command|use `)\b|命令", re.I)


def episode_type(text: str) -> str:
    """Where an episode note goes once consolidated: a lesson, a skill or a fact."""
    if _LESSON.search(text):
        return "lesson"
    if _SKILL.search(text):
        return "skill"
    return "fact"


def _episode_day(entry: Entry) -> dt.date | None:
    name = entry.file.removeprefix(f"{EPISODES_DIR}/").removesuffix(".md")
    try:
        return dt.date.fromisoformat(name)
    except ValueError:
        return None


def _episodes(
    plan: Plan,
    entries: Sequence[Entry],
    row: dict[str, np.ndarray],
    ctx: Context,
    taken: set[str],
) -> None:
    """Notes of episode files older than episode_age_days become memory.md /
    learnings.md entries (similar notes of a day merged), dated by their day."""
    cfg = ctx.settings
    days: dict[dt.date, list[Entry]] = {}
    for entry in entries:
        day = _episode_day(entry) if entry.file.startswith(f"{EPISODES_DIR}/") else None
        if day is None or entry.id in taken:
            continue
        age = (ctx.now.date() - day).days
        if age >= cfg.episode_age_days:
            days.setdefault(day, []).append(entry)
    for day, notes in sorted(days.items()):
        matrix = np.stack([row[e.id] for e in notes])
        grouped = star_groups(matrix, cfg.consolidate_similarity, 2)
        in_group = {i for g in grouped for i in g}
        groups = grouped + [[i] for i in range(len(notes)) if i not in in_group]
        for group in sorted(groups, key=min):
            members = [notes[i] for i in group]
            if ctx.summarize and len(members) > 1:
                body = ctx.summarize(members)
            elif len(members) > 1:
                body = extractive_summary(members, matrix[group])
            else:
                body = " ".join(members[0].text.split())
            entry_type = episode_type(body)
            text = f"{day.isoformat()}: {body}"
            target = file_for_type(entry_type)
            _write_merged(plan, members, text, entry_type, target, ctx, "episode consolidated")
            taken.update(e.id for e in members)


def _exempt(entry: Entry) -> bool:
    return entry.pinned or entry.type == "reflection" or entry.importance >= 0.9


def _forget(plan: Plan, entries: Sequence[Entry], ctx: Context, taken: set[str]) -> None:
    """Archive entries that may fade (may_fade) whose retention fell below the threshold
    (seed 002)."""
    cfg = ctx.settings
    for entry in entries:
        if entry.id in taken or not may_fade(entry, ctx.forget_scope):
            continue
        value = retention(entry, ctx.access.get(entry.id), ctx.now, cfg)
        if value < cfg.forget_threshold:
            plan.removals.append(Removal(entry, f"faded (retention {value:.3f})"))
            plan.actions.append(
                Action("forget", f"{entry.id} faded: retention {value:.3f}", (entry.id,))
            )
            taken.add(entry.id)


def _fit(
    plan: Plan,
    entries: Sequence[Entry],
    ctx: Context,
    taken: set[str],
    target: int,
    tokens_after: Callable[[Plan], int],
    entry_tokens: Callable[[Entry], int] | None,
) -> None:
    """Archive more entries, those a program wrote before a person's, lowest retention
    first, until memory.md + learnings.md fit in `target` tokens (exempt entries stay)."""
    total = tokens_after(plan)
    candidates = sorted(
        (
            e
            for e in entries
            if e.id not in taken and not _exempt(e) and not e.file.startswith(f"{EPISODES_DIR}/")
        ),
        key=lambda e: (e.confirmed, retention(e, ctx.access.get(e.id), ctx.now, ctx.settings)),
    )
    index = 0
    while total > target and index < len(candidates):
        # archive by the estimated size, then check the exact size of the files
        while total > target and index < len(candidates):
            entry = candidates[index]
            index += 1
            value = retention(entry, ctx.access.get(entry.id), ctx.now, ctx.settings)
            plan.removals.append(
                Removal(entry, f"over the token target {target} (retention {value:.3f})")
            )
            plan.actions.append(
                Action("fit", f"{entry.id} archived to fit {target} tokens", (entry.id,))
            )
            taken.add(entry.id)
            total -= entry_tokens(entry) if entry_tokens else math.inf
        total = tokens_after(plan)
    if total > target:
        plan.notes.append(
            f"memory.md + learnings.md are {total} tokens after the plan, above the target "
            f"{target}: the rest is pinned, a reflection or has importance ≥ 0.9"
        )
    else:
        plan.notes.append(f"memory.md + learnings.md: {total} tokens after the plan (≤ {target})")


SUMMARY_SYSTEM = (
    "You merge several memories about one person into one concise memory that keeps "
    'every distinct detail. Answer with a JSON object {"text": str}.'
)


def llm_summary(llm, members: Sequence[Entry]) -> str:  # noqa: ANN001 - LLMClient
    """An abstractive merge of `members` (Context.summarize with an LLM); LLMError on an
    answer of the wrong shape."""
    from memcli.adapters.llm import LLMError

    listing = "\n".join(f"- {' '.join(e.text.split())}" for e in members)
    answer = llm.chat_json(SUMMARY_SYSTEM, listing)
    text = answer.get("text") if isinstance(answer, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise LLMError('the LLM answer has no "text"; nothing was changed')
    return " ".join(text.split())
