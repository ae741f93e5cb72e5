"""Consolidation (many → one, docs/maintenance.md): groups of old, similar entries
that may fade, and old episode notes, become one entry — extractive (the most central
entry plus the distinct details of the others) or abstractive (an LLM's merge). The
groups are stars around one central entry (no chains of loosely related entries), taken
until none is left, so a second compress finds nothing new. Pure: entries and their
vectors in, additions to a Plan out.
"""

from __future__ import annotations

import datetime as dt
import heapq
import re
from collections.abc import Callable, Sequence

import numpy as np

from memcli.core.models import BY_KEY, Entry, fmt_unit, format_time
from memcli.core.registry import BUILTIN, Registry
from memcli.index.tokenize import tokenize
from memcli.logic.forgetting import age_days, episode_day, unconfirmed, written_at
from memcli.store.access import Access
from memcli.store.changes import Action, Plan, Removal, Write
from memcli.store.config import CompressSettings

#: an abstractive merge of entries into one text (an LLM: llm_summary)
Summarize = Callable[[list[Entry]], str]


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


def union_keywords(entries: Sequence[Entry], limit: int = 8) -> list[str]:
    result: list[str] = []
    for entry in entries:
        for kw in entry.keywords:
            if kw.casefold() not in (r.casefold() for r in result):
                result.append(kw)
    return result[:limit]


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
    nested points (many facts → one)."""
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


def consolidate(
    plan: Plan,
    entries: Sequence[Entry],
    row: dict[str, np.ndarray],
    taken: set[str],
    *,
    cfg: CompressSettings,
    now: dt.datetime,
    access: dict[str, Access],
    scope: str,
    new_id: Callable[[str], str],
    summarize: Summarize | None,
) -> None:
    """Groups of old, rarely accessed, similar single-line entries of one type that may
    fade (by default: a program wrote them, nobody confirmed them) become one entry
    (extractive, or abstractive through `summarize`)."""
    pool = [
        e
        for e in entries
        if e.id not in taken
        and unconfirmed(e, scope)
        and e.type not in ("reflection", "correction", "episode")
        and "\n" not in e.text
        and (age_days(e, now) or 0.0) >= cfg.consolidate_age_days
        and written_at(e) is not None
        and access.get(e.id, Access()).count <= cfg.consolidate_max_access
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
            text = summarize(members) if summarize else extractive_summary(members, matrix[group])
            write_merged(plan, members, text, entry_type, file, "consolidated", new_id, now)
            taken.update(e.id for e in members)


def write_merged(
    plan: Plan,
    members: Sequence[Entry],
    text: str,
    entry_type: str,
    file: str,
    reason: str,
    new_id: Callable[[str], str],
    now: dt.datetime,
) -> Entry:
    """A new entry (by=compress, src= its members) in place of `members`, archived."""
    entry_id = new_id(file)
    meta = {
        "id": entry_id,
        "imp": fmt_unit(max(e.importance for e in members)),
        "created": format_time(now),
    }
    if any("conf" in e.meta for e in members):
        meta["conf"] = fmt_unit(min(e.confidence for e in members))
    keywords = union_keywords(members)
    if keywords:
        meta["kw"] = ",".join(keywords)
    meta["src"] = _sources(members)
    meta[BY_KEY] = "compress"
    entry = Entry(entry_id, text, entry_type, file, 0, meta, True)
    plan.writes.append(Write(entry))
    for member in members:
        plan.removals.append(Removal(member, f"{reason} into {entry_id}", entry_id))
    plan.access_merges.append((entry_id, tuple(e.id for e in members)))
    plan.actions.append(
        Action(
            "consolidate",
            f"{reason} {len(members)} {entry_type} entries into {entry_id}",
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


def episodes(
    plan: Plan,
    entries: Sequence[Entry],
    row: dict[str, np.ndarray],
    taken: set[str],
    *,
    cfg: CompressSettings,
    now: dt.datetime,
    new_id: Callable[[str], str],
    summarize: Summarize | None,
    files: Registry = BUILTIN,
) -> None:
    """Notes of episode files older than episode_age_days that recur (similar notes of a
    day, merged) become one entry of a curated file (`files`: the workspace's registry
    says which), dated by their day. A note
    that does not recur ("15:05 Lunch with the team") is no lasting fact: it stays in its
    episode file, where it may fade."""
    days: dict[dt.date, list[Entry]] = {}
    for entry in entries:
        day = episode_day(entry)
        if day is None or entry.id in taken:
            continue
        age = (now.date() - day).days
        if age >= cfg.episode_age_days:
            days.setdefault(day, []).append(entry)
    for day, notes in sorted(days.items()):
        matrix = np.stack([row[e.id] for e in notes])
        for group in sorted(star_groups(matrix, cfg.consolidate_similarity, 2), key=min):
            members = [notes[i] for i in group]
            body = summarize(members) if summarize else extractive_summary(members, matrix[group])
            entry_type = episode_type(body)
            text = f"{day.isoformat()}: {body}"
            target = files.file_for_type(entry_type)
            reason = "episode consolidated"
            write_merged(plan, members, text, entry_type, target, reason, new_id, now)
            taken.update(e.id for e in members)


SUMMARY_SYSTEM = (
    "You merge several memories about one person into one concise memory that keeps "
    'every distinct detail. Answer with a JSON object {"text": str}.'
)


def llm_summary(llm, members: Sequence[Entry]) -> str:  # noqa: ANN001 - LLMClient
    """An abstractive merge of `members` (the `summarize` of a compress with an LLM); LLMError on an
    answer of the wrong shape."""
    from memcli.adapters.llm import LLMError

    listing = "\n".join(f"- {' '.join(e.text.split())}" for e in members)
    answer = llm.chat_json(SUMMARY_SYSTEM, listing)
    text = answer.get("text") if isinstance(answer, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise LLMError('the LLM answer has no "text"; nothing was changed')
    return " ".join(text.split())
