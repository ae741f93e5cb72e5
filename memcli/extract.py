"""Memories from a conversation (seed 002 phase two), offline: explicit statements in
English and Chinese found by rules, scored for importance, kept at ≥ 0.7, typed, then
decided against what the workspace already holds (ADD / UPDATE / NOOP, mem0 style).

`candidates`, `plan` and `screen` are pure; Memory.extract applies a plan. A statement
that looks like it holds a credential is never added (SKIP, reported with the credential
redacted), nor one memcli would refuse from `add` (control characters, too long).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memcli.credentials import describe, find, redact
from memcli.index.tokenize import tokenize
from memcli.messages import message_text
from memcli.models import Entry, normalize_text
from memcli.validate import strip_controls, text_problem

KEEP_AT = 0.7
SAME_TOPIC = 0.6  # token overlap (Jaccard) above which a statement updates an entry
_HEDGES = re.compile(r"\b(maybe|might|perhaps|probably|not sure|i guess)\b|可能|也许|大概", re.I)
_SENTENCES = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")

#: (pattern, type, importance, template for the stored text)
RULES: list[tuple[re.Pattern[str], str, float, str]] = [
    (re.compile(r"^(?:please\s+)?remember(?:\s+that)?[:,]?\s+(?P<x>.+)", re.I), "fact", 0.9, "{x}"),
    (
        re.compile(
            r"^(?:no|actually|correction)[,:]?\s+(?:it(?:'s| is| should be)\s+)?(?P<x>.+)", re.I
        ),
        "correction",
        0.9,
        "{x}",
    ),
    (
        re.compile(r"\bi (?:really )?(?:prefer|like|love|enjoy)\s+(?P<x>.+)", re.I),
        "preference",
        0.8,
        "Prefers {x}",
    ),
    (
        re.compile(r"\bi (?:don't|do not|never) (?:like|want|use)\s+(?P<x>.+)", re.I),
        "preference",
        0.8,
        "Does not want {x}",
    ),
    (re.compile(r"\bi always\s+(?P<x>.+)", re.I), "pattern", 0.75, "Always {x}"),
    (re.compile(r"\b(?:lesson learned|next time)[:,]?\s+(?P<x>.+)", re.I), "lesson", 0.8, "{x}"),
    (re.compile(r"\bi work (?P<p>at|in|for|on) (?P<x>.+)", re.I), "fact", 0.75, "Works {p} {x}"),
    (re.compile(r"\bi live (?P<p>in|at|near) (?P<x>.+)", re.I), "fact", 0.75, "Lives {p} {x}"),
    (
        re.compile(r"\bmy (?P<k>[a-z][\w ]{0,30}?) is (?P<x>.+)", re.I),
        "fact",
        0.75,
        "User's {k} is {x}",
    ),
    (re.compile(r"\bi(?:'m| am) an? (?P<x>.+)", re.I), "fact", 0.7, "Is a {x}"),
    (re.compile(r"记住[：:，,]?\s*(?P<x>.+)"), "fact", 0.9, "{x}"),
    (re.compile(r"不对[，,]?\s*应该是(?P<x>.+)"), "correction", 0.9, "应该是{x}"),
    (re.compile(r"我不喜欢(?P<x>.+)"), "preference", 0.8, "不喜欢{x}"),
    (re.compile(r"我(?:很|非常|比较|更)?喜欢(?P<x>.+)"), "preference", 0.8, "喜欢{x}"),
    (re.compile(r"我(?:总是|一般|通常)(?P<x>.+)"), "pattern", 0.75, "总是{x}"),
    (re.compile(r"我的(?P<k>.{1,10}?)是(?P<x>.+)"), "fact", 0.75, "用户的{k}是{x}"),
]


@dataclass(frozen=True)
class Candidate:
    text: str
    type: str
    importance: float
    said: str  # the sentence it came from


@dataclass(frozen=True)
class Decision:
    action: str  # ADD, UPDATE, NOOP or SKIP (not remembered: see reason)
    candidate: Candidate
    entry_id: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "id": self.entry_id,
            "text": self.candidate.text,
            "type": self.candidate.type,
            "importance": self.candidate.importance,
            "reason": self.reason,
        }


def candidates(messages: Sequence[dict]) -> list[Candidate]:
    """Explicit statements the user made, scored; those below KEEP_AT are dropped."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for message in messages:
        if message.get("role") not in ("user", "human"):
            continue
        for sentence in _SENTENCES.split(strip_controls(message_text(message))):
            sentence = sentence.strip()
            if len(sentence) < 3:
                continue
            for pattern, entry_type, importance, template in RULES:
                match = pattern.search(sentence)
                if not match:
                    continue
                parts = {k: v.strip().rstrip(".!?。！？") for k, v in match.groupdict().items()}
                text = template.format(**parts).strip()
                text = text[:1].upper() + text[1:]
                score = importance - (0.2 if _HEDGES.search(sentence) else 0.0)
                key = normalize_text(text)
                if score >= KEEP_AT and parts.get("x") and key not in seen:
                    seen.add(key)
                    found.append(Candidate(text, entry_type, round(score, 2), sentence))
                break
    return found


