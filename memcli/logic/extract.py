"""Memories from a conversation (seed 002 phase two), offline: explicit statements in
English and Chinese found by rules, scored for importance, kept at ≥ 0.7, typed, then
decided against what the workspace already holds (ADD / UPDATE / NOOP, mem0 style).

Sentences are split by pysbd (rule-based, no model), with host names, versions, paths,
URLs and e-mail addresses kept whole; a cue counts at the start of any clause of a
sentence ("…, and also remember that …", "btw my … is …", "对了，记住…"). Questions,
hypotheticals ("if I …", "如果…") and small talk ("I like that", "my bad") are not
statements; hedged ones ("maybe", "I think", "可能") score lower.

A correction ("actually, …", "not X any more", "I moved to …", "不对，应该是…") UPDATEs the
entry it corrects, found by subject similarity (embedding + words); a statement that
restates an entry is a NOOP, one that adds a detail to it or gives its subject a new
value an UPDATE. `candidates`, `plan` and `screen` are pure; Memory.extract applies a
plan (the old text of an updated entry goes to archive.md as superseded). A statement
that looks like it holds a credential is never added (SKIP, reported with the credential
redacted), nor one memcli would refuse from `add` (control characters, too long).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from memcli.adapters.messages import message_text
from memcli.core.credentials import describe, find, redact
from memcli.core.models import Entry, normalize_text
from memcli.core.validate import strip_controls, text_problem
from memcli.index.tokenize import tokenize

KEEP_AT = 0.7
HEDGE_PENALTY = 0.2
SAME_TOPIC = 0.6  # token overlap (Jaccard) above which a statement rewords an entry

# ------------------------------------------------------------------ sentences

#: spans a sentence boundary never falls inside: URLs, e-mail addresses, paths, and dotted
#: words (host names, versions, file names, decimals: staging.techcorp.io, 3.12.1, e.g)
_WHOLE = re.compile(
    r"(?:https?|ftp|ssh|file)://[^\s<>\"']*[^\s<>\"'.,;:!?)\]]"
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![\w/])(?:~|\.{1,2})?(?:/[\w.~+-]+)+/?"
    r"|[\w-]+(?:\.[\w-]+)+"
)


@lru_cache(maxsize=1)
def _segmenter() -> Any:  # noqa: ANN401 - pysbd has no type hints
    import pysbd  # here, not at the top: only extract splits sentences

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Sentences of `text` (English and Chinese): pysbd's rules (abbreviations such as
    e.g., i.e., Dr., U.S.; decimals; 。！？), no boundary inside a URL, e-mail address,
    path, host name or version, and a line break always ends a sentence."""
    sentences: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        ends, pos = [], 0
        for piece in _segmenter().segment(line):
            at = line.find(piece, pos)
            if at < 0:
                break
            pos = at + len(piece)
            ends.append(pos)
        whole = [(m.start(), m.end()) for m in _WHOLE.finditer(line)]
        start = 0
        for end in ends[:-1]:
            cut = len(line[:end].rstrip())
            if any(s < cut < e for s, e in whole):
                continue
            sentences.append(line[start:end])
            start = end
        sentences.append(line[start:])
    return [s.strip() for s in sentences if s.strip()]


