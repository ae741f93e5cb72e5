"""Planning `reflect` (docs/maintenance.md): when enough important entries
accumulated since the last reflection, find their themes and write insights citing
their evidence. Offline an insight states the pattern across a cohesive cluster of
entries (what they share and what each adds); with an LLM, Generative-Agents style
(focal questions, then insights with evidence ids). Pure apart from the LLM call.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from memcli.core.models import Entry, format_time, normalize_text
from memcli.core.registry import BUILTIN, Registry
from memcli.store.changes import Action, Plan, Write
from memcli.store.config import ReflectSettings

if TYPE_CHECKING:
    from memcli.logic.themes import Embed

REFLECT_MARK = "by"  # meta key=value "by=reflect" marks entries reflect wrote


@dataclass(frozen=True)
class Trigger:
    """Whether reflection is due, and the figures that decided it."""

    due: bool
    importance_sum: float
    entries: int
    last: str | None
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {
            "due": self.due,
            "importance_sum": round(self.importance_sum, 3),
            "entries": self.entries,
            "last_reflection": self.last,
            "reason": self.reason,
        }


def is_insight(entry: Entry) -> bool:
    """Reflections, and lessons that reflect wrote."""
    return entry.type == "reflection" or entry.meta.get(REFLECT_MARK) == "reflect"


def _created(entry: Entry) -> dt.datetime | None:
    try:
        return entry.created
    except ValueError:
        return None


def last_reflection(entries: Sequence[Entry]) -> dt.datetime | None:
    times = [t for e in entries if is_insight(e) and (t := _created(e)) is not None]
    return max(times, default=None)


def recent(entries: Sequence[Entry], since: dt.datetime | None) -> list[Entry]:
    """Entries created after `since` (all dated ones when None), insights and the
    assistant's turns excluded (is_evidence)."""
    return [
        e
        for e in entries
        if is_evidence(e) and (t := _created(e)) is not None and (since is None or t > since)
    ]


def check_trigger(entries: Sequence[Entry], now: dt.datetime, cfg: ReflectSettings) -> Trigger:
    """Due when the importance of entries since the last reflection sums to ≥
    importance_sum over ≥ min_entries entries and the cooldown has passed."""
    last = last_reflection(entries)
    new = recent(entries, last)
    total = sum(e.importance for e in new)
    stamp = format_time(last) if last else None
    if last is not None and now - last < dt.timedelta(hours=cfg.cooldown_hours):
        return Trigger(False, total, len(new), stamp, f"cooldown: last reflection at {stamp}")
    if len(new) < cfg.min_entries:
        return Trigger(
            False, total, len(new), stamp, f"{len(new)} new entries (needs {cfg.min_entries})"
        )
    if total < cfg.importance_sum:
        return Trigger(
            False,
            total,
            len(new),
            stamp,
            f"importance {total:.2f} since the last reflection (needs {cfg.importance_sum})",
        )
    return Trigger(True, total, len(new), stamp, f"importance {total:.2f} over {len(new)} entries")


@dataclass(frozen=True)
class Insight:
    text: str
    evidence: tuple[Entry, ...]
    keywords: tuple[str, ...] = ()


def cohesive_clusters(
    vectors: np.ndarray, cohesion: float, min_size: int, sims: np.ndarray | None = None
) -> list[list[int]]:
    """Groups of rows (normalized embeddings) in which every member's mean cosine
    similarity to the other members is ≥ `cohesion`, each of at least `min_size` (`sims`:
    the pairwise similarities to use instead of the cosines).

    That mean is the member's similarity to the group's centroid with its own share taken
    out ((n·x·c̄ − 1)/(n − 1), c̄ the mean vector), so it does not grow with the group's
    size the way the raw centroid similarity does. Greedy: the entry with the most
    neighbours ≥ `cohesion` seeds a group of those neighbours; the least cohesive member
    leaves until every one is cohesive; a group that keeps `min_size` members is taken
    and its members leave the pool. Shared keywords play no part: entries that share a
    word but say unrelated things are not similar enough to group.
    """
    n = len(vectors)
    if n < max(min_size, 2):
        return []
    sims = np.asarray(vectors @ vectors.T if sims is None else sims, dtype=np.float64)
    np.fill_diagonal(sims, 1.0)
    free = np.ones(n, dtype=bool)
    clusters: list[list[int]] = []
    while True:
        near = (sims >= cohesion) & free[None, :] & free[:, None]
        degree = near.sum(axis=1)
        seeds = [int(i) for i in np.lexsort((np.arange(n), -degree)) if degree[i] >= min_size]
        found: list[int] | None = None
        for seed in seeds:
            members = _prune(np.flatnonzero(near[seed]).tolist(), sims, cohesion)
            if len(members) >= min_size:
                found = members
                break
        if found is None:
            return clusters
        clusters.append(sorted(found))
        free[found] = False


