"""Planning `reflect` (DESIGN §6, seed 002 phase four): when enough important entries
accumulated since the last reflection, find their themes and write insights citing
their evidence. Offline the insights are extractive; with an LLM, Generative-Agents
style (focal questions, then insights with evidence ids). Pure apart from the LLM call.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memcli.changes import Action, Plan, Write
from memcli.compress import central, components, similar_pairs
from memcli.config import ReflectSettings
from memcli.index.tokenize import STOP_WORDS
from memcli.models import LEARNINGS_FILE, MEMORY_FILE, Entry, format_time, normalize_text

_WORD = re.compile(r"[^\W\d_][\w.+#-]*[\w+#]")
REFLECT_MARK = "by"  # meta key=value "by=reflect" marks entries reflect wrote
INSIGHT_IMPORTANCE = "0.9"


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
    """Entries created after `since` (all dated ones when None), insights excluded."""
    return [
        e
        for e in entries
        if not is_insight(e) and (t := _created(e)) is not None and (since is None or t > since)
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


def theme_words(members: Sequence[Entry], limit: int = 3) -> list[str]:
    """Keywords the members share most (their kw=, else their words)."""
    counts: Counter[str] = Counter()
    for entry in members:
        counts.update({k.casefold() for k in entry.keywords})
    shared = [w for w, c in counts.most_common() if c >= 2]
    if len(shared) < limit:
        words: Counter[str] = Counter()
        for entry in members:
            words.update({w for w in _WORD.findall(entry.text.casefold()) if w not in STOP_WORDS})
        shared += [w for w, c in words.most_common() if c >= 2 and w not in shared]
    if not shared:  # nothing in common by the letter: the keywords of the first
        shared = [k.casefold() for k in members[0].keywords]
    return shared[:limit]


def extractive_insights(
    pool: Sequence[Entry], vectors: np.ndarray, cfg: ReflectSettings
) -> list[Insight]:
    """Themes = groups of similar entries; each insight is the theme's words plus its
    most central statement, citing every entry of the group."""
    if len(pool) < 2:
        return []
    groups = components(len(pool), similar_pairs(vectors, cfg.theme_similarity))
    groups.sort(key=lambda g: (-sum(pool[i].importance for i in g), min(g)))
    insights = []
    for group in groups[: cfg.max_insights]:
        members = [pool[i] for i in group]
        head = members[central(members, vectors[group])]
        words = theme_words([head, *(m for m in members if m is not head)])
        statement = " ".join(head.text.split("\n", 1)[0].split())
        theme = ", ".join(words) if words else head.type
        text = f"Recurring theme ({theme}; {len(members)} memories): {statement}"
        insights.append(Insight(text, tuple(members), tuple(words)))
    return insights


QUESTIONS_SYSTEM = (
    "You read a person's recent memories. Answer with a JSON object "
    '{"questions": [str]}: the 3 most salient high-level questions we can answer about '
    "the person from these statements."
)
INSIGHTS_SYSTEM = (
    "You derive high-level insights from memories. Each memory is given as [id] text. "
    'Answer with a JSON object {"insights": [{"text": str, "evidence": [ids]}]}: at most '
    "two insights answering the question, each a short third-person statement citing the "
    "ids of the memories it rests on."
)


def llm_insights(
    pool: Sequence[Entry],
    llm,  # noqa: ANN001 - memcli.llm.LLMClient
    retrieve: Callable[[str], list[Entry]],
    cfg: ReflectSettings,
) -> list[Insight]:
    """Generative Agents: focal questions from recent entries, then insights per question
    from the entries most relevant to it. LLMError on an answer of the wrong shape."""
    from memcli.llm import LLMError

    listing = "\n".join(f"[{e.id}] {' '.join(e.text.split())}" for e in pool)
    answer = llm.chat_json(QUESTIONS_SYSTEM, listing)
    questions = answer.get("questions") if isinstance(answer, dict) else None
    if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
        raise LLMError('the LLM answer has no "questions" list; nothing was changed')
    insights: list[Insight] = []
    for question in questions[: cfg.max_insights]:
        evidence = retrieve(question)
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
            found = tuple(by_id[str(i)] for i in cited if str(i) in by_id)
            text = " ".join(item["text"].split())
            if text and found:
                insights.append(Insight(text, found))
    return insights[: cfg.max_insights]


def plan_reflect(
    insights: Sequence[Insight],
    existing: Sequence[Entry],
    now: dt.datetime,
    new_id: Callable[[str], str],
) -> Plan:
    """Insights as entries: a lesson (learnings.md) when most evidence is procedural,
    else a reflection (memory.md); importance 0.9, src = evidence ids. Skips insights
    already written and themes an earlier insight already covers."""
    plan = Plan()
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
        procedural = sum(e.file == LEARNINGS_FILE for e in insight.evidence)
        lesson = procedural * 2 > len(insight.evidence)
        target = LEARNINGS_FILE if lesson else MEMORY_FILE
        entry_id = new_id(target)
        meta = {"id": entry_id, "imp": INSIGHT_IMPORTANCE, "created": format_time(now)}
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
    return plan