# ------------------------------------------------------------------ statements

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
#: where a clause may start inside a sentence
_CLAUSE = re.compile(
    r"[,;:，；：、]\s*|\s+[—–]+\s*|\s+-\s+|\s(?=(?:and|but|also|btw|oh|so|plus)\s)", re.I
)
#: words that open a clause without changing what it says ("oh and also remember …")
_FILLER = re.compile(
    r"(?:(?:and|also|oh|ah|btw|by the way|fyi|ok(?:ay)?|so|plus|anyway|one more thing|well|"
    r"hey|but|then|ps|i think|i guess|i suppose|i believe|honestly|to be honest|tbh|"
    r"personally|for the record)\b[\s,:;.!—–-]*"
    r"|(?:对了|顺便说一下|顺便说一句|顺便提一下|顺便|另外|还有|哦|噢|嗯|好的|而且|然后|我觉得|"
    r"说实话|其实吧)[\s，,：:。!！]*)+",
    re.I,
)
#: where a statement's value ends: the next clause starts a statement of its own
_NEXT = re.compile(
    r"\s*(?:[,;]|\s(?:and|but|so)\b)\s*(?:(?:and|but|also|so|btw|oh|plus)\s+)*"
    r"(?=(?:i|i'm|i've|i'd|my|remember|please remember|actually)\s)"
    r"|\s*[，；,;]\s*(?=我|记住|对了|顺便|另外|还有)",
    re.I,
)
_HEDGES = re.compile(
    r"\b(maybe|might|perhaps|probably|possibly|not sure|i guess|i think|i suppose|kind of|"
    r"sort of)\b|可能|也许|大概|好像|或许|说不定|我觉得",
    re.I,
)
_TRANSIENT = re.compile(
    r"\b(today|tonight|right now|at the moment|this morning|this afternoon|for now)\b"
    r"|今天|刚才|这会儿|暂时",
    re.I,
)
_HYPOTHETICAL = re.compile(
    r"\b(if|what if|suppose|supposing|imagine|assuming|hypothetically|let's say|say we)\b"
    r"|如果|假如|假设|要是|万一|假使",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|is|are|was|were|what|why|how|where|when|"
    r"who|which|have you|has)\b",
    re.I,
)
_REQUEST = re.compile(r"^(?:can|could|would|will) you (?:please )?(?:remember|note)\b", re.I)
_DECLARATIVE = re.compile(
    r"\b(?:is|are|was|were|isn't|aren't|uses?|runs?|lives?|works?|has|have|should be|starts?|"
    r"ends?|happens?|goes|takes|lasts|moved|ships?|needs?|means?)\b|是|在|用|要|不|有",
    re.I,
)
_PRONOUN_OBJECT = re.compile(
    r"^(?:it|that|this|these|those|them|you|your|yours|how|what|the idea|the way)\b"
    r"|^(?:这|那|它|你)",
    re.I,
)
_SMALL_TALK_KEYS = frozenset(
    str.split(
        "question point guess bet bad pleasure concern problem issue idea understanding "
        "day week weekend morning evening night head apologies fault mistake turn answer "
        "suggestion plan thought thoughts impression hunch worry fear hope wish reason "
        "excuse code test tests build output error pr branch commit script query 问题 意思 想法 "
        "看法 建议 错"
    )
)
_SMALL_TALK_VALUES = re.compile(
    r"^(?:fine|good|great|ok|okay|done|broken|down|slow|failing|working|dead|busy|full|"
    r"tired|bad|better|worse|almost|still|so|too|pretty|really|very|kinda|a bit|not|"
    r"over|here|there|gone)\b",
    re.I,
)
_NOT_A_ROLE = re.compile(r"^(?:bit|little|tad|lot|mess|idiot|fool)\b", re.I)
_HAS_EXCLUDE = re.compile(
    r"\b(?:question|problem|meeting|idea|bug|issue|call|doubt|minute|sec|second|moment|"
    r"feeling|headache|cold|suggestion|request|favou?r)s?\b",
    re.I,
)
_TRAILING = re.compile(
    r"(?:[\s,]+(?:now|these days|nowadays|from now on|btw|though|thanks|thank you|please|"
    r"honestly|lol|haha|:\)|any\s?more|any longer|recently|yesterday|last (?:week|month|year)|"
    r"(?:a few|a couple of|two|three|\d+) (?:days|weeks|months|years) ago))+$|[了啦哦呀吧的呢]+$",
    re.I,
)
_END_PUNCT = " \t.!?。！？,，;；:：~…"


def _clean(x: str) -> str:
    x = x.strip().rstrip(_END_PUNCT)
    previous = None
    while previous != x:
        previous = x
        x = _TRAILING.sub("", x).rstrip(_END_PUNCT)
    return x


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


_ES = ("s", "sh", "ch", "x", "z", "o")
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "am": "is", "are": "is", "be": "is"}


def third_person(phrase: str) -> str:
    """ "write tests first" -> "writes tests first" (the first word, if a plain verb)."""
    word, _, rest = phrase.partition(" ")
    if not word.isalpha() or not word.islower():
        return phrase
    if word in _IRREGULAR:
        verb = _IRREGULAR[word]
    elif word.endswith(_ES):
        verb = word + "es"
    elif word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        verb = word[:-1] + "ies"
    elif word.endswith("s"):
        verb = word
    else:
        verb = word + "s"
    return f"{verb} {rest}".strip()