def _prune(members: list[int], sims: np.ndarray, cohesion: float) -> list[int]:
    """Drop the least cohesive member until each one's mean similarity to the others is
    at least `cohesion` (or fewer than two are left)."""
    members = list(members)
    while len(members) >= 2:
        sub = sims[np.ix_(members, members)]
        mean_others = (sub.sum(axis=1) - 1.0) / (len(members) - 1)
        worst = int(np.argmin(mean_others))
        if mean_others[worst] >= cohesion:
            break
        members.pop(worst)
    return members


#: the role of a conversation turn no insight may rest on (the assistant's side)
_NOT_THE_PERSON = re.compile(r"^(?:assistant|ai|model|bot|system|tool)\s*:", re.I)
#: a Chinese theme's members share at least this part of their content words (the
#: overlap, in place of the English-only model's cosine); chosen on the tune half of
#: bench/data/reflect_themes.jsonl
THEME_OVERLAP_CJK = 0.3


def is_evidence(entry: Entry) -> bool:
    """Whether an insight may rest on the entry: never an insight, never the assistant's
    side of an imported conversation (what the person said is theirs, what a model
    answered is not)."""
    if is_insight(entry):
        return False
    return not (entry.provenance == "conversation" and _NOT_THE_PERSON.match(entry.text))


def insight_importance(evidence: Sequence[Entry]) -> float:
    """Below the person's own facts: at most 0.6, and 0.1 below the median importance of
    the evidence (never below 0.1)."""
    values = sorted(e.importance for e in evidence)
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return round(max(0.1, min(0.6, median - 0.1)), 2)


def extractive_insights(
    pool: Sequence[Entry],
    vectors: np.ndarray,
    cfg: ReflectSettings,
    embed: Embed | None = None,
) -> tuple[list[Insight], list[str]]:
    """Offline insights and, when there are none, why: cohesive clusters of
    the pool's evidence (`theme_similarity` for English texts, THEME_OVERLAP_CJK of
    shared words for Chinese ones; at least `min_evidence` entries), each stated as a
    theme summary of its evidence (memcli.logic.themes) — only where the theme has a
    label to state; never a copy of one entry."""
    from memcli.logic.themes import label, similarities, statement

    keep = [i for i, e in enumerate(pool) if is_evidence(e)]
    why: list[str] = []
    left_out = len(pool) - len(keep)
    if left_out:
        why.append(
            f"{_entries(left_out)} left out: the assistant's side of a conversation and "
            "earlier insights are never evidence"
        )
    need = max(cfg.min_evidence, 2)
    if len(keep) < need:
        why.append(f"{_entries(len(keep))} to reflect on: a theme needs at least {need}")
        return [], why
    evidence = [pool[i] for i in keep]
    rows = vectors[keep]
    texts = [e.text for e in evidence]
    sims = similarities(texts, rows)
    chinese = np.array([_mostly_chinese(t) for t in texts])
    # one scale for both: a Chinese pair's overlap is read against its own threshold
    scaled = np.where(
        chinese[:, None] | chinese[None, :], sims * (cfg.theme_similarity / THEME_OVERLAP_CJK), sims
    )
    groups = cohesive_clusters(rows, cfg.theme_similarity, need, scaled)
    groups.sort(key=lambda g: (-sum(evidence[i].importance for i in g), min(g)))
    insights = []
    for group in groups:
        members = [evidence[i] for i in group]
        about = label([m.text for m in members], rows[group], embed)
        if about is None:
            why.append(
                f"{len(members)} related entries ({', '.join(m.id for m in members)}) "
                "name no common subject to state"
            )
            continue
        text = statement([m.text for m in members], about)
        if any(normalize_text(text) == normalize_text(m.text) for m in members):
            continue
        insights.append(Insight(text, tuple(members), (about.casefold(),)))
        if len(insights) >= cfg.max_insights:
            break
    if not groups:
        why.append(f"no {need} of the {len(evidence)} entries are about one theme")
    return insights, why


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def _mostly_chinese(text: str) -> bool:
    from memcli.logic.themes import is_chinese

    return is_chinese(text)


QUESTIONS_SYSTEM = (
    "You read a person's recent memories. Answer with a JSON object "
    '{"questions": [str]}: the 3 most salient high-level questions we can answer about '
    "the person from these statements."
)
INSIGHTS_SYSTEM = (
    "You derive high-level insights from memories. Each memory is given as [id] text. "
    'Answer with a JSON object {"insights": [{"text": str, "evidence": [ids]}]}: at most '
    "two insights answering the question, each a short, well-formed third-person sentence "
    "in the language of the memories it rests on, stating a pattern no single memory states "
    "and citing the ids of at least three memories it rests on."
)