def plan(found: Sequence[Candidate], existing: Sequence[Entry]) -> list[Decision]:
    """NOOP for what is already there (same text, or an entry of the same type whose words
    cover it), UPDATE for a new wording of an entry of the same type (token overlap ≥
    SAME_TOPIC), ADD otherwise. Corrections are always added."""
    by_text = {normalize_text(e.text): e for e in existing}
    tokens = [(e, set(tokenize(e.text))) for e in existing]
    decisions = []
    for candidate in found:
        same = by_text.get(normalize_text(candidate.text))
        if same is not None:
            decisions.append(Decision("NOOP", candidate, same.id, "already remembered"))
            continue
        mine = set(tokenize(candidate.text))
        best, overlap, covered = None, 0.0, None
        for entry, theirs in tokens:
            if entry.type != candidate.type or not mine or not theirs:
                continue
            if mine <= theirs:
                covered = entry
                break
            score = len(mine & theirs) / len(mine | theirs)
            if score > overlap or (theirs <= mine and score == overlap):
                best, overlap = entry, score
        if covered is not None and candidate.type != "correction":
            decisions.append(Decision("NOOP", candidate, covered.id, f"covered by {covered.id}"))
        elif best is not None and overlap >= SAME_TOPIC and candidate.type != "correction":
            decisions.append(
                Decision("UPDATE", candidate, best.id, f"rewords {best.id} ({overlap:.0%} overlap)")
            )
        else:
            decisions.append(Decision("ADD", candidate, None, "new"))
    return decisions


def screen(decisions: Sequence[Decision]) -> list[Decision]:
    """ADD / UPDATE decisions whose statement looks like it holds a credential, or that
    `add` would refuse (control characters, too long), become SKIP with the reason.
    Credentials are redacted from every decision's text: the report is printed."""
    screened = []
    for decision in decisions:
        c = decision.candidate
        found = find(c.text)
        if found:
            c = replace(c, text=redact(c.text), said=redact(c.said))
        if decision.action in ("ADD", "UPDATE"):
            problem = (
                f"looks like it holds {describe(found)}: not remembered (use `memcli add "
                "--allow-secret` if it must be)"
                if found
                else text_problem(c.text, "the statement")
            )
            if problem:
                screened.append(Decision("SKIP", c, None, problem))
                continue
        screened.append(replace(decision, candidate=c))
    return screened


LLM_SYSTEM = (
    "You extract long-term memories about the user from a conversation. Return a JSON "
    'object {"memories": [{"text": str, "type": one of preference, fact, pattern, '
    'correction, skill, lesson, "importance": number 0-1}]}. Only lasting, explicit '
    "information; write each memory as a short third-person statement; importance 0.9 for "
    "things the user asked to remember or corrected, lower for passing remarks."
)
TYPES = ("preference", "fact", "pattern", "correction", "skill", "lesson")


def llm_candidates(messages: Sequence[dict], llm) -> list[Candidate]:  # noqa: ANN001 - LLMClient
    """Candidates scored by the LLM; raises LLMError on an answer of the wrong shape."""
    from memcli.llm import LLMError

    transcript = "\n".join(
        f"{m.get('role')}: {strip_controls(message_text(m))}"
        for m in messages
        if m.get("role") in ("user", "human", "assistant", "ai") and not m.get("tool_calls")
    )
    answer = llm.chat_json(LLM_SYSTEM, transcript)
    items = answer.get("memories") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise LLMError('the LLM answer has no "memories" list; nothing was changed')
    found, seen = [], set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise LLMError("an LLM memory has no text; nothing was changed")
        try:
            importance = float(item.get("importance", 0))
        except (TypeError, ValueError):
            raise LLMError(
                "an LLM memory has a non-numeric importance; nothing was changed"
            ) from None
        entry_type = item.get("type") if item.get("type") in TYPES else "fact"
        text = " ".join(item["text"].split())
        if text and importance >= KEEP_AT and normalize_text(text) not in seen:
            seen.add(normalize_text(text))
            found.append(Candidate(text, entry_type, round(min(importance, 1.0), 2), "(llm)"))
    return found