@dataclass(frozen=True)
class _Hit:
    text: str
    type: str
    importance: float
    end: int  # where the statement ends in the clause


Make = Callable[[re.Match[str], str], str | None]


@dataclass(frozen=True)
class Rule:
    """A cue at the start of a clause: `x` is the statement's value (cut where the next
    statement starts); `make` writes the stored text, or None when it is no statement."""

    pattern: re.Pattern[str]
    type: str
    importance: float
    make: Make
    cue: str = ""  # "remember" / "correct": the value is itself a statement


def _rule(
    pattern: str, entry_type: str, importance: float, make: Make | str, cue: str = ""
) -> Rule:
    if isinstance(make, str):
        template = make

        def make(m: re.Match[str], x: str) -> str | None:
            parts = {k: (v or "").strip() for k, v in m.groupdict().items()}
            parts["x"] = x
            return template.format(**parts)

    return Rule(re.compile(pattern, re.I), entry_type, importance, make, cue)


def _unless(test: re.Pattern[str], template: str, third: bool = False) -> Make:
    """The template, unless the value starts like small talk ("I like that")."""

    def make(m: re.Match[str], x: str) -> str | None:
        if test.search(x):
            return None
        parts = {k: (v or "").strip() for k, v in m.groupdict().items()}
        parts["x"] = third_person(x) if third else x
        return template.format(**parts)

    return make


def _verb_s(m: re.Match[str], x: str) -> str | None:
    if _PRONOUN_OBJECT.search(x):
        return None
    verb = m.group("v").lower()
    if verb == "rather":
        return f"Would rather {x}"
    if verb == "prefer":
        return f"Prefers {x}"
    return f"{third_person(verb).capitalize()} {x}"


def _not_any_more(m: re.Match[str], x: str) -> str | None:
    return f"No longer {third_person(m.group('v').lower())} {x}"


def _my(m: re.Match[str], x: str) -> str | None:
    key = m.group("k").strip()
    first = key.split()[0].casefold().replace("'s", "").replace("’s", "")
    if first in _SMALL_TALK_KEYS or _SMALL_TALK_VALUES.search(x):
        return None
    return f"User's {key} {m.group('be').lower()} {x}"


def _has(m: re.Match[str], x: str) -> str | None:
    return None if _HAS_EXCLUDE.search(x) else f"Has {x}"


def _moved(m: re.Match[str], x: str) -> str | None:
    if re.search(r"\bteam\b", x, re.I):
        return f"Works on {x}"
    return f"Lives in {x}"


def _zh_my(m: re.Match[str], x: str) -> str | None:
    key = m.group("k")
    return None if key in _SMALL_TALK_KEYS else f"用户的{key}是{x}"


def _zh_unless_pronoun(template: str) -> Make:
    def make(m: re.Match[str], x: str) -> str | None:
        return None if _PRONOUN_OBJECT.search(x) else template.format(x=x)

    return make


def _as_said(m: re.Match[str], x: str) -> str | None:
    return x


def _mid_actually(m: re.Match[str], x: str) -> str | None:
    return re.sub(r"\s*,?\s*\bactually\b,?", "", x, flags=re.I).strip()


_I = (
    r"i\s+(?:(?:really|also|still|much|strongly|generally|definitely|now|currently|mostly|"
    r"mainly|only|just)\s+)*"
)

