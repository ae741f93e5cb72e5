"""Planning `reflect` (DESIGN §6, seed 002 phase four): when enough important entries
accumulated since the last reflection, find their themes and write insights citing
their evidence. Offline an insight states the pattern across a cohesive cluster of
entries (what they share and what each adds); with an LLM, Generative-Agents style
(focal questions, then insights with evidence ids). Pure apart from the LLM call.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memcli.core.models import LEARNINGS_FILE, MEMORY_FILE, Entry, format_time, normalize_text
from memcli.index.tokenize import STOP_WORDS, tokenize
from memcli.store.changes import Action, Plan, Write
from memcli.store.config import ReflectSettings

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


#: words that say how, not what: never a theme's subject or a detail
_GENERIC = frozenset(
    """prefers prefer likes like uses use using used always never usually often first then
    instead every some runs run writes write wants keeps makes does gets goes should would
    could must need needs""".split()  # noqa: SIM905
)
_CJK_RUN = re.compile(r"^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+$")
_TERM = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+|[^\W\d_][^\W_]*"
)
MAX_DETAILS = 5  # members whose distinct details a statement lists


def cohesive_clusters(vectors: np.ndarray, cohesion: float, min_size: int) -> list[list[int]]:
    """Groups of rows (normalized embeddings) in which every member's mean cosine
    similarity to the other members is ≥ `cohesion`, each of at least `min_size`.

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
    sims = np.asarray(vectors @ vectors.T, dtype=np.float64)
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


def terms(text: str) -> dict[str, str]:
    """Content terms of a text, in order: stem -> the word as written (CJK: character
    bigrams; a first word capitalized only as the start of the text in lower case). Stop
    words, generic verbs ("prefers", "uses") and 1–2 letter words are left out."""
    found: dict[str, str] = {}
    for match in _TERM.finditer(text):
        word = match.group()
        if _CJK_RUN.match(word):
            for i in range(len(word) - 1):
                found.setdefault(word[i : i + 2], word[i : i + 2])
            continue
        folded = word.casefold()
        if len(folded) < 3 or folded in STOP_WORDS or folded in _GENERIC:
            continue
        stems = tokenize(word)
        if stems:  # a capital that only starts the text is no part of the word
            plain = match.start() == 0 and word[1:].islower()
            found.setdefault(stems[0], folded if plain else word)
    return found


def synthesize(members: Sequence[Entry]) -> tuple[str, list[str]] | None:
    """An offline statement of the pattern across `members`: the terms most of them share
    (in at least two thirds of them) and what each adds, as

        Pattern across 3 memories: pytest, Python and tests keep coming up — fixtures,
        setUp, methods / suite, commit / failing, fixing, bug

    with the shared terms as keywords. None when the members share no term: then there is
    no pattern to state, and no insight is written."""
    per_member = [terms(m.text) for m in members]
    counts: Counter[str] = Counter(stem for t in per_member for stem in t)
    need = max(2, -(-2 * len(members) // 3))
    shared: list[str] = []
    surface: dict[str, str] = {}
    for t in per_member:  # in order of first appearance
        for stem, word in t.items():
            if counts[stem] >= need and stem not in surface:
                shared.append(stem)
                surface[stem] = word
    if not shared:
        return None
    shared.sort(key=lambda stem: -counts[stem])  # the most shared first (stable)
    subject = [surface[s] for s in shared[:4]]
    details = []
    said = set(surface)
    for t in per_member[:MAX_DETAILS]:
        own = [stem for stem in t if stem not in said][:3]
        said.update(own)
        if own:
            details.append(", ".join(t[stem] for stem in own))
    if len(members) > MAX_DETAILS:
        details.append("…")
    named = subject[0] if len(subject) == 1 else ", ".join(subject[:-1]) + " and " + subject[-1]
    verb = "keeps" if len(subject) == 1 else "keep"
    text = f"Pattern across {len(members)} memories: {named} {verb} coming up"
    if details:
        text += " — " + " / ".join(details)
    return text, [w.casefold() for w in subject]


def extractive_insights(
    pool: Sequence[Entry], vectors: np.ndarray, cfg: ReflectSettings
) -> list[Insight]:
    """Offline insights (DESIGN §6): cohesive clusters of the pool (cohesive_clusters,
    `theme_similarity`, at least `min_evidence` entries), each stated as the pattern across
    its evidence (synthesize), never a copy of one entry; a cluster whose entries share no
    term gives none."""
    if len(pool) < max(cfg.min_evidence, 2):
        return []
    groups = cohesive_clusters(vectors, cfg.theme_similarity, max(cfg.min_evidence, 2))
    groups.sort(key=lambda g: (-sum(pool[i].importance for i in g), min(g)))
    insights = []
    for group in groups:
        members = [pool[i] for i in group]
        stated = synthesize(members)
        if stated is None:
            continue
        text, words = stated
        if any(normalize_text(text) == normalize_text(m.text) for m in members):
            continue
        insights.append(Insight(text, tuple(members), tuple(words)))
        if len(insights) >= cfg.max_insights:
            break
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
    llm,  # noqa: ANN001 - memcli.adapters.llm.LLMClient
    retrieve: Callable[[str], list[Entry]],
    cfg: ReflectSettings,
) -> list[Insight]:
    """Generative Agents: focal questions from recent entries, then insights per question
    from the entries most relevant to it. LLMError on an answer of the wrong shape."""
    from memcli.adapters.llm import LLMError

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