def llm_insights(
    pool: Sequence[Entry],
    llm,  # noqa: ANN001 - memcli.adapters.llm.LLMClient
    retrieve: Callable[[str], list[Entry]],
    cfg: ReflectSettings,
) -> list[Insight]:
    """Generative Agents: focal questions from recent entries, then insights per question
    from the entries most relevant to it. LLMError on an answer of the wrong shape."""
    from memcli.adapters.llm import LLMError

    pool = [e for e in pool if is_evidence(e)]
    listing = "\n".join(f"[{e.id}] {' '.join(e.text.split())}" for e in pool)
    answer = llm.chat_json(QUESTIONS_SYSTEM, listing)
    questions = answer.get("questions") if isinstance(answer, dict) else None
    if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
        raise LLMError('the LLM answer has no "questions" list; nothing was changed')
    insights: list[Insight] = []
    for question in questions[: cfg.max_insights]:
        evidence = [e for e in retrieve(question) if is_evidence(e)]
        by_id = {e.id: e for e in evidence}
        listing = "\n".join(f"[{e.id}] {' '.join(e.text.split())}" for e in evidence)
        answer = llm.chat_json(INSIGHTS_SYSTEM, f"Question: {question}\n\n{listing}")
        items = answer.get("insights") if isinstance(answer, dict) else None
        if not isinstance(items, list):
            raise LLMError('the LLM answer has no "insights" list; nothing was changed')
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise LLMError("an LLM insight has no text; nothing was changed")
            cited = item.get("evidence") or []
            if not isinstance(cited, list):
                raise LLMError("an LLM insight's evidence is not a list; nothing was changed")
            found = tuple(by_id[i] for i in dict.fromkeys(str(i) for i in cited) if i in by_id)
            text = " ".join(item["text"].split())
            if text and len(found) >= max(cfg.min_evidence, 1):
                insights.append(Insight(text, found))
    return insights[: cfg.max_insights]


def insight_id(file: str, evidence_ids: Sequence[str], text: str, taken: set[str]) -> str:
    """The id of an insight, derived from its evidence and text (a dry run and the run
    name it alike): the file's prefix and 12 hex digits of their hash, not in `taken`."""
    from memcli.store.markdown import id_prefix_for

    seed = "\n".join([*sorted(evidence_ids), normalize_text(text)])
    for n in range(1000):
        digest = hashlib.sha256(f"{seed}\n{n}".encode()).hexdigest()[:12]
        candidate = f"{id_prefix_for(file)}{digest}"
        if candidate not in taken:
            return candidate
    raise RuntimeError("no free insight id")  # pragma: no cover - 1000 sha256 collisions


def plan_reflect(
    insights: Sequence[Insight],
    existing: Sequence[Entry],
    now: dt.datetime,
    notes: Sequence[str] = (),
    files: Registry = BUILTIN,
) -> Plan:
    """Insights as entries: a lesson (in the file of lessons, `files`: the workspace's
    registry) when most evidence is procedural (from that file), else a reflection (in
    the file of reflections); importance below the evidence (insight_importance),
    src = evidence ids, an id derived from both (insight_id). Skips insights already
    written and themes an earlier insight already covers; `notes` say why there are
    none (or fewer)."""
    plan = Plan()
    taken = {e.id for e in existing}
    texts = {normalize_text(e.text) for e in existing}
    covered = [
        {s.strip() for s in (e.source or "").split(",") if s.strip()}
        for e in existing
        if is_insight(e)
    ]
    for insight in insights:
        ids = [e.id for e in insight.evidence]
        if normalize_text(insight.text) in texts or any(set(ids) <= c for c in covered):
            plan.notes.append(f"already reflected: {', '.join(ids)}")
            continue
        procedural = sum(e.file == files.file_for_type("lesson") for e in insight.evidence)
        lesson = procedural * 2 > len(insight.evidence)
        target = files.file_for_type("lesson" if lesson else "reflection")
        entry_id = insight_id(target, ids, insight.text, taken)
        taken.add(entry_id)
        imp = f"{insight_importance(insight.evidence):g}"
        meta = {"id": entry_id, "imp": imp, "created": format_time(now)}
        if insight.keywords:
            meta["kw"] = ",".join(insight.keywords)
        meta["src"] = ",".join(ids)
        meta[REFLECT_MARK] = "reflect"
        entry = Entry(
            entry_id, insight.text, "lesson" if lesson else "reflection", target, 0, meta, True
        )
        plan.writes.append(Write(entry))
        plan.actions.append(
            Action("reflect", f"{entry.type} {entry_id} from {len(ids)} entries", tuple(ids))
        )
        texts.add(normalize_text(insight.text))
        covered.append(set(ids))
    if not plan.writes:
        plan.notes.extend(notes)
    return plan