#: statements (what a "remember …" or a correction may hold as well)
STATEMENTS: list[Rule] = [
    _rule(
        _I + r"(?:don't|do not|dont|no longer)\s+(?P<v>use|work|live|like|drink|eat|prefer|want|"
        r"need|run|have|write|code)\s+(?P<x>.+?)\s*(?:any\s?more|any longer)\b.*",
        "correction",
        0.9,
        _not_any_more,
    ),
    _rule(r"i\s+no longer\s+(?P<v>\w+)\s+(?P<x>.+)", "correction", 0.9, _not_any_more),
    _rule(
        r"i(?:'m| am)\s+(?:not|no longer)\s+(?P<x>.+?)\s*(?:any\s?more|any longer)\b.*",
        "correction",
        0.9,
        "Is no longer {x}",
    ),
    _rule(
        r"(?P<s>(?:the|our|my)\s+.+?)\s+(?P<be>is|are)(?:n't|\s+not|\s+no longer)\s+"
        r"(?P<x>.+?)\s*(?:any\s?more|any longer)?$",
        "correction",
        0.9,
        lambda m, x: (
            f"{_capital(m.group('s'))} {m.group('be').lower()} no longer {x}"
            if re.search(r"any\s?more|any longer|no longer", m.group(0), re.I)
            else None
        ),
    ),
    _rule(
        r"(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+"
        r"(?:from\s+.+?\s+)?to\s+(?P<x>.+)",
        "correction",
        0.85,
        _moved,
    ),
    _rule(
        r"(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:switched|migrated|"
        r"changed|upgraded)\s+(?:over\s+)?(?:from\s+.+?\s+)?to\s+(?P<x>.+)",
        "correction",
        0.85,
        "Uses {x}",
    ),
    _rule(r"i(?:'d|\s+would)\s+(?P<v>rather|prefer)\s+(?P<x>.+)", "preference", 0.8, _verb_s),
    _rule(_I + r"(?P<v>prefer|like|love|enjoy)\s+(?P<x>.+)", "preference", 0.8, _verb_s),
    _rule(
        _I + r"(?:don't|do not|dont)\s+(?P<v>like|want|enjoy|use|need)\s+(?P<x>.+)",
        "preference",
        0.8,
        _unless(_PRONOUN_OBJECT, "Does not {v} {x}"),
    ),
    _rule(
        _I + r"(?:hate|dislike|can't stand|cannot stand|detest)\s+(?P<x>.+)",
        "preference",
        0.8,
        _unless(_PRONOUN_OBJECT, "Dislikes {x}"),
    ),
    _rule(r"call me\s+(?P<x>.+)", "preference", 0.85, "Prefers to be called {x}"),
    _rule(
        r"i\s+(?P<a>always|usually|normally|typically|generally|never|often|tend to)\s+(?P<x>.+)",
        "pattern",
        0.75,
        lambda m, x: (
            f"{third_person(m.group('a').lower()).capitalize()} {third_person(x)}"
            if m.group("a").lower() == "tend to"
            else f"{m.group('a').capitalize()} {third_person(x)}"
        ),
    ),
    _rule(
        r"(?:lesson learned|lesson|note to self|next time|in future|in the future)[:,]?"
        r"\s+(?P<x>.+)",
        "lesson",
        0.8,
        lambda m, x: _capital(x),
    ),
    _rule(
        r"(?:from now on|going forward|henceforth)[:,]?\s+(?P<x>.+)",
        "preference",
        0.85,
        lambda m, x: _capital(x),
    ),
    _rule(_I + r"work\s+(?P<p>at|for|in|on|as|from)\s+(?P<x>.+)", "fact", 0.75, "Works {p} {x}"),
    _rule(_I + r"live\s+(?P<p>in|at|near|on)\s+(?P<x>.+)", "fact", 0.75, "Lives {p} {x}"),
    _rule(
        r"i(?:'m| am)\s+(?:now\s+)?based\s+(?P<p>in|at|near)\s+(?P<x>.+)",
        "fact",
        0.75,
        "Lives {p} {x}",
    ),
    _rule(_I + r"use\s+(?P<x>.+)", "preference", 0.75, _unless(_PRONOUN_OBJECT, "Uses {x}")),
    _rule(
        r"i\s+(?:have|'ve got|have got)\s+(?P<x>(?:a|an|two|three|four|\d+)\s.+)",
        "fact",
        0.75,
        _has,
    ),
    _rule(r"my\s+(?P<k>[^\W\d_][\w'’ -]{0,40}?)\s+(?P<be>is|are)\s+(?P<x>.+)", "fact", 0.75, _my),
    _rule(r"i(?:'m| am)\s+an?\s+(?P<x>.+)", "fact", 0.7, _unless(_NOT_A_ROLE, "Is a {x}")),
    # Chinese
    _rule(r"我(?:已经|现在)?不再(?P<x>.+)", "correction", 0.9, "不再{x}"),
    _rule(
        r"我(?:已经|现在)?不(?P<v>用|喝|吃|住在|在)(?P<x>.+?)了", "correction", 0.9, "不再{v}{x}"
    ),
    _rule(r"我(?:们)?(?:已经|最近|刚|刚刚)?搬(?:家)?到了?(?P<x>.+)", "correction", 0.85, "住在{x}"),
    _rule(
        r"我(?:们)?(?:已经|最近|刚|刚刚)?(?:改用|换成|换到|换用)了?(?P<x>.+)",
        "correction",
        0.85,
        "用{x}",
    ),
    _rule(
        r"我(?:很|非常|真的)?(?P<v>不喜欢|讨厌)(?P<x>.+)",
        "preference",
        0.8,
        lambda m, x: None if _PRONOUN_OBJECT.search(x) else m.group("v") + x,
    ),
    _rule(
        r"我(?:很|非常|比较|更|最|也|还是|一直|真的)*喜欢(?P<x>.+)",
        "preference",
        0.8,
        _zh_unless_pronoun("喜欢{x}"),
    ),
    _rule(
        r"我(?:比较|更)?(?:偏好|倾向于|倾向)(?P<x>.+)",
        "preference",
        0.8,
        _zh_unless_pronoun("偏好{x}"),
    ),
    _rule(r"我(?P<a>总是|一般|通常|习惯|平时|每天)(?P<x>.+)", "pattern", 0.75, "{a}{x}"),
    _rule(
        r"(?:以后|今后|从现在开始|从今以后)(?:都|请|要)?[，,]?(?P<x>.+)", "preference", 0.85, "{x}"
    ),
    _rule(r"我(?:现在)?住在(?P<x>.+)", "fact", 0.75, "住在{x}"),
    _rule(r"我(?:现在)?在(?P<x>.+?)(?:工作|上班)", "fact", 0.75, "在{x}工作"),
    _rule(r"我的(?P<k>[^，,。是]{1,10}?)是(?P<x>.+)", "fact", 0.75, _zh_my),
    _rule(r"我叫(?P<x>[^了].*)", "fact", 0.75, "用户叫{x}"),
    _rule(r"我的(?P<k>[^，,。是]{1,10}?)叫(?P<x>.+)", "fact", 0.75, "用户的{k}叫{x}"),
    _rule(
        r"我(?:主要|一般)?(?:用|使用)(?P<x>(?!一下).+)",
        "preference",
        0.75,
        _zh_unless_pronoun("用{x}"),
    ),
]

