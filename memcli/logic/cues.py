"""The cue rules of extract: what one clause says. Each Rule is a cue at the
start of a clause ("I prefer …", "my … is …", "remember that …", "actually, …", "我喜欢…",
"记住…", "不对，应该是…") with the entry type, importance and stored text it gives;
`match` applies the first that fits, cuts the value where the next statement starts,
and writes it as a short third-person statement ("Prefers …", "User's … is …", "住在…").
The cues of a "remember" or a correction hold a statement of their own, matched again.
Small talk ("I like that", "my bad") gives no statement. Over 500 lines: one table of
rules (a rule a few lines, one argument a line) and the matcher they share.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from memcli.index.tokenize import tokenize

#: a Chinese character
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
#: a date or a time said before or after a statement ("as of 1 March", "in 2024", "since
#: January", "last week"); not "May" alone (the verb), not a time ahead ("next week")
DATE = (
    r"(?:(?:(?:as of|since|starting(?:\s+(?:on|in))?|from|in|on|back in|by|until)\s+)?"
    r"(?:(?:early|late|mid)[\s-]+)?(?:(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
    r"(?:january|february|march|april|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|(?:19|20)\d\d|"
    r"(?:last|this|past)\s+(?:week|month|year|spring|summer|autumn|fall|winter|quarter|sprint))"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+(?:19|20)\d\d)?"
    r"|(?:as of|since|starting|from|in|back in)\s+may(?:\s+\d{1,2}(?:st|nd|rd|th)?)?)"
)
_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
#: a date or a time after a statement's value, where the value ends ("moved to Lisbon in
#: May", "at Initech since March", "for three months"); a bare year is a name's ("SQL
#: Server 2019")
AFTER = (
    r"(?:(?:as of|since|ever since|starting|from|in|on|back in|until)\s+"
    r"(?:(?:early|late|mid)[\s-]+)?"
    r"(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?)?(?:" + _MONTHS + r"|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|(?:19|20)\d\d)"
    r"|(?:last|this|past)\s+(?:week|month|year|spring|summer|autumn|fall|winter|quarter|sprint)"
    r"|for\s+(?:a|an|the|some|several|many|a few|a couple of|\d+|one|two|three|four|five|six|"
    r"seven|eight|nine|ten)\s+(?:\w+\s+)?(?:days?|weeks?|months?|years?|while|ages))\b"
)
#: a Chinese date before a statement ("今年三月", "去年年底", "2023 年")
_ZH_DATE = (
    r"(?:(?:今年|去年|前年|上个?月|上周|本月|这个月|年初|月初|前几天|前阵子|"
    r"(?:19|20)\d\d\s*年|[一二三四五六七八九十\d]{1,3}\s*月份?|[一二三四五六七八九十\d]{1,3}\s*[号日])+"
    r"(?:的时候|开始|起)?)"
)
#: words that open a clause without changing what it says ("oh and also remember …")
_FILLER = re.compile(
    r"(?:[-*•·]+\s+|(?:" + DATE + r"|and|also|oh|ah|btw|by the way|fyi|ok(?:ay)?|so|plus|anyway|"
    r"one more thing|well|"
    r"hey|but|then|ps|i think|i guess|i suppose|i believe|honestly|to be honest|tbh|yeah|yep|yup|"
    r"yes|right|sure|confirming|confirmed|update|memory update|profile update|fwiw|"
    r"personally|for the record|kindly|(?:please\s+)?note(?=\s+(?:my|our)\b)|heads up|"
    r"now(?!\s+that\b)|these days|nowadays|lately|"
    r"since|because|(?:i\s+(?:hereby\s+)?(?:(?:wish|want|would like|'d like)\s+to\s+)?)?"
    r"(?:inform you|let you know|advise(?:\s+you)?)(?:\s+that)?|"
    r"(?:please\s+)?be advised(?:\s+that)?|just so you know|as of (?:this|last)\s+\w+|"
    r"as of (?:monday|tuesday|wednesday|thursday|friday|today|now)|"
    r"(?:just\s+a\s+|quick\s+)?reminder(?:\s+that)?|(?:life|quick|status)\s+updates?|"
    r"after\s+(?:(?:like|about|almost|nearly|over)\s+)?(?:\w+\s+)?(?:years?|months?|weeks?)|"
    r"after\s+(?:the|a|an|my|our)\s+[\w-]+)\b"
    r"[\s,:;.!—–-]*"
    r"|(?:"
    + _ZH_DATE
    + r"|对了|顺便说一下|顺便说一句|顺便提一下|顺便|另外|还有|哦|噢|嗯|好的|而且|然后|我觉得|"
    r"不过|但是|可是|说实话|其实吧)[\s，,：:。!！]*)+",
    re.I,
)
#: where a statement's value ends: the next clause starts a statement of its own
_NEXT = re.compile(
    r"\s*(?:[,;]|\s(?:and|but|so)\b)\s*(?:(?:and|but|also|so|btw|oh|plus)\s+)*"
    r"(?=(?:i|i'm|i've|i'd|my|remember|please remember|actually)\s)"
    r"|\s+(?:since|because)\s+(?=(?:i|i'm|i've|we|we're|we've)\s)"
    r"|\s*[，；,;]\s*(?=我|记住|对了|顺便|另外|还有)",
    re.I,
)
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
#: values that say how a thing is doing, not what it is ("the staging db is down")
SMALL_TALK_VALUES = re.compile(
    r"^(?:fine|good|great|ok|okay|done|broken|down|slow|failing|working|dead|busy|full|"
    r"tired|bad|better|worse|almost|still|so|too|pretty|really|very|kinda|a bit|not|"
    r"over|here|there|gone|cold|hot|warm|empty|late|ready|stuck|missing|lost|loud|quiet|"
    r"open|closed|on|off|out|away|sick|back)\b",
    re.I,
)
_NOT_A_ROLE = re.compile(
    r"^(?:bit|little|tad|lot|mess|idiot|fool)\b|^\S+(?:\s+\S+)?\s+(?:person|fan|user|guy|girl)\b",
    re.I,
)
_HAS_EXCLUDE = re.compile(
    r"\b(?:question|problem|meeting|idea|bug|issue|call|doubt|minute|sec|second|moment|"
    r"feeling|headache|cold|suggestion|request|favou?r)s?\b",
    re.I,
)
_TRAILING = re.compile(
    r"(?:[\s,]+(?:now|these days|nowadays|from now on|going forward|btw|fwiw|tbh|ftw|though|"
    r"thanks|thank you|please|as always|as usual|as before|as ever|still|"
    r"honestly|lol|haha|:\)|any\s?more|any longer|recently|yesterday|again|for me|for good|"
    r"ages ago|a while ago|long ago|a while back|"
    r"(?:this|next|last) (?:week|month|year|sprint|spring|summer|autumn|fall|winter)|"
    r"(?:in|since|from) (?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december|spring|summer|autumn|winter|the spring|the summer|\d{4})|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|the first)|"
    r"(?:a few|a couple of|two|three|\d+) (?:days|weeks|months|years) ago))+$|[了啦哦呀吧的呢]+$"
    r"|(?:好几个|几个|[一二三四五六七八九十两\d]+个?)(?:月|年|周|星期|礼拜|天)了?$",
    re.I,
)
END_PUNCT = " \t.!?。！？,，;；:：~…"
#: where a short value (a name, a place, a tool) ends: its clause does
_SHORT = re.compile(
    r"\s*(?:[,;，；。\u2600-\u27bf\U0001f000-\U0001faff]|\s[—–-]\s"
    r"|\s(?:and|but|so|then|which|who|since|as|because)\s)"
    r"|\s(?<!\ba\s)(?=(?:i|i'm|i've|i'd|we|we're|we've|when|while|after|during|across|until|"
    r"over the|"
    r"in favou?r of|now|these days|nowadays|going forward)\b)"
    r"|\s(?=(?:for|at|with)\s+(?:the|a|an|my|our|work|home)\b)"  # "Zurich for the new role"
    r"|\s(?=" + AFTER + r")|\s*\(",
    re.I,
)
#: the old value a one-value statement names as the one it replaces: "Leipzig now, not
#: Munich", "Helix instead of Vim", "莱比锡了，不在慕尼黑了"
_REPLACED = re.compile(
    r"(?:\s*,\s*(?:but\s+)?(?:not|no longer)|\s+(?:instead of|rather than))\s+"
    r"(?:(?:in|at|on|for|from|with|the)\s+)*(?P<old>[^,;]+?)\s*(?:any\s?more|any longer)?$"
    r"|\s*[，,]\s*而?(?:不是|不再是|不再住在|不住在|不在|不再用|不用)(?P<zh>[^，,。]+?)了?$",
    re.I,
)


#: emoji and symbols at the end of a clause ("sold my Subaru 😢")
_SYMBOLS = re.compile(r"[\s\u2190-\u2bff\U0001f000-\U0001faff\ufe0f\u200d]+$")
_MY = re.compile(r"^my\s+", re.I)
_USERS = "User's "


def _clean(x: str) -> str:
    x = x.strip().rstrip(END_PUNCT)
    previous = None
    while previous != x:
        previous = x
        x = _TRAILING.sub("", x).rstrip(END_PUNCT)
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
class Hit:
    text: str
    type: str
    importance: float
    end: int  # where the statement ends in the clause
    replaces: str = ""  # the old value the statement names ("…, not Munich" -> "Munich")
    slot: str = ""  # the slot it gives a value (memcli.logic.slots), when the rule knows it
    value: str = ""  # the new value, when the rule knows it ("Initech")
    drop: str = ""  # it only says `replaces` holds no more: how (see Rule.drop)


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
    slot: bool = False  # one value per person (where one lives, works, what one uses)
    #: x is an old value that holds no more: "I no longer use X" ("own": its text is the
    #: statement), "I quit / gave up X" ("frame": the entry it names said no longer in its
    #: own wording, "No longer works at X"; naming none, its text), "I left / sold X"
    #: ("named": a statement only of an entry it names; "I left my keys" is none); "held":
    #: x is a value said to hold still ("still at Globex", "还在阿里"), the NOOP of an entry
    #: that names it, else no statement; "swap": x is a new value of no slot the lexicon
    #: knows, for an old one named ("left Munich for Lisbon"): the new value of the entry
    #: naming the old one, else no statement; "slot": x names a slot said to change ("my
    #: manager changed"), "moved": likewise, only with the new value said beside it
    drop: str = ""
    slot_name: str = ""  # the slot the rule's value is of ("employer"), when it knows
    short: bool = False  # the value ends at the clause's end ("Initech, having left …")


def rule(
    pattern: str,
    entry_type: str,
    importance: float,
    make: Make | str,
    cue: str = "",
    *,
    slot: bool = False,
    drop: str = "",
    slot_name: str = "",
    short: bool = False,
) -> Rule:
    if isinstance(make, str):
        template = make

        def make(m: re.Match[str], x: str) -> str | None:
            parts = {k: (v or "").strip() for k, v in m.groupdict().items()}
            parts["x"] = x
            return template.format(**parts)

    return Rule(
        re.compile(pattern, re.I),
        entry_type,
        importance,
        make,
        cue,
        slot or bool(slot_name),
        drop,
        slot_name,
        short,
    )


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
    if _PRONOUN_OBJECT.search(x):  # "don't use it any more": of what, it does not say
        return None
    return f"No longer {third_person(m.group('v').lower())} {x}"


def _my(m: re.Match[str], x: str) -> str | None:
    key = m.group("k").strip()
    first = key.split()[0].casefold().replace("'s", "").replace("’s", "")
    if first in _SMALL_TALK_KEYS or SMALL_TALK_VALUES.search(x):
        return None
    return f"User's {key} {m.group('be').lower()} {x}"


def _has(m: re.Match[str], x: str) -> str | None:
    return None if _HAS_EXCLUDE.search(x) else f"Has {x}"


def _moved(m: re.Match[str], x: str) -> str | None:
    if re.search(r"\bteam\b", x, re.I):
        return f"Works on {x}"
    if x[:1].islower() and re.search(r"\bI\b", m.string):  # "I moved to platform": one
        return None  # who writes "I" with a capital writes a place's name with one
    return f"Lives in {x}"


def _zh_my(m: re.Match[str], x: str) -> str | None:
    key = m.group("k")
    return None if key in _SMALL_TALK_KEYS else f"用户的{key}是{x}"


def _zh_unless_pronoun(template: str) -> Make:
    def make(m: re.Match[str], x: str) -> str | None:
        return None if _PRONOUN_OBJECT.search(x) else template.format(x=x)

    return make


def _habit(m: re.Match[str], x: str) -> str | None:
    """ "I always run the tests first" -> "Always runs the tests first"; none from a verb in
    the past ("I never worked at Initech": what was, not a habit)."""
    verb = x.split()[0].casefold() if x.split() else ""
    if verb.endswith("ed") and not verb.endswith("eed"):
        return None
    if m.group("a").lower() == "tend to":
        return f"{third_person(m.group('a').lower()).capitalize()} {third_person(x)}"
    return f"{m.group('a').capitalize()} {third_person(x)}"


def _as_said(m: re.Match[str], x: str) -> str | None:
    return x


def _mid_actually(m: re.Match[str], x: str) -> str | None:
    return re.sub(r"\s*,?\s*\bactually\b,?", "", x, flags=re.I).strip()


_I = (
    r"i\s+(?:(?:really|also|still|much|strongly|generally|definitely|now|currently|mostly|"
    r"mainly|only|just|personally|myself)\s+)*"
)

#: statements (what a "remember …" or a correction may hold as well)
STATEMENTS: list[Rule] = [
    rule(  # the clause ends at "any more": "…, I'm on Zed" is a statement of its own
        r"(?:" + _I + r")?(?:don't|do not|dont|no longer)\s+(?P<v>use|work|live|like|drink|eat|"
        r"prefer|want|need|run|have|write|code|play|drive|go to|attend|own)\s+(?P<x>.+?)\s*"
        r"(?:any\s?more|any longer)\b",
        "correction",
        0.9,
        _not_any_more,
        drop="own",
    ),
    rule(r"i\s+no longer\s+(?P<v>\w+)\s+(?P<x>.+)", "correction", 0.9, _not_any_more, drop="own"),
    rule(
        r"i(?:'m| am)\s+(?:not|no longer)\s+(?P<x>.+?)\s*(?:any\s?more|any longer)\b.*",
        "correction",
        0.9,
        "Is no longer {x}",
        drop="own",
    ),
    rule(r"i(?:'m| am)\s+no longer\s+(?P<x>.+)", "correction", 0.9, "Is no longer {x}", drop="own"),
    rule(
        r"(?P<s>(?:the|our|my)\s+.+?)\s+(?P<be>is|are)(?:n't|\s+not|\s+no longer)\s+"
        r"(?P<x>.+?)\s*(?:any\s?more|any longer)?$",
        "correction",
        0.9,
        lambda m, x: (
            f"{_capital(_MY.sub(_USERS, m.group('s')))} {m.group('be').lower()} no longer {x}"
            if re.search(r"any\s?more|any longer|no longer", m.group(0), re.I)
            else None
        ),
        drop="own",
    ),
    rule(
        r"(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+"
        r"(?:from\s+.+?\s+)?to\s+(?P<x>.+)",
        "correction",
        0.85,
        _moved,
        slot=True,
    ),
    rule(
        r"(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:switched|migrated|"
        r"changed|upgraded)\s+(?:over\s+)?(?:from\s+.+?\s+)?to\s+(?P<x>.+)",
        "correction",
        0.85,
        "Uses {x}",
        slot=True,
    ),
    rule(r"i(?:'d|\s+would)\s+(?P<v>rather|prefer)\s+(?P<x>.+)", "preference", 0.8, _verb_s),
    rule(_I + r"(?P<v>prefer|like|love|enjoy)\s+(?P<x>.+)", "preference", 0.8, _verb_s),
    rule(
        _I + r"(?:don't|do not|dont)\s+(?P<v>like|want|enjoy|use|need)\s+(?P<x>.+)",
        "preference",
        0.8,
        _unless(_PRONOUN_OBJECT, "Does not {v} {x}"),
    ),
    rule(
        _I + r"(?:hate|dislike|can't stand|cannot stand|detest)\s+(?P<x>.+)",
        "preference",
        0.8,
        _unless(_PRONOUN_OBJECT, "Dislikes {x}"),
    ),
    rule(r"call me\s+(?P<x>.+)", "preference", 0.85, "Prefers to be called {x}"),
    rule(
        r"i\s+(?P<a>always|usually|normally|typically|generally|never|often|tend to)\s+(?P<x>.+)",
        "pattern",
        0.75,
        _habit,
    ),
    rule(
        r"(?:lesson learned|lesson|note to self|next time|in future|in the future)[:,]?"
        r"\s+(?P<x>.+)",
        "lesson",
        0.8,
        lambda m, x: _capital(x),
    ),
    rule(
        r"(?:from now on|going forward|henceforth)[:,]?\s+(?P<x>.+)",
        "preference",
        0.85,
        lambda m, x: _capital(x),
    ),
    rule(
        _I + r"work\s+(?P<p>at|for|in|on|as|from)\s+(?P<x>.+)",
        "fact",
        0.75,
        "Works {p} {x}",
        slot=True,
    ),
    rule(_I + r"live\s+(?P<p>in|at|near|on)\s+(?P<x>.+)", "fact", 0.75, "Lives {p} {x}", slot=True),
    rule(
        r"i(?:'m| am)\s+(?:now\s+)?based\s+(?P<p>in|at|near)\s+(?P<x>.+)",
        "fact",
        0.75,
        "Lives {p} {x}",
        slot=True,
    ),
    rule(
        _I + r"use\s+(?P<x>.+)",
        "preference",
        0.75,
        _unless(_PRONOUN_OBJECT, "Uses {x}"),
        slot=True,
    ),
    rule(
        r"i\s+(?:have|'ve got|have got)\s+(?P<x>(?:a|an|two|three|four|\d+)\s.+)",
        "fact",
        0.75,
        _has,
    ),
    rule(
        r"my\s+(?P<k>[^\W\d_][\w'’ -]{0,40}?)\s+(?P<be>is|are)\s+(?:now\s+)?(?P<x>.+)",
        "fact",
        0.75,
        _my,
        slot=True,
    ),
    rule(r"i(?:'m| am)\s+an?\s+(?P<x>.+)", "fact", 0.7, _unless(_NOT_A_ROLE, "Is a {x}")),
    # what one is learning: of no slot ("I'm learning Rust" is not one's main language)
    rule(
        r"i(?:'m| am)\s+(?:(?:now|currently|also)\s+)?learning\s+(?P<x>.+)",
        "skill",
        0.75,
        _unless(_PRONOUN_OBJECT, "Is learning {x}"),
    ),
    # Chinese
    rule(
        r"我(?:已经|现在)?不再(?P<v>用|使用|去|喝|吃|开|住在|在)?(?P<x>.+)",
        "correction",
        0.9,
        "不再{v}{x}",
        drop="own",
    ),
    rule(
        r"我(?:已经|现在)?不(?P<v>用|喝|吃|住在|在|去|开)(?P<x>.+?)了",
        "correction",
        0.9,
        "不再{v}{x}",
        drop="own",
    ),
    rule(
        r"我(?:们)?(?:已经|最近|刚|刚刚)?搬(?:家)?到了?(?P<x>.+)",
        "correction",
        0.85,
        "住在{x}",
        slot=True,
    ),
    rule(
        r"我(?:们)?(?:已经|最近|刚|刚刚)?(?:改用|换成|换到|换用)了?(?P<x>.+)",
        "correction",
        0.85,
        "用{x}",
        slot=True,
    ),
    rule(
        r"我(?:很|非常|真的)?(?P<v>不喜欢|讨厌)(?P<x>.+)",
        "preference",
        0.8,
        lambda m, x: None if _PRONOUN_OBJECT.search(x) else m.group("v") + x,
    ),
    rule(
        r"我(?:很|非常|比较|更|最|也|还是|一直|真的|现在|如今|最近)*喜欢(?P<x>.+)",
        "preference",
        0.8,
        _zh_unless_pronoun("喜欢{x}"),
    ),
    rule(
        r"我(?:比较|更)?(?:偏好|倾向于|倾向)(?P<x>.+)",
        "preference",
        0.8,
        _zh_unless_pronoun("偏好{x}"),
    ),
    rule(r"我(?P<a>总是|一般|通常|习惯|平时|每天)(?P<x>.+)", "pattern", 0.75, "{a}{x}"),
    rule(
        r"(?:以后|今后|从现在开始|从今以后)(?:都|请|要)?[，,]?(?P<x>.+)", "preference", 0.85, "{x}"
    ),
    rule(r"我(?:现在)?住在(?P<x>.+)", "fact", 0.75, "住在{x}", slot=True),
    rule(r"我(?:现在)?在(?P<x>.+?)(?:工作|上班)", "fact", 0.75, "在{x}工作", slot=True),
    rule(r"我的(?P<k>[^，,。是]{1,10}?)是(?P<x>.+)", "fact", 0.75, _zh_my, slot=True),
    rule(r"我叫(?P<x>[^了].*)", "fact", 0.75, "用户叫{x}"),
    rule(r"我的(?P<k>[^，,。是]{1,10}?)叫(?P<x>.+)", "fact", 0.75, "用户的{k}叫{x}"),
    rule(
        r"我(?:主要|一般)?(?:用|使用)(?P<x>(?!一下).+)",
        "preference",
        0.75,
        _zh_unless_pronoun("用{x}"),
        slot=True,
    ),
]

#: cues whose value is a statement of its own
CUES: list[Rule] = [
    rule(
        r"(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:do\s+)?(?:remember|keep in mind|"
        r"don't forget|do not forget|make a note|take note|note(?=\s*(?:that\b|:)))"
        r"(?!\s+(?:when|how|what|where|why|who|to|me|him|her|them|us)\b)"
        r"(?:\s+(?:that|this))?\s*[:,-]?\s*(?P<x>.+)",
        "fact",
        0.9,
        _as_said,
        "remember",
    ),
    rule(
        r"(?:请|麻烦你?|你)?(?:记住|记一下|记下|记好|别忘了)(?:一下)?[：:，,]?\s*(?P<x>.+)",
        "fact",
        0.9,
        _as_said,
        "remember",
    ),
    rule(
        r"(?:actually|correction|no|nope|wait|sorry|oops|scratch that|my mistake|i was wrong|"
        r"i misspoke)\b[,:!.—–-]*\s*(?:(?:it|that)(?:'s|\s+is|\s+was|\s+should be)\s+)?(?P<x>.+)",
        "correction",
        0.9,
        _as_said,
        "correct",
    ),
    rule(
        r"(?:不对|不是的|错了|说错了|更正一下|更正|纠正一下|其实)[，,：:。!！]?\s*"
        r"(?:应该是|其实是)?(?P<x>.+)",
        "correction",
        0.9,
        _as_said,
        "correct",
    ),
    rule(
        r"(?P<x>(?:the|our|my|we|it)\b.*?\bactually\b.+)",
        "correction",
        0.9,
        _mid_actually,
        "correct",
    ),
]


def match(rules: Sequence[Rule], clause: str, inner: Sequence[Rule] = ()) -> Hit | None:
    """The first rule that fits the start of `clause`, as a Hit; a cue's own statement is
    matched against `inner` (STATEMENTS unless given)."""
    clause = _SYMBOLS.sub("", clause).rstrip(END_PUNCT)
    for rule in rules:
        m = rule.pattern.match(clause)
        if not m:
            continue
        bounded = m.end("x") < m.end()  # the pattern goes on after x ("在…工作")
        tail = clause[m.start("x") : m.end("x") if bounded else None]
        cut = (_SHORT if rule.short else _NEXT).search(tail) or _NEXT.search(tail)
        if rule.slot and not rule.short:  # one value: it never runs past a ";"
            semi = re.search(r"\s*[;；]", tail)
            cut = semi if semi and (cut is None or semi.start() < cut.start()) else cut
        if rule.short and cut and rule.slot:  # "Berlin, not Leipzig": the old value, named
            rest = tail[cut.start() :]
            after = _SHORT.search(rest, 1)
            named = _REPLACED.match(rest[: after.start() if after else None].rstrip(END_PUNCT))
            if named and (named.group("old") or named.group("zh")):
                tail = tail[: cut.start()] + rest[: named.end()]
                cut = _SHORT.search(tail, cut.start() + named.end()) if named else cut
        value = (tail[: cut.start()] if cut else tail).rstrip(END_PUNCT)
        named = _REPLACED.search(value) if rule.slot else None
        replaces = _clean(named.group("old") or named.group("zh")) if named else ""
        x = _clean(value[: named.start()] if named else value)
        if tail[:1].isspace() and x[:1].isascii():
            x = " " + x  # "我的工号是 TC-20931" keeps its space
        end = m.end() if bounded and not cut else m.start("x") + (cut.start() if cut else len(tail))
        if rule.slot and bounded and not cut and not named:  # "在美团工作，不在阿里巴巴了"
            named = _REPLACED.match(clause[m.end() :].rstrip(END_PUNCT))
            replaces = _clean(named.group("old") or named.group("zh")) if named else ""
            end += named.end() if named else 0
        if not x:
            continue
        text = rule.make(m, x)
        if not text or (CJK.search(text) and not CJK.search(clause)):
            continue  # a Chinese rule's statement from an English clause ("joining Initech")
        if rule.cue:
            said = match(inner or STATEMENTS, strip_filler(text))
            if said is not None and said.drop == "bare":  # a value alone: its clause's own
                continue
            if said is not None:
                kind = "correction" if rule.cue == "correct" else said.type
                importance = max(rule.importance, said.importance)
                return replace(said, type=kind, importance=importance, end=end)
            if rule.cue == "correct" and not (
                (_DECLARATIVE.search(text) and len(tokenize(text)) >= 3)
                or len(CJK.findall(text)) >= 4
            ):
                continue
        old = m.groupdict().get("old")
        if old and not replaces:  # "switched from Vim to Helix", "replaced Vim with Helix"
            replaces = _clean(old)
        if rule.drop in ("slot", "moved"):  # the slot's noun, as the rule says ("moved": home)
            replaces, x = text.strip(), ""
        elif rule.drop and rule.drop not in ("bare", "swap"):
            replaces, x = x.strip(), ""
        replaces = re.sub(r"^(?:the|my|our|a|an|being)\s+", "", replaces, flags=re.I)
        value = x.strip() if rule.slot else ""
        return Hit(
            _capital(_clean(text)),
            rule.type,
            rule.importance,
            end,
            replaces,
            rule.slot_name,
            value,
            rule.drop,
        )
    return None


def strip_filler(text: str) -> str:
    m = _FILLER.match(text)
    return text[m.end() :] if m else text