#: cues whose value is a statement of its own
CUES: list[Rule] = [
    _rule(
        r"(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:do\s+)?(?:remember|keep in mind|"
        r"don't forget|do not forget|make a note|take note|note(?=\s*(?:that\b|:)))"
        r"(?!\s+(?:when|how|what|where|why|who|to|me|him|her|them|us)\b)"
        r"(?:\s+(?:that|this))?\s*[:,-]?\s*(?P<x>.+)",
        "fact",
        0.9,
        _as_said,
        "remember",
    ),
    _rule(
        r"(?:请|麻烦你?|你)?(?:记住|记一下|记下|记好|别忘了)(?:一下)?[：:，,]?\s*(?P<x>.+)",
        "fact",
        0.9,
        _as_said,
        "remember",
    ),
    _rule(
        r"(?:actually|correction|no|nope|wait|sorry|oops|scratch that|my mistake|i was wrong|"
        r"i misspoke)\b[,:!.—–-]*\s*(?:(?:it|that)(?:'s|\s+is|\s+was|\s+should be)\s+)?(?P<x>.+)",
        "correction",
        0.9,
        _as_said,
        "correct",
    ),
    _rule(
        r"(?:不对|不是的|错了|说错了|更正一下|更正|纠正一下|其实)[，,：:。!！]?\s*"
        r"(?:应该是|其实是)?(?P<x>.+)",
        "correction",
        0.9,
        _as_said,
        "correct",
    ),
    _rule(
        r"(?P<x>(?:the|our|my|we|it)\b.*?\bactually\b.+)",
        "correction",
        0.9,
        _mid_actually,
        "correct",
    ),
]


def _match(rules: Sequence[Rule], clause: str) -> _Hit | None:
    for rule in rules:
        m = rule.pattern.match(clause)
        if not m:
            continue
        bounded = m.end("x") < m.end()  # the pattern goes on after x ("在…工作")
        tail = clause[m.start("x") : m.end("x") if bounded else None]
        cut = _NEXT.search(tail)
        x = _clean(tail[: cut.start()] if cut else tail)
        if tail[:1].isspace() and x[:1].isascii():
            x = " " + x  # "我的工号是 TC-20931" keeps its space
        end = m.end() if bounded and not cut else m.start("x") + (cut.start() if cut else len(tail))
        if not x:
            continue
        text = rule.make(m, x)
        if not text:
            continue
        if rule.cue:
            inner = _match(STATEMENTS, _strip_filler(text))
            if inner is not None:
                kind = "correction" if rule.cue == "correct" else inner.type
                return _Hit(inner.text, kind, max(rule.importance, inner.importance), end)
            if rule.cue == "correct" and not (
                (_DECLARATIVE.search(text) and len(tokenize(text)) >= 3)
                or len(_CJK.findall(text)) >= 4
            ):
                continue
        return _Hit(_capital(_clean(text)), rule.type, rule.importance, end)
    return None


def _strip_filler(text: str) -> str:
    m = _FILLER.match(text)
    return text[m.end() :] if m else text


def _is_question(sentence: str) -> bool:
    s = sentence.rstrip(" \t.!。！~…")
    return (
        s.endswith(("?", "？"))
        or bool(_CJK.search(s) and s.endswith(("吗", "呢", "么")))
        or bool(_QUESTION_START.match(s))
    )


def statements(sentence: str) -> list[tuple[str, str, float]]:
    """(text, type, importance) of the explicit statements of one sentence: a cue at the
    start of any clause; none from a question (unless it asks to remember) or a
    hypothetical; hedged or passing ("today") statements score HEDGE_PENALTY lower."""
    question = _is_question(sentence)
    found: list[tuple[str, str, float]] = []
    consumed = 0
    starts = [0] + [m.end() for m in _CLAUSE.finditer(sentence)]
    for start in starts:
        if start < consumed:
            continue
        clause = _strip_filler(sentence[start:])
        offset = len(sentence) - len(clause)
        if question and not _REQUEST.match(clause):
            continue
        if _HYPOTHETICAL.search(sentence[:offset]):
            continue
        hit = _match(CUES, clause) or _match(STATEMENTS, clause)
        if hit is None:
            continue
        consumed = offset + hit.end
        said = sentence[start:consumed]
        penalty = HEDGE_PENALTY if _HEDGES.search(said) or _TRANSIENT.search(said) else 0.0
        found.append((hit.text, hit.type, round(hit.importance - penalty, 2)))
    return found


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
    stored: str | None = None  # the entry's text after ADD / UPDATE

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "id": self.entry_id,
            "text": self.candidate.text,
            "type": self.candidate.type,
            "importance": self.candidate.importance,
            "reason": self.reason,
            "stored": self.stored,
        }


def candidates(messages: Sequence[dict]) -> list[Candidate]:
    """Explicit statements the user made, scored; those below KEEP_AT are dropped."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for message in messages:
        if message.get("role") not in ("user", "human"):
            continue
        for sentence in split_sentences(strip_controls(message_text(message))):
            if len(sentence) < 3:
                continue
            for text, entry_type, score in statements(sentence):
                key = normalize_text(text)
                if score >= KEEP_AT and key not in seen:
                    seen.add(key)
                    found.append(Candidate(text, entry_type, score, sentence))
    return found


# ------------------------------------------------------------------ deciding

#: subject similarity (mean of word overlap and embedding cosine) from which a correction
#: updates an entry, and a statement with a new value or a new detail does
CORRECT_AT = 0.3
DETAIL_AT = 0.35
REWORD_AT = 0.6
POOL = 20  # entries per statement that are compared (and embedded), by word overlap
NEW_VALUE_AT = 0.2  # same subject (see `conflicting`), another value
SAME_SUBJECT = 0.75  # word overlap of two subjects ("the staging database") that are one
_PREFIXES = re.compile(r"^(?:user's|用户的|用户)\s*", re.I)
_VALUE_VERB = re.compile(r"\b(?:is|are|was|were|is no longer|are no longer)\b|是|叫", re.I)
_SINGLE = re.compile(r"^(?:lives (?:in|at)|works (?:at|for|as)|住在|在.+工作)", re.I)


def _words(text: str) -> frozenset[str]:
    return frozenset(tokenize(_PREFIXES.sub("", text)))


def _subject(text: str) -> tuple[frozenset[str], str] | None:
    """(subject words, value) of "X is Y" / "Lives in Y" / "X是Y", or None."""
    bare = _PREFIXES.sub("", text.split("\n")[0])
    single = _SINGLE.match(bare)
    if single:
        key = single.group().casefold()
        subject = "工作" if key.endswith("工作") else " ".join(key.split()[:2])
        return frozenset([subject]), normalize_text(bare[single.end() :])
    m = _VALUE_VERB.search(bare)
    if not m or m.start() == 0:
        return None
    subject = frozenset(tokenize(bare[: m.start()]))
    return (subject, normalize_text(bare[m.end() :])) if subject else None


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def conflicting(new: str, old: str) -> bool:
    """Same subject, another value: "The staging database is Postgres 17" / "… 16",
    "Lives in Lisbon" / "Lives in Berlin", "用户的编辑器是Helix" / "用户的编辑器是Vim"."""
    a, b = _subject(new), _subject(old)
    if a is None or b is None:
        return False
    if _jaccard(a[0], b[0]) < SAME_SUBJECT or not a[1] or not b[1]:
        return False
    return a[1] not in b[1] and b[1] not in a[1]  # "berlin" in "berlin, near x": a detail


def updated_text(old: str, new: str) -> str:
    """The entry's text once `new` replaces the clause of `old` it is about: "The on-call
    rotation is two weeks long; the handbook lives in the ops wiki" + "The on-call rotation
    is one week long" keeps the handbook clause."""
    if "\n" in old:
        return new
    parts = re.split(r"(\s*[;；]\s*)", old)
    if len(parts) < 3:
        return new
    clauses = parts[::2]
    mine = _words(new)
    scores = [_jaccard(mine, _words(c)) for c in clauses]
    best = max(range(len(clauses)), key=scores.__getitem__)
    if scores[best] == 0 or sorted(scores)[-2] == scores[best]:
        return new
    text = new.rstrip(_END_PUNCT)
    if best > 0 and clauses[best][:1].islower() and not text[1:2].isupper():
        text = text[:1].lower() + text[1:]
    parts[2 * best] = text
    return "".join(parts)


@dataclass
class _Known:
    """An entry of the workspace, or a statement added earlier in this conversation."""

    text: str
    entry: Entry | None
    vector: np.ndarray | None
    decision: int | None = None  # index of the decision that wrote it in this plan
    words: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.words = _words(self.text)


def _similarity(
    text: str, words: frozenset[str], vector: np.ndarray | None, known: _Known
) -> float:
    """Word overlap, averaged with the embedding cosine when both are English (the
    bundled model is English-only: its cosines of Chinese texts are noise)."""
    lex = _jaccard(words, known.words)
    if vector is None or known.vector is None or _CJK.search(text + known.text):
        return lex
    return (lex + float(np.dot(vector, known.vector))) / 2


def _same_opening(candidate: Candidate, known: _Known) -> bool:
    """The statement opens like the entry and goes on differently: "Prefers pytest over
    unittest, with fixtures" / "Prefers pytest over unittest for Python tests"."""
    a, b = tokenize(candidate.text), tokenize(known.text)
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n >= 3 and n * 2 >= len(b)


def plan(
    found: Sequence[Candidate],
    existing: Sequence[Entry],
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
) -> list[Decision]:
    """NOOP for what is already there (same text, or an entry whose words cover it);
    UPDATE for a correction of an entry (subject similarity ≥ CORRECT_AT), a new value for
    an entry's subject or a new detail of it (≥ DETAIL_AT), a new wording (≥ REWORD_AT);
    ADD otherwise. Subject similarity is the mean of word overlap and the cosine of
    `embed` (normalized vectors), or word overlap alone without it. Only the POOL entries
    of most word overlap with each statement are compared and embedded. A statement
    corrected later in the same conversation is dropped for the correction (NOOP,
    "corrected later in the conversation")."""
    mine = [_words(c.text) for c in found]
    every = frozenset().union(*mine) if mine else frozenset()
    sharing = [(e, _words(e.text)) for e in existing if e.type != "reflection"]
    sharing = [(e, w) for e, w in sharing if w & every]
    chosen: set[int] = set()
    for words in mine:  # the POOL entries of most word overlap with each statement
        ranked = sorted(range(len(sharing)), key=lambda i: -_jaccard(words, sharing[i][1]))
        chosen.update(i for i in ranked[:POOL] if sharing[i][1] & words)
    pool = [sharing[i][0] for i in sorted(chosen)]
    by_text = {normalize_text(e.text): e for e in existing}
    vectors = embed([c.text for c in found] + [e.text for e in pool]) if embed and found else None
    knowns = [
        _Known(e.text, e, vectors[len(found) + i] if vectors is not None else None)
        for i, e in enumerate(pool)
    ]
    decisions: list[Decision] = []
    for n, candidate in enumerate(found):
        vector = vectors[n] if vectors is not None else None
        same = by_text.get(normalize_text(candidate.text))
        if same is not None:
            decisions.append(Decision("NOOP", candidate, same.id, "already remembered"))
            continue
        words = mine[n]
        scored = sorted(
            ((_similarity(candidate.text, words, vector, k), k) for k in knowns),
            key=lambda pair: -pair[0],
        )
        target, why = next(
            (
                (k, f"new value for its subject ({s:.2f} similar)")
                for s, k in scored
                if s >= NEW_VALUE_AT and conflicting(candidate.text, k.text)
            ),
            (None, ""),
        )
        covered = next(
            (k for s, k in scored if words and words <= k.words and s >= CORRECT_AT), None
        )
        if target is None and covered is not None:
            entry_id = covered.entry.id if covered.entry is not None else None
            decisions.append(Decision("NOOP", candidate, entry_id, "covered"))
            continue
        correction = candidate.type == "correction"
        for sim, known in scored if target is None else ():
            if correction and sim >= CORRECT_AT:
                target, why = known, f"corrects ({sim:.2f} similar)"
            elif sim >= DETAIL_AT and (known.words <= words or _same_opening(candidate, known)):
                target, why = known, f"adds a detail ({sim:.2f} similar)"
            elif sim >= REWORD_AT and (known.entry is None or known.entry.type == candidate.type):
                target, why = known, f"rewords ({sim:.2f} similar)"
            if target is not None or sim < CORRECT_AT:
                break
        if target is None:
            decisions.append(Decision("ADD", candidate, None, "new", candidate.text))
            knowns.append(_Known(candidate.text, None, vector, len(decisions) - 1))
            continue
        if target.decision is not None:  # said earlier in this conversation: replace it
            earlier = decisions[target.decision]
            decisions[target.decision] = Decision(
                "NOOP", earlier.candidate, earlier.entry_id, "corrected later in the conversation"
            )
        if target.entry is None:
            decisions.append(Decision("ADD", candidate, None, why, candidate.text))
        else:
            text = updated_text(target.entry.text, candidate.text)
            decisions.append(Decision("UPDATE", candidate, target.entry.id, why, text))
        target.text, target.vector = candidate.text, vector
        target.words = words
        target.decision = len(decisions) - 1
    return decisions


def screen(decisions: Sequence[Decision]) -> list[Decision]:
    """ADD / UPDATE decisions whose statement looks like it holds a credential, or that
    `add` would refuse (control characters, too long), become SKIP with the reason.
    Credentials are redacted from every decision's text: the report is printed."""
    screened = []
    for decision in decisions:
        c = decision.candidate
        stored = decision.stored
        found = find(c.text) or (find(stored) if stored else [])
        if found:
            c = replace(c, text=redact(c.text), said=redact(c.said))
            stored = redact(stored) if stored else stored
        if decision.action in ("ADD", "UPDATE"):
            problem = (
                f"looks like it holds {describe(found)}: not remembered (use `memcli add "
                "--allow-secret` if it must be)"
                if found
                else text_problem(stored or c.text, "the statement")
            )
            if problem:
                screened.append(Decision("SKIP", c, None, problem))
                continue
        screened.append(replace(decision, candidate=c, stored=stored))
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
    from memcli.adapters.llm import LLMError

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
