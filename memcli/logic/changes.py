"""The ways people say a change or a new fact, English and Chinese (extract, DESIGN §7):
verbs of leaving, selling, giving up ("I left X", "sold the X", "gave up on X", "离职",
"卖了"), of joining and moving ("started at Y", "I'm at Y now", "relocated to Y", "跳槽到Y",
"搬回Y"), of switching ("switched to", "went back to", "Y instead of X", "replaced X
with Y", "换成", "改成", "改用"), and the markers of a present state that replaces an
older one ("now", "these days", "no longer", "any more", "不再", "现在", "已经…了").
Each is a memcli.logic.cues Rule: the slot its value is of when the verb says it
(employer, home, car, team …; memcli.logic.slots finds it otherwise), and for a value
given up (`drop`) how it is said. Which entry a change concerns is
memcli.logic.extract's decision. Over 500 lines: one table of rules, a rule a few lines
(one argument a line), read top to bottom.
"""

from __future__ import annotations

import re

from memcli.logic.cues import AFTER, SMALL_TALK_VALUES, Make, Rule, rule, third_person
from memcli.logic.slots import category, noun_slot

#: who says it, or nobody ("sold the Subaru", "moved to Lisbon in May": chat drops the "I")
_S = (
    r"(?:(?:i|we|the\s+(?:whole\s+)?family|my family)(?:'ve|'d|'m|'re|\s+have|\s+had|\s+am|\s+are)?"
    r"\s+)?(?:(?:just|finally|recently|"
    r"also|already|actually|basically|officially|now|since|then|eventually|been)\s+)*"
)
#: a present state, said as one that replaces an older one
_NOW = r"(?:now|these days|nowadays|at this point|for good|any\s?more|again)"
#: where a value ends (Rule.short cuts it there too)
_END = (
    r"(?=\s*(?:$|[,;，；。.!?]|\s(?:and|but|so|which)\s)"
    r"|\s+(?:tbh|lol|haha|fwiw|btw|honestly|ftw|imo|for real)\s*$"
    r"|\s+(?:" + AFTER + r"|since)\b)"
)
#: what a value may be: no clause punctuation
_V = r"(?P<x>[^,;.，；。]+?)"
#: a value alone: a few words, no clause punctuation
_FEW = r"(?P<x>(?:[^\s,;.:，；。：]+\s+){0,3}?[^\s,;.:，；。：]+?)"
#: values that are places one is at, not employers ("I'm at home now")
_NOT_EMPLOYER = re.compile(
    r"^(?:the|a|an|home|work|my|our|his|her|their|this|that|it|last|least|most|risk|"
    r"peace|ease|lunch|school|the office|church)\b",
    re.I,
)
_NOT_HOME = re.compile(r"^(?:the|a|an|my|our|this|that|it|there|here|bed|town)\b", re.I)


def _employer(m: re.Match[str], x: str) -> str | None:
    return None if _NOT_EMPLOYER.search(x) else f"Works at {x}"


def _home(m: re.Match[str], x: str) -> str | None:
    if _NOT_HOME.search(x):
        return None
    if _lower_name(m, x):  # "I moved to platform": no place
        return None
    if category(x):  # "I live in VS Code these days": a tool, not a place
        return f"Uses {x}"
    return f"Works on {x}" if re.search(r"\bteam\b", x, re.I) else f"Lives in {x}"


def _uses(m: re.Match[str], x: str) -> str | None:
    """A new value said by a verb that does not say its slot ("switched to Helix")."""
    if re.match(r"(?:it|that|this|them|the (?:main|master) branch)\b", x, re.I):
        return None
    if not category(x) and re.search(r"\bteam\b", x, re.I):
        return f"Works on {x}"
    if not category(x) and (_lower_name(m, x) or re.fullmatch(r"[a-z]+ \d+", x)):
        return None  # "I moved to platform", "switched to tab 3": no name
    return f"Uses {x}"


def _lower_name(m: re.Match[str], x: str) -> bool:
    """A value in lower case from one who writes "I" with a capital: no name ("I moved to
    platform"); all in lower case, chat's ("moved to berlin") may be."""
    return x[:1].islower() and re.search(r"\bI\b", m.string) is not None


#: words of a clause, not of a name
_CLAUSE_WORDS = re.compile(
    r"\b(?:is|was|are|were|has|had|have|that|what|which|who|it|so|but|i|we|you)\b", re.I
)


def _known(m: re.Match[str], x: str) -> str | None:
    """A bare value ("Tesla now", "emacs now, not vim"): only one the lexicon knows, and
    only a name ("zsh was fine" is a clause, not a value)."""
    if _CLAUSE_WORDS.search(x) or re.search(r">|→", x):  # "tea > coffee": two values
        return None
    return f"Uses {x}" if category(x) else None


def _car(m: re.Match[str], x: str) -> str | None:
    bare = re.sub(r"^(?:a|an|the|my)\s+", "", x, flags=re.I)
    article = "an" if bare[:1].lower() in "aeiou" else "a"
    return f"Drives {article} {bare}"


def _is(m: re.Match[str], x: str) -> str | None:
    return f"Is {x}" if category(x) == "diet" else None


def _drop(verb: str) -> Make:
    def make(m: re.Match[str], x: str) -> str | None:
        if re.match(r"(?:it|that|this|them|him|her|you)\b", x, re.I):
            return None
        return f"{verb} {x}"

    return make


def _subject_changed(m: re.Match[str], x: str) -> str | None:
    """ "staging db got upgraded to postgres 17", "Timezone changed to UTC": a subject that
    names a slot of one's own (not a person, not the team as a whole)."""
    subject = m.group("s").strip()
    if noun_slot(subject) in ("", "team", "manager"):  # the team, a person: not a value
        return None
    return f"The {subject} is {x}"


def _zh_switched(m: re.Match[str], x: str) -> str | None:
    """ "手机换成 iPhone 15 了" names its slot; "改成 VS Code 了" leaves it to the value; "我妹
    换成…", "把配置改成…", "文档里说要改成…" are someone else's, a request, or hearsay."""
    key = re.sub(
        r"^(?:我的|我们|我|团队|本人)|^(?:上周|上个月|最近|去年|今年|前几天|昨天|刚刚?|终于|已经|也|后来|"
        r"然后|之后|现在|如今)+|已经$",
        "",
        m.group("k") or "",
    )
    if key and not noun_slot(key):
        return None
    return f"用户的{key}是{x}" if key else f"用{x}"


def _zh_of_noun(m: re.Match[str], x: str) -> str | None:
    """ "手机换成 iPhone 15 了", "新经理是张伟": the value of the slot the noun names; not of a
    thing pointed at ("这台电脑是公司的", "那个手机…"), nor a value that says whose or how it
    is made ("…是我同事的", "…是 Java 写的")."""
    key = m.group("k")
    if not noun_slot(key) or re.match(r"[这那该此]", key) or m.group("x").rstrip().endswith("的"):
        return None
    return f"用户的{key}是{x}"


def _zh_no_more(m: re.Match[str], x: str) -> str | None:
    """ "不再用 Vim", "已经不喝咖啡了": a value given up; "不用 Java" alone (no 了, 再, 已经) is
    "no need to", said of a task ("这个脚本用 Python 写就行，不用 Java")."""
    if m.group("no") == "不" and m.group("v") == "用" and not (m.group("le") or m.group("when")):
        return None
    return f"不再{m.group('v')}{x}"


def _zh_car(m: re.Match[str], x: str) -> str | None:
    """ "开{x}" for a car the lexicon knows ("换了辆蔚来", "开上特斯拉了")."""
    return f"开{x}" if category(x) == "car" else None


def _zh_uses(m: re.Match[str], x: str) -> str | None:
    """ "现在用 Cursor", "用浅色主题": a tool the lexicon knows, or a theme; "用 Python 写了个
    脚本" is something done once (了 inside), not what one uses."""
    if re.search(r"了.", x):
        return None
    return f"用{x}" if category(x) or re.search(r"(?:主题|模式|字体)$", x) else None


def _zh_old(m: re.Match[str], x: str) -> str | None:
    """ "比亚迪换成了理想 L7": the old value before the verb, when the lexicon knows it."""
    return f"用{x}" if category(m.group("old")) else None


_THIRD = {
    "using": "uses",
    "drinking": "drinks",
    "eating": "eats",
    "playing": "plays",
    "driving": "drives",
    "writing": "writes",
    "running": "runs",
}
_TEAM = r"(?:the\s+)?(?P<x>[\w -]+?\s+team)"
_PRESENT = r"(?P<v>play|drink|drive|use|run|write|code|eat|ride|cycle|swim|speak|go to)"


def _present(m: re.Match[str], x: str) -> str | None:
    verb = {"go to": "goes to"}.get(m.group("v").lower()) or third_person(m.group("v").lower())
    return f"{verb.capitalize()} {x}"


def _progressive(m: re.Match[str], x: str) -> str | None:
    """ "drinking tea now" → "Drinks tea"; "writing Kotlin now" → a language; others the
    lexicon's ("using Zed now")."""
    verb = m.group("v").lower()
    if verb in ("drinking", "playing", "eating"):
        return f"{_THIRD[verb].capitalize()} {x}"
    if verb in ("writing", "coding in"):
        return _writes(m, x) or _known(m, x)
    return _known(m, x)


def _named_slot(plural: str, x: str) -> str | None:
    """A value of the slot a plural noun names ("switched teams, … search now")."""
    noun = plural.casefold()[:-1]
    if noun == "team":
        name = re.sub(r"(?i)^the\s+|\s+team$", "", x)
        return f"Works on the {name} team"
    if noun == "job":
        return f"Works at {x}"
    return f"User's {noun} is {x}"


def _database_of(m: re.Match[str], x: str) -> str | None:
    """ "staging is on postgres 17 now": the subject's database, when `x` is one."""
    return f"The {m.group('s')} is {x}" if category(x) == "database" else None


def _of_noun(m: re.Match[str], x: str) -> str | None:
    """A value of the slot a noun names ("new phone: Pixel 9", "desktop is on Arch now"):
    "User's phone is Pixel 9" (memcli.logic.slots puts it in the entry's wording)."""
    noun = m.group("k").strip()
    value = re.sub(r"^(?:on|using|running) +", "", x, flags=re.I)
    if not noun_slot(noun) or SMALL_TALK_VALUES.search(value):  # "the staging db is down"
        return None
    if re.search(r"\b(?:is|are|was|were)\b", value, re.I):  # "my manager's manager is Priya":
        return None  # the 's was a possessive, not "is"
    words = noun.casefold().split()
    if words[-1] == "team" and len(words) > 1:  # "the payments team is hiring": a team, not
        return None  # the one the person is on
    owner = "The" if re.match(r"the\s", m.group(0), re.I) else "User's"  # "the prod db is …"
    return f"{owner} {noun} is {value}"


def _writes(m: re.Match[str], x: str) -> str | None:
    return f"Writes {x}" if category(x) == "language" else None


def _short(pattern: str, kind: str, importance: float, make: Make | str, **how: object) -> Rule:
    return rule(pattern, kind, importance, make, short=True, **how)  # type: ignore[arg-type]


def _each(
    kind: str, importance: float, make: Make | str, patterns: list[str], **how: object
) -> list[Rule]:
    """Rules of one kind, importance, statement and slot, one a pattern (in this order)."""
    return [_short(p, kind, importance, make, **how) for p in patterns]


#: words between "still" and the value it says holds ("still driving that old Subaru")
_STILL_WORDS = (
    r"(?:(?:using|use|driving|drive|writing|write|coding|code|deploying|deploy|running|run|"
    r"drinking|drink|playing|play|living|live|residing|reside|working|work|employed|based|"
    r"on|in|at|with|by|for|to|a|an|the|that|this|my|our|old|good|ol'|same)\s+)*"
)
#: a value said as before ("coffee every morning, as always")
_AS_BEFORE = r"(?:as always|as usual|as before|as ever|same as (?:before|always|ever)|like always)"
#: "还在阿里", "经理还是王磊", "本人目前仍就职于阿里巴巴"; not "还没…", "还是想…"
_ZH_STILL = (
    r"(?:我们|我|团队|本人)?(?:目前|现在)?[^，。,；;]{0,6}?(?:还是|仍然|依然|依旧|仍|还|一直|照样|照旧)"
    r"(?!没|不|要|想|得|会|有点|挺|行|好)(?:在|住在|住|用|使用|开|喝|是|就职于|任职于|去|写)?"
    r"(?P<x>[^，。,；;]+?)(?:工作|上班)?了?(?=$|[，。,；;])"
)


#: one value given up for another: "ditched Vim for Helix", "we left Munich for Lisbon"
_FOR_ANOTHER = (
    r"(?:(?:the|our)\s+team\s+)?"
    + _S
    + r"(?:ditched|dumped|dropped|left|traded(?:\s+in)?|swapped|sold|quit|gave up(?:\s+on)?|"
    r"exchanged|replaced|binned|abandoned)\s+(?P<old>[^,;.]+?)\s+(?:for|in favou?r of)\s+"
    + _V
    + _END
)
#: what follows "… for" that is no new value: a purpose, a time, a thing ("left Munich for
#: a conference", "for the weekend", "for good", "for lunch")
_NOT_A_VALUE = re.compile(
    r"^(?:a|an|the|my|our|his|her|their|some|this|that|it|good|now|ever|work|lunch|dinner|"
    r"breakfast|holiday|vacation|business|a while|\d)\b",
    re.I,
)


def _swap(m: re.Match[str], x: str) -> str | None:
    """A new value of no slot the lexicon knows, for an old one named ("we left Munich for
    Lisbon"): a statement only as the new value of the entry naming the old one."""
    return None if category(x) or _NOT_A_VALUE.search(x) else x


def _held(m: re.Match[str], x: str) -> str | None:
    """A value said to hold still: what was said, the NOOP of the entry naming it."""
    return m.group(0).strip()


CHANGES: list[Rule] = [
    # a diet given up by what one eats again: "started eating meat again", "I eat meat now"
    _short(
        _S
        + r"(?:(?:started|began)\s+eating|(?:am|'m)\s+eating|eat)\s+(?P<x>meat|chicken|beef|pork)"
        r"(?:\s+again|\s+" + _NOW + r")" + _END,
        "correction",
        0.85,
        "Is no longer vegetarian",  # of no slot: similarity finds the diet it corrects
    ),
    # one for another: "ditched Vim for Helix", "traded in the Subaru for a Volvo"
    _short(
        _FOR_ANOTHER,
        "correction",
        0.85,
        lambda m, x: _uses(m, x) if category(x) else None,
        slot=True,
    ),
    _short(_FOR_ANOTHER, "correction", 0.85, _swap, drop="swap", slot=True),
    _short(
        _S
        + r"(?:made|did)\s+the\s+(?:switch|jump|move)\s+(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+"
        + _V
        + _END,
        "correction",
        0.85,
        _uses,
        slot=True,
    ),
    # given up: "I left Globex", "sold the Subaru", "gave up on Vim", "quit sugar"
    _short(
        _S + r"(?:left|resigned from|retired from|departed|parted ways with|moved out of|"
        r"moved away from|"
        r"moved off(?![^,;.]*\sto\s)|moved on from|walked away from|said goodbye to|quit my job at|"
        r"handed in (?:my|our) notice at|stopped working (?:at|for)|bye bye|goodbye|farewell|"
        r"so long|concluded (?:my|our) employment (?:with|at)|"
        r"(?:switched|moved) (?:the whole team |us )?off(?![^,;.]*\sto\s)|"
        r"(?:got|was|were|been|have been|'ve been)\s+(?:laid off|let go|fired|made redundant)"
        r"\s+(?:from|at|by))\s+"
        r"(?!my\s+(?:keys|phone|bag|wallet|laptop|umbrella|jacket)\b)" + _V + _END,
        "correction",
        0.85,
        _drop("Left"),
        drop="named",
    ),
    _short(
        _S
        + r"(?:sold|got rid of|traded in|scrapped|returned)\s+"
        + _V
        + r"(?=\s+for\s+|\s*$|\s*[,;.]|\s(?:and|but|so)\s)",
        "correction",
        0.85,
        _drop("Sold"),
        drop="named",
    ),
    _short(
        _S + r"(?:gave up(?:\s+on)?|ditched|dropped|abandoned|quit|uninstalled|"
        r"(?:(?:am|'m)\s+)?done with|(?:(?:am|'m)\s+)?finished with|given up(?:\s+on)?)\s+"
        + _V
        + _END,
        "correction",
        0.85,
        _drop("Quit"),
        drop="frame",
    ),
    _short(
        _S
        + r"(?:stopped|quit|ceased)\s+(?P<v>using|drinking|eating|playing|driving|writing|running)"
        r"\s+" + _V + _END,
        "correction",
        0.85,
        lambda m, x: f"No longer {_THIRD[m.group('v').lower()]} {x}",
        drop="own",
    ),
    _short(
        _S + r"(?:stopped|quit|ceased)\s+being\s+(?:an?\s+)?" + _V + _END,
        "correction",
        0.85,
        "Is no longer {x}",
        drop="own",
    ),
    _short(
        r"no more\s+" + _V + r"(?:\s+for me)?" + _END,
        "correction",
        0.85,
        _drop("Quit"),
        drop="frame",
    ),
    _short(
        r"(?!(?:i|i'm|we|it|that|this|he|she|they|you|my|our)\b)"
        + _V
        + r"(?:'s|\s+(?:is|are))\s+(?:behind me|gone|history|out|over|done|sold|"
        r"a thing of the past)\b",
        "correction",
        0.85,
        _drop("Left"),
        drop="named",
    ),
    _short(
        r"(?:i(?:'m|\s+am)\s+|we(?:'re|\s+are)\s+)?(?:not|no longer)\s+(?P<p>on|using|at|in|with|"
        r"driving|drinking)\s+" + _V + r"\s+(?:any\s?more|any longer)\b",
        "correction",
        0.9,
        "Is no longer {p} {x}",
        drop="own",
    ),
    _short(
        r"(?:i(?:'m|\s+am)\s+)?off\s+(?!(?:to|work|today|now)\b)"
        + _V
        + r"(?:\s+"
        + _NOW
        + r")?"
        + _END,
        "correction",
        0.85,
        _drop("Quit"),
        drop="frame",
    ),
    _short(
        r"(?!(?:i|it|that|this|he|she|they|you)\b)"
        + _V
        + r"(?:'s\s+not|'s\s+no longer|\s+is(?:n't|\s+not|\s+no longer))\s+my\s+(?:\w+\s+)?"
        r"(?P<k>(?!any\s?more\b|any longer\b)[a-z]+)" + r"(?:\s+any\s?more|\s+any longer)?" + _END,
        "correction",
        0.85,
        lambda m, x: f"Left {x}" if noun_slot(m.group("k")) else None,
        drop="named",
    ),
    # a slot said to change, its value after: "经理换人了，现在是赵敏", "my phone changed, …"
    _short(
        r"(?:(?:my|our)\s+)?(?P<x>[a-z][\w ]{1,20}?)\s+(?:has\s+)?changed" + _END,
        "correction",
        0.85,
        lambda m, x: x if noun_slot(x) else None,
        drop="slot",
    ),
    # "we moved!! Dresden now": where one lives changed, the new place said beside it
    _short(
        r"(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:(?:just|finally|recently|actually)\s+)?"
        r"(?P<x>moved|relocated)(?:\s+house|\s+out)?(?=\s*(?:$|[,;.!?]))",
        "correction",
        0.85,
        lambda m, x: "home",
        drop="moved",
    ),
    _short(
        r"(?:我的)?(?P<x>[^，。,是的]{1,6}?)(?:换人了|换了人|变了|换了)(?=$|[，。,])",
        "correction",
        0.85,
        lambda m, x: x if noun_slot(x) else None,
        drop="slot",
    ),
    # the team's own: "the team moved to GitLab CI", "we switched over to Argo CD"
    _short(
        r"(?:the team|our team|we)\s+(?:has\s+|have\s+)?(?:moved|switched|migrated|changed|went)\s+"
        r"(?:over\s+)?(?:(?:from|off)\s+(?P<old>[^,;]+?)\s+)?to\s+" + _V + _END,
        "correction",
        0.85,
        lambda m, x: _known(m, x) if category(x) == "ci" else None,
        slot=True,
    ),
    _short(
        r"(?:(?:i|we)\s+)?used to\s+(?P<v>live in|work at|work for|work on|be at|be in|be on|drive|"
        r"use|drink|play|run|write|code in|have)\s+"
        + _V
        + r"(?:\s+(?:every|each|on|in the)\b[^,;.]*)?"
        + _END,
        "correction",
        0.85,
        lambda m, x: f"No longer {third_person(m.group('v').lower())} {x}",
        drop="named",
    ),
    _short(
        _V + r"\s+and\s+i\s+(?:parted ways|split up|went (?:our\s+)?separate ways)",
        "correction",
        0.85,
        _drop("Left"),
        drop="named",
    ),
    # joined: "I'm working at Initech now", "started at Umbrella", "new job at Initech"
    *_each(
        "fact",
        0.85,
        _employer,
        [
            _S
            + r"(?:(?:am|'m|was)\s+)?(?:now\s+)?(?:working|employed|hired|doing (?:contract )?work)"
            r"\s+(?:at|for|by|with)\s+" + _V + _END,
            _S + r"(?:joined|started (?:working )?at|starting at|start at|"
            r"(?:took|taken|take|accepted|started|began|begun|landed|got)\s+(?:up\s+)?"
            r"(?:a\s+|an\s+|the\s+|my\s+)?(?:new\s+)?(?:job|position|role|post|employment|gig)\s+"
            r"(?:at|with|for)|accepted an offer from|"
            r"got hired by|signed with|remain at|still work at|"
            r"(?:am\s+|'m\s+)?still at|"
            r"(?:first|second) (?:day|week) at|(?:commenced|began|begun|started) (?:work(?:ing)?|"
            r"employment) (?:at|with|for))"
            r"\s+(?!the\s+[\w -]+team)" + _V + _END,
            r"(?:my\s+)?new job(?:\s+is)?(?:\s+at|:)\s*" + _V + _END,
            r"i(?:'m|\s+am)\s+(?:now\s+)?at\s+" + _V + r"\s+" + _NOW + r"\b",
            r"now that\s+(?:i(?:'m|\s+am)|we(?:'re|\s+are))\s+(?:at|with)\s+" + _V + _END,
            _V + r"\s+(?:has\s+)?(?:hired|took on|onboarded)\s+me\b",
            r"i(?:'m|\s+am)\s+(?:now\s+)?an?\s+" + _V + r"\s+employee\b",
        ],
        slot_name="employer",
    ),
    # teams: "joined the infra team", "I'm on the search team now"
    _short(
        _S + r"(?:joined|moved to|switched to|"
        r"(?:(?:am|'m)\s+)?(?:now\s+)?(?:on|in|part of|with(?=\s+the\s))|"
        r"ended up on|"
        r"got moved to|transferred to|work on|been moved to|(?:been\s+)?re-?assigned to|"
        r"assigned to|moved over to|landed on|got put on)\s+" + _TEAM + r"\b",
        "fact",
        0.85,
        "Works on the {x}",
        slot_name="team",
    ),
    # home: "living in Vienna now", "relocated to Hamburg", "we're out in Dresden now"
    _short(
        _S
        + r"(?:relocated|moved(?:\s+back|\s+out)?|moving)\s+(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+"
        + _V
        + _END,
        "correction",
        0.85,
        lambda m, x: _uses(m, x) if category(x) else _home(m, x),
        slot=True,
    ),
    *_each(
        "fact",
        0.8,
        _home,
        [
            _S
            + r"(?:(?:am|'m|are|'re)\s+)?(?:now\s+)?(?:living|residing|reside|now live|settled)\s+"
            r"(?:in|at)\s+" + _V + _END,
            r"(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:out\s+|back\s+)?in\s+"
            + _V
            + r"\s+"
            + _NOW
            + r"\b",
        ],
        slot_name="home",
    ),
    # cars: "I drive a Tesla now"
    _short(
        _S + r"(?:(?:am|'m)\s+)?(?:drive|driving)\s+(?P<x>(?:a|an|the)\s+[^,;.]+?)" + _END,
        "fact",
        0.8,
        _car,
        slot_name="car",
    ),
    _short(
        r"i\s+(?:now\s+)?(?:write|code in|program in)\s+" + _V + _END,
        "fact",
        0.8,
        _writes,
        slot_name="language",
    ),
    # the present said as new ("I now play squash on weekends", "I write mostly Python now")
    _short(
        r"i\s+(?:now|these days|nowadays)\s+" + _PRESENT + r"\s+" + _V + _END,
        "fact",
        0.8,
        _present,
        slot=True,
    ),
    _short(r"i\s+still\s+" + _PRESENT + r"\s+" + _V + _END, "fact", 0.75, _present, slot=True),
    _short(
        r"(?:i(?:'m|\s+am)\s+)?no longer\s+(?P<p>at|with|in|on|using|driving)\s+" + _V + _END,
        "correction",
        0.9,
        lambda m, x: f"Is no longer {m.group('p')} {x}",
        drop="own",
    ),
    _short(
        r"(?:i(?:'m|\s+am)\s+)?(?:now\s+)?(?:an?\s+)?" + _V + r"\s+(?:user|person|fan|girl|guy|"
        r"convert|household|family|owner|driver|drinker)(?:\s+" + _NOW + r")?" + _END,
        "fact",
        0.8,
        _known,
        slot=True,
    ),
    _short(
        r"(?:i(?:'ve|\s+have)\s+)?been\s+(?:working\s+)?(?:at|with)\s+"
        + _V
        + r"\s+(?:since|for)\b",
        "fact",
        0.85,
        _employer,
        slot_name="employer",
    ),
    _short(
        r"i(?:'m|\s+am)\s+with\s+" + _V + r"\s+(?:" + _NOW + r"|since|as of)\b",
        "fact",
        0.8,
        _employer,
        slot_name="employer",
    ),
    *_each(
        "fact",
        0.8,
        _home,
        [
            r"(?:i|we)(?:'m|'re|\s+am|\s+are)\s+now\s+(?:based\s+|living\s+)?in\s+" + _V + _END,
            r"we\s+(?:now\s+)?live\s+(?:in|at)\s+" + _V + _END,
            _V + r"(?:'s|\s+is)\s+(?:now\s+)?(?:my\s+|our\s+)?home\s+" + _NOW,
            r"(?:i\s+)?(?:continue to|still)\s+(?:live|reside)\s+in\s+" + _V + _END,
        ],
        slot_name="home",
    ),
    *_each(
        "fact",
        0.8,
        _of_noun,
        [
            r"(?:the\s+)?(?P<k>[a-z][\w ]{1,20}?)\s+(?:is|runs|is running)\s+(?:now\s+)?"
            + _V
            + r"\s+"
            + _NOW
            + r"\b",
            _V + r"(?:'s|\s+is|\s+has been|\s+became)\s+(?:now\s+)?my\s+(?:new\s+)?(?:main\s+)?"
            r"(?P<k>[a-z][\w ]{1,20}?)"
            r"(?:\s+" + _NOW + r")?" + _END,
        ],
        slot=True,
    ),
    # the slot named, its value now: "timezone is now PST", "desktop is on Arch now"
    _short(
        r"(?:(?:my|our|the)\s+)?(?:current\s+|primary\s+|main\s+)?(?P<k>[a-z][\w ]{1,20}?)"
        r"(?:'s|\s+is|\s+are|\s+runs|\s+is running)\s+(?:now|still)\s+" + _V + _END,
        "fact",
        0.8,
        _of_noun,
        slot=True,
    ),
    _short(
        r"(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:switched|changed|moved|swapped|upgraded|set)\s+"
        r"(?:my|our)\s+(?P<k>[a-z][\w ]{1,20}?)(?:\s+preference)?\s+(?:over\s+)?"
        r"(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+" + _V + _END,
        "correction",
        0.85,
        _of_noun,
        slot=True,
    ),
    _short(
        r"(?:the team|our team|we)\s+(?:has\s+|have\s+)?(?:switched|moved|migrated|changed)\s+"
        r"(?:our\s+|its\s+|the\s+)?(?P<k>[a-z][\w/ ]{1,15}?)\s+(?:over\s+)?"
        r"(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+" + _V + _END,
        "correction",
        0.85,
        lambda m, x: f"The team's {m.group('k')} is {x}" if noun_slot(m.group("k")) else None,
        slot=True,
    ),
    _short(
        _S
        + r"(?:adopted|chosen|picked|settled on|standardi[sz]ed on)\s+"
        + _V
        + r"(?:\s+as\s+(?:my|our)\s+(?:\w+\s+)?(?P<k>[a-z]+))?"
        + _END,
        "fact",
        0.8,
        lambda m, x: _of_noun(m, x) if m.group("k") else _known(m, x),
        slot=True,
    ),
    _short(
        r"(?:i|we)\s+(?:(?:now|currently|mostly|mainly|primarily|personally)\s+)*"
        r"(?:run|deploy (?:with|via|using)|"
        r"ship with|"
        r"build with|code in|program in|write|drive|drink|use)\s+(?:(?:mostly|mainly)\s+)?"
        + _V
        + r"(?:\s+on\s+(?:my|the|our)\s+\w+)?\s+"
        + _NOW
        + r"\b",
        "fact",
        0.8,
        _known,
        slot=True,
    ),
    # a subject of one's own that changed: "staging db got upgraded to postgres 17"
    _short(
        r"(?:the\s+|our\s+|my\s+)?(?P<s>[a-z][\w -]{1,30}?)\s+"
        r"(?:got\s+|was\s+|has been\s+|has\s+|is\s+)?"
        r"(?:upgraded|moved|migrated|switched|changed)\s+(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+"
        + _V
        + _END,
        "correction",
        0.85,
        _subject_changed,
        slot=True,
    ),
    _short(
        r"(?P<s>(?:the|our)\s+[\w -]+?)\s+(?P<v>deploys|ships|builds|runs)\s+(?P<p>with|on)\s+"
        + _V
        + r"\s+"
        + _NOW
        + r"\b",
        "fact",
        0.85,
        lambda m, x: f"{m.group('s')} {m.group('v')} {m.group('p')} {x}",
        slot=True,
    ),
    # a new value by a verb that does not say the slot: memcli.logic.slots finds it
    *_each(
        "correction",
        0.85,
        _uses,
        [
            _S
            + r"(?:switched|switching|changed|migrated|moved|upgraded|converted|gone|went|got)\s+"
            r"(?:back\s+|over\s+)?(?:(?:from|off)\s+(?P<old>[^,;]+?)\s+)?to\s+" + _V + _END,
            _S + r"(?:replaced|swapped)\s+(?P<old>[^,;]+?)\s+(?:with|for)\s+" + _V + _END,
        ],
        slot=True,
    ),
    *_each(
        "fact",
        0.8,
        _known,
        [
            _S + r"(?:(?:am|'m)\s+)?(?:back\s+on|back\s+to|(?:now\s+)?on|using|"
            r"ended up (?:going )?with|"
            r"going with|went with|bought|purchased|leased|got|picked up)\s+"
            + _V
            + r"(?:\s+"
            + _NOW
            + r")?"
            + _END,
            r"(?:it's|its|it is)\s+(?:all\s+)?" + _V + r"\s+" + _NOW + r"\b",
            r"(?:it's|its|it is)\s+all\s+" + _V + _END,
            _V + r"\s+(?:now|these days|nowadays)" + _END,
            _V + r"\s+(?:it is|all the way|ftw|from now on|going forward|for me now)\b",
        ],
        slot=True,
    ),
    # one value for another: "Ubuntu → Fedora", "firefox -> brave"
    _short(
        r"(?P<old>[^,;.>→]+?)\s*(?:->|→|=>)\s*" + _V + _END,
        "correction",
        0.85,
        lambda m, x: _known(m, x) if category(m.group("old")) else None,
        slot=True,
    ),
    _short(  # "globex -> initech", "杭州→上海": the new value of the entry naming the old one
        r"(?P<old>[^,;.>→，；。]+?)\s*(?:->|→|=>)\s*" + _V + _END,
        "correction",
        0.85,
        _swap,
        drop="swap",
        slot=True,
    ),
    # one preferred to another: "pdm > poetry"
    _short(
        _V + r"\s*>\s*(?P<old>[^,;.]+)",
        "correction",
        0.85,
        lambda m, x: _known(m, x) if category(m.group("old")) else None,
        slot=True,
    ),
    # a subject of one's own on a new value: "staging is on postgres 17 now"
    _short(
        r"(?:the\s+|our\s+)?(?P<s>[a-z][\w -]{1,30}?)\s+(?:is\s+(?:now\s+)?on|runs(?:\s+on)?)\s+"
        + _V
        + r"\s+"
        + _NOW
        + _END,
        "fact",
        0.8,
        _database_of,
        slot=True,
    ),
    # "I'm in the CET timezone"
    _short(
        r"i(?:'m|\s+am)\s+(?:now\s+)?(?:in|on)\s+(?:the\s+)?"
        + _V
        + r"\s+(?:timezone|time zone)"
        + r"(?:\s+"
        + _NOW
        + r")?"
        + _END,
        "fact",
        0.8,
        "User's timezone is {x}",
        slot_name="timezone",
    ),
    # "Helix has replaced Vim for me", "I've been using Helix for a while now"
    _short(
        r"(?!(?:i|it|that|this|he|she|they|you|we)\b)(?![^,;.]*\b(?:got|was|been|be|is)\s+replaced)"
        + _V
        + r"\s+(?:has\s+)?replaced\s+(?P<old>[^,;.]+?)"
        r"(?:\s+for me)?" + _END,
        "correction",
        0.85,
        _known,
        slot=True,
    ),
    _short(
        r"(?:i|we)(?:'ve|\s+have)\s+been\s+(?:using|driving|running|drinking)\s+"
        + _V
        + r"\s+(?:for|since)\b",
        "fact",
        0.8,
        _known,
        slot=True,
    ),
    # "Priya replaced Dana as my manager"
    _short(
        _V + r"\s+(?:has\s+)?replaced\s+(?P<old>[^,;.]+?)\s+as\s+(?:my|our)\s+(?:\w+\s+)?"
        r"(?P<k>[a-z]+)" + _END,
        "correction",
        0.85,
        _of_noun,
        slot=True,
    ),
    # "we upgraded staging to Postgres 17"
    _short(
        r"(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?(?:upgraded|moved|migrated|switched)\s+"
        r"(?:the\s+|our\s+)?(?P<s>[a-z][\w -]{1,30}?)\s+(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+"
        + _V
        + _END,
        "correction",
        0.85,
        _database_of,
        slot=True,
    ),
    # "The ThinkPad got replaced by a MacBook Air"
    _short(
        r"(?:the|my|our)\s+(?P<old>[^,;.]+?)\s+(?:got|was|has been|have been)\s+replaced\s+"
        r"(?:by|with)\s+" + _V + _END,
        "correction",
        0.85,
        _known,
        slot=True,
    ),
    # "I mostly drink tea in the morning instead of coffee"
    _short(
        r"(?:i|we)\s+(?:(?:now|currently|mostly|mainly|primarily|personally)\s+)*(?:run|use|drive|drink|write|"
        r"code in|deploy with)\s+(?:(?:mostly|mainly)\s+)?"
        + _V
        + r"\s+(?:instead of|rather than)\s+(?P<old>[^,;.]+)",
        "fact",
        0.8,
        _known,
        slot=True,
    ),
    # "phone upgrade: iPhone 16 Pro", "bought a house in Regensburg"
    _short(
        r"(?:(?:my|our)\s+)?(?P<k>[a-z][\w ]{1,20}?)\s+(?:upgrade|update|change|swap)\s*[:,-]\s*"
        + _V
        + _END,
        "fact",
        0.85,
        _of_noun,
        slot=True,
    ),
    _short(
        _S + r"(?:bought|got|rented|found|moved into)\s+(?:a|an|our|my)\s+(?:new\s+)?(?:house|flat|"
        r"apartment|place|home)\s+in\s+" + _V + _END,
        "fact",
        0.8,
        _home,
        slot_name="home",
    ),
    _short(_V + r"\s+instead of\s+(?P<old>[^,;.]+)", "fact", 0.8, _known, slot=True),
    _short(
        r"i(?:'m|\s+am)\s+(?:now\s+)?(?:a\s+)?(?P<x>\w+)(?:\s+" + _NOW + r")?" + _END,
        "fact",
        0.8,
        _is,
        slot=True,
    ),
    # the slot named, then its value: "my car's a Toyota now", "editor: Helix", "timezone: EST",
    # "home is Lisbon now", "got a new phone, Pixel 8"
    _short(
        r"(?:(?:my|our|the)\s+)?(?:new\s+|current\s+|primary\s+|main\s+)?(?P<k>[a-z][\w ]{1,20}?)"
        r"(?:'s|\s+is|\s+are|\s*:|\s+=)\s+(?:now\s+)?" + _V + _END,
        "fact",
        0.8,
        _of_noun,
        slot=True,
    ),
    _short(
        _S + r"(?:got|bought|have|has|acquired|purchased)\s+a\s+new\s+"
        r"(?P<k>[a-z][\w ]{1,20}?)\s*[,:-]\s*" + _V + _END,
        "fact",
        0.8,
        _of_noun,
        slot=True,
    ),
    # the present, said as new: "drinking tea now, not coffee", "I play padel on weekends now"
    _short(
        _S + r"(?:(?:am|'m|are|'re)\s+)?(?:now\s+)?(?:(?:mostly|mainly)\s+)?"
        r"(?P<v>drinking|writing|coding in|using|running|"
        r"playing|driving|eating)\s+(?:(?:mostly|mainly)\s+)?"
        + _V
        + r"(?:\s+(?:mostly|mainly))?\s+"
        + _NOW
        + _END,
        "fact",
        0.8,
        _progressive,
        slot=True,
    ),
    _short(
        r"i\s+" + _PRESENT + r"\s+" + _V + r"\s+" + _NOW + _END, "fact", 0.8, _present, slot=True
    ),
    _short(
        r"(?:i(?:'m|\s+am)?\s+)?(?:now\s+)?(?:report|reporting)\s+(?:directly\s+)?to\s+"
        r"(?!(?:her|him|them|you|it|me|us)\b)" + _V + _END,
        "fact",
        0.8,
        "User's manager is {x}",
        slot_name="manager",
    ),
    _short(
        r"(?:(?:my|our)\s+)?new\s+(?P<k>[a-z][\w ]{1,20}?)(?:\s+is|\s*[:,]|\s+-)\s*" + _V + _END,
        "fact",
        0.85,
        _of_noun,
        slot=True,
    ),
    # the slot named, then the value: "switched teams, I'm on search now", "my manager
    # changed, it's Priya now"
    _short(
        r"(?:i\s+)?(?:switched|changed|swapped|moved)\s+(?P<k>teams|jobs|editors|phones|cars|laptops|"
        r"shells|browsers)[,;:]?\s+(?:and\s+)?(?:(?:i'm\s+(?:now\s+)?(?:on|at|with|using)|it's|"
        r"now(?:\s+(?:on|at|using))?)\s+)?" + _V + _END,
        "correction",
        0.85,
        lambda m, x: _named_slot(m.group("k"), x),
        slot=True,
    ),
    _short(
        r"my\s+(?P<k>[a-z][\w ]{1,20}?)\s+(?:has\s+)?changed[,;:]?\s+(?:it's|its|it is|now)\s+"
        + _V
        + _END,
        "correction",
        0.85,
        _of_noun,
        slot=True,
    ),
    # "I live in VS Code now": a tool one lives in is one used
    _short(
        r"i\s+(?:(?:now|basically|pretty much|practically)\s+)*live\s+in\s+" + _V + _END,
        "fact",
        0.8,
        lambda m, x: f"Uses {x}" if category(x) else None,
        slot=True,
    ),
    # a diet said by what one became or eats: "went vegan", "started eating meat again"
    _short(
        _S + r"(?:went|became|turned|gone|go)\s+(?:fully\s+)?(?P<x>\w+)" + _END,
        "fact",
        0.8,
        _is,
        slot=True,
    ),
    # what one does something in: "I do my scripting in Ruby now", "I script in Bash now"
    _short(
        r"i\s+(?:now\s+)?(?:do\s+(?:my|all my|most of my|all of my|the)\s+scripting|script|"
        r"write\s+(?:my\s+|all my\s+)?scripts)\s+(?:in|with)\s+" + _V + _END,
        "preference",
        0.8,
        lambda m, x: f"Prefers {x} for scripting" if category(x) in ("language", "shell") else None,
        slot=True,
    ),
    # a theme: "I've gone light mode", "switched to a light theme", "light themes these days"
    _short(
        _S + r"(?:(?:gone|went|switched|moved|changed)\s+(?:over\s+)?(?:to\s+)?|(?:am\s+|'m\s+)?"
        r"(?:using|on)\s+|use\s+)?(?:a\s+|the\s+)?(?P<x>light|dark)\s+(?P<k>mode|themes?)"
        r"(?:\s+" + _NOW + r")?" + _END,
        "preference",
        0.8,
        "Prefers {x} {k}",
        slot=True,
    ),
    # a system put on a machine: "I put Fedora on my desktop"
    _short(
        _S + r"(?:put|installed|switched)\s+" + _V + r"\s+on\s+(?:my|the|our)\s+"
        r"(?P<k>desktop|laptop|pc|workstation)" + _END,
        "fact",
        0.8,
        lambda m, x: f"Runs {x} on the {m.group('k')}" if category(x) == "os" else None,
        slot=True,
    ),
    # a move of what one has: "we migrated all our repos from Poetry to uv"
    _short(
        _S + r"(?:migrated|moved|switched|converted)\s+(?:all\s+(?:of\s+)?)?(?:my|our|the)\s+"
        r"[\w-]+(?:\s+[\w-]+)?\s+(?:over\s+)?from\s+(?P<old>[^,;]+?)\s+to\s+" + _V + _END,
        "correction",
        0.85,
        _known,
        slot=True,
    ),
    # a new one to replace the old: "IT gave me a MacBook Pro to replace the ThinkPad"
    _short(
        r"(?:[\w-]+\s+)?(?:gave me|got me|issued me|got|bought|received)\s+(?:a|an|the)\s+"
        + _V
        + r"\s+to\s+replace\s+(?:the|my|our)\s+(?P<old>[^,;.]+)",
        "correction",
        0.85,
        _known,
        slot=True,
    ),
    # Chinese
    *_each(
        "fact",
        0.8,
        "住在{x}",
        [
            r"(?:我)?(?:依然|仍然|还是|还)住在(?P<x>[^，。,]+)",
            r"(?:我|本人)?(?:现|现在)?(?:居住于|居住在|住于|居(?![住民]))(?P<x>[^，。,]+)",
        ],
        slot_name="home",
    ),
    _short(
        r"(?:我)?(?:自从|最近|终于|已经|刚)*(?:换到|转到|换了)了?(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "correction",
        0.85,
        lambda m, x: f"用{x}" if category(x) else None,
        slot=True,
    ),
    _short(
        r"(?:我)?(?:已经)?(?:换工作|换了工作|换了份工作|跳槽|离职|辞职)了?[，,]\s*(?:现在)?(?:在|去了?)"
        r"(?P<x>[^，。,]+?)(?:了|上班|工作)?(?=$|[，。,])",
        "fact",
        0.85,
        "在{x}工作",
        slot_name="employer",
    ),
    _short(
        r"(?:我|公司给我|单位给我)?(?:最近|已经|刚)?(?:换了|买了|新买了|入手了|配了|发了)(?:一)?(?:辆|台)"
        r"(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        _zh_car,
        slot_name="car",
    ),
    _short(
        r"(?:我|公司给我|单位给我)?(?:最近|已经|刚)?(?:换了|买了|新买了|入手了|配了|发了)(?:一)?"
        r"(?:部|台|个(?=[^，。,]*?(?:手机|笔记本|电脑)了?(?:$|[，。,])))(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        lambda m, x: f"用{x}" if category(x) not in ("", "car") else None,
        slot=True,
    ),
    _short(
        r"(?:我|本人)?(?:已经|已|刚|上个月|去年|去年年底|年初|今年)?(?:从)(?P<x>[^，。,]+?)(?:离职|辞职|出来)了?",
        "correction",
        0.85,
        "从{x}离职",
        drop="named",
    ),
    _short(
        r"(?:我|本人)?(?:已经|已|刚)?离开了?(?P<x>[^，。,了]+)",
        "correction",
        0.85,
        "离开{x}",
        drop="named",
    ),
    _short(
        r"(?:我)?(?:已经)?把?(?P<x>[^，。,把]+?)(?:卖|处理|转手|出)(?:掉)?了",
        "correction",
        0.85,
        "卖了{x}",
        drop="named",
    ),
    *_each(
        "correction",
        0.85,
        "戒{x}",
        [
            r"(?:我)?(?:已经|已)?戒掉?了?(?P<x>[^，。,了]+)",
            r"(?P<x>[^，。,]+?)(?:早就|早已|已经|都|也)?戒掉?了",
        ],
        drop="frame",
    ),
    _short(
        r"(?:我|我们|本人)?(?:以前|之前|原来|曾经|过去|原先)(?:一直|都)?(?:住在?|在|用|使用|开|喝|是|去)"
        r"(?P<x>[^，。,]+?)(?:工作|上班)?(?:的)?(?=$|[，。,])",
        "correction",
        0.85,
        "以前{x}",
        drop="named",
    ),
    _short(
        r"(?:我|团队|我们)?(?:周末|每天|早上)?(?P<when>已经|现在|已)?(?P<no>不再|不|没再)"
        r"(?P<v>用|使用|去|喝|开|吃|写|住)(?P<x>[^，。,]+?)(?P<le>了?)"
        r"(?=$|[，。,])",
        "correction",
        0.9,
        _zh_no_more,
        drop="own",
    ),
    # no longer where one works: "不在阿里干了", "已经不在阿里巴巴了"
    _short(
        r"(?:我|本人)?(?:已经|早就|现在)?(?:不再|不)在(?P<x>[^，。,]+?)(?:干|上班|工作|待|呆)?了(?=$|[，。,])",
        "correction",
        0.85,
        "不再在{x}工作",
        drop="named",
    ),
    # the team one is on: "现在在数据团队"
    _short(
        r"(?:我|本人)?(?:现在|目前|已经)?在(?P<x>[^，。,]+?(?:团队|(?<![小])组))了?(?=$|[，。,])",
        "fact",
        0.8,
        "在{x}",
        slot_name="team",
    ),
    _short(
        r"(?P<x>[^，。,]+?)(?:这边|那边)?不(?:干|做)了(?=$|[，。,])",
        "correction",
        0.85,
        "不再在{x}工作",
        drop="named",
    ),
    _short(
        r"(?P<x>[^，。,]+?)不(?P<v>去|喝|用|写|开)了",
        "correction",
        0.85,
        "不再{v}{x}",
        drop="own",
    ),
    _short(
        r"(?:我|本人)?(?:已经|最近|终于|现已|现在|已)?(?:于[^，。,]{1,4}?)?(?:从(?P<old>[^，。,]+?))?"
        r"\s*(?:跳槽(?:到|去)了?|入职(?:了)?|join\s*了?\s*|"
        r"加入了?|(?:现|目前)?就职于|"
        r"(?:现)?任职于)(?P<x>[^，。,]+?)(?:了|上班|工作)?(?=$|[，。,])",
        "fact",
        0.85,
        lambda m, x: f"在{x}" if re.search(r"团队|组$", x) else f"在{x}工作",
        slot=True,
    ),
    _short(
        r"(?:我)?(?:现在|仍|仍然|还|依然)?在(?P<x>[^，。,]+?)(?:上班|工作)",
        "fact",
        0.85,
        "在{x}工作",
        slot_name="employer",
    ),
    _short(
        r"(?:我们|我|本人)?(?:全家|家)?(?:[^，。,的]{0,6}?(?:已经|终于|刚|最近|已|上个月|上周|去年|今年|"
        r"前几天|年初|月初))?(?:从(?P<old>[^，。,]+?))?"
        r"(?:搬回|搬去|搬到|搬家到|搬家去|迁居|迁到|住到|定居在|定居)了?(?:老家)?(?P<x>[^，。,]+?)(?:住|居住|定居)?了?"
        r"(?=$|[，。,])",
        "correction",
        0.85,
        "住在{x}",
        slot_name="home",
    ),
    *_each(
        "fact",
        0.8,
        "住在{x}",
        [r"(?:我)?现在住(?:在)?(?P<x>[^，。,]+)", r"(?:我的?)?新家在(?P<x>[^，。,]+)"],
        slot_name="home",
    ),
    _short(
        r"(?:我)?(?:现在|已经)?去了?(?P<x>[^，。,]+?)(?:上班|工作)了?(?=$|[，。,])",
        "fact",
        0.85,
        "在{x}工作",
        slot_name="employer",
    ),
    _short(
        r"(?:我)?在(?P<x>[^，。,]+?)(?:已经)?(?:待|干|工作|上班)了",
        "fact",
        0.8,
        "在{x}工作",
        slot_name="employer",
    ),
    *_each(
        "fact",
        0.8,
        _zh_of_noun,
        [
            r"我(?:现在|目前)的(?P<k>[^，。,是的]{1,6}?)是(?P<x>[^，。,]+?)了?(?=$|[，。,])",
            r"(?:我的|本人的?)?(?:现在|目前)?(?P<k>[^，。,是的]{1,6}?)"
            r"(?:(?:现在|目前|已经)是|(?:现在|目前)?用的是|：|:)\s*(?P<x>[^，。,]+?)了?"
            r"(?=$|[，。,])",
            r"(?:现在|目前)(?P<k>[^，。,是的]{1,6}?)是(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        ],
        slot=True,
    ),
    _short(
        r"(?:(?:我们|我们的)?团队(?:的)?|我们(?:的)?\s*(?:CI|持续集成))\s*(?:的)?\s*(?:CI|持续集成)?\s*"
        r"(?:现在|目前|还是|一直)?(?:改)?用"
        r"(?P<x>[^，。,]+?)"
        r"(?:(?:来)?(?:做|跑)?\s*(?:CI|持续集成|部署))?(?=$|[，。,])",
        "fact",
        0.8,
        lambda m, x: f"用{x}" if category(x) else None,
        slot=True,
    ),
    _short(
        r"(?:我|我们)?(?:现在|目前|已经)?在(?P<x>[^，。,]+?)(?:住|定居|安家)了?(?=$|[，。,])",
        "fact",
        0.8,
        "住在{x}",
        slot_name="home",
    ),
    _short(
        r"(?:我)?(?:现在|目前)?(?P<pre>周末|每天早上|每天|早上)?(?:都|一般)?改(?P<v>去|开|喝|用|写|(?=[打踢练玩跑]))"
        r"(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "correction",
        0.85,
        "{pre}{v}{x}",
        slot=True,
    ),
    _short(
        r"(?:我)?(?:现在|目前)?周末(?:我)?(?:现在|都|一般|主要)*去(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        "周末去{x}",
        slot=True,
    ),
    _short(
        r"(?:我的|本人的?)?(?:新|新的|新来的|新换的)(?P<k>[^，。,是的]{1,6}?)(?:是|叫)(?P<x>[^，。,]+?)了?"
        r"(?=$|[，。,])",
        "fact",
        0.85,
        _zh_of_noun,
        slot=True,
    ),
    _short(
        r"(?:我的|本人的?)?(?P<k>[^，。,是的从]{1,6}?)(?:从(?P<old>[^，。,]+?))?(?:已经?|现在)?"
        r"(?:变更为|变成了?|更换为|换为)了?"
        r"(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "correction",
        0.85,
        _zh_of_noun,
        slot=True,
    ),
    _short(
        r"[^，。,]{0,16}?(?:已经|已)?(?:迁移到|迁到|切换到|切到|转到|转向|转用|转|switch\s*到)了?"
        r"(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "correction",
        0.85,
        lambda m, x: f"用{x}" if category(x) else None,
        slot=True,
    ),
    _short(
        r"(?:[^，。,]{0,12}?(?:之后|以后|后|最近|上个月|上周))?"
        r"(?:我|本人)?(?:已经?|刚)?(?:从(?P<old>[^，。,]+?))?(?:被)?(?:调(?:到|去|往|至)了?|调入|换到了?|转到了?|去了|"
        r"调任至|调任到|加入了?|到了)(?P<x>[^，。,]+?(?:团队|组))",
        "fact",
        0.85,
        "在{x}",
        slot_name="team",
    ),
    _short(
        r"(?:我)?(?:自己)?(?:现在|还是|仍然|依然)?开上?了?(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        _zh_car,
        slot_name="car",
    ),
    _short(
        r"(?:我)?(?:现在)?(?:每天)?(?:早上|上午)?(?:都)?(?:改喝|喝)(?!了)(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        "喝{x}",
        slot_name="drink",
    ),
    _short(
        r"(?:我)?现在向(?P<x>[^，。,]+?)汇报", "fact", 0.8, "用户的经理是{x}", slot_name="manager"
    ),
    _short(
        r"(?P<old>[^，。,]{1,8}?)(?:已经)?(?:换成|改成|更换为|换为)了?(?P<x>[^，。,]+?)了?"
        r"(?=$|[，。,])",
        "correction",
        0.85,
        _zh_old,
        slot=True,
    ),
    _short(
        r"(?P<k>[^，。,从]{0,8}?)(?:从[^，。,]+?)?(?:已经)?(?:换成|改成|改用|换用|更换为|换为|转用|用上|开始用|"
        r"换到)了?"
        r"(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "correction",
        0.85,
        _zh_switched,
        slot=True,
    ),
    _short(
        r"(?:我)?(?:现在)?(?:主要)?(?:用|使用|写)(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        _zh_uses,
        slot=True,
    ),
    _short(
        r"(?:我)?(?:现在|如今|最近)(?:更|比较)?喜欢(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "preference",
        0.8,
        "喜欢{x}",
        slot=True,
    ),
    _short(
        r"(?:我)?(?:现在)?开的(?:车)?是(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        _zh_car,
        slot_name="car",
    ),
    _short(
        r"(?P<k>[^，。,是的我]{1,6}?)是(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        _zh_of_noun,
        slot=True,
    ),
    _short(
        r"我(?:现在|目前|已经)是(?!不是|说)(?P<x>[^，。,]+?)(?<!员工)(?<!的人)了?(?=$|[，。,])",
        "fact",
        0.8,
        "是{x}",
    ),
    _short(
        r"(?:我)?(?:现在|已经)?是(?P<x>[^，。,]+?)的?(?:员工|的人)了?(?=$|[，。,])",
        "fact",
        0.85,
        "在{x}工作",
        slot_name="employer",
    ),
]

#: tried after every other rule: a value said to hold still (the NOOP of the entry naming
#: it, else no statement: "I still prefer tabs" is a statement of the rules above), and a
#: value alone ("…, berlin now", "现在在拼多多"): a new value of the slot of what the same
#: turn gave up (memcli.logic.extract), else no statement
ALONE: list[Rule] = [
    # still so: "still at Globex", "I'm sticking with vim", "I'm at Globex still", "还在阿里",
    # "coffee every morning, as always", "my timezone remains CET", "vim still"
    *_each(
        "fact",
        0.8,
        _held,
        [
            r"(?:(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+)?(?:still|continue to|remain|"
            r"(?:am\s+|'m\s+)?(?:sticking|staying) with|stick with|stay with)\s+"
            r"(?!(?:not|no|never|haven't|hasn't|don't|doesn't|didn't|can't|won't|thinking|"
            r"considering|planning|wondering|deciding)\b)" + _STILL_WORDS + _V + _END,
            r"(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:at|in|on|with|using)\s+" + _V + r"\s+still\b",
            r"(?:[^,;.]*?\b(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+"
            + _STILL_WORDS
            + r")?"
            + _V
            + r"(?:\s+for\s+[^,;.]+?)?\s*,?\s+"
            + _AS_BEFORE
            + r"\b",
            r"(?:my|our|the)\s+[a-z][\w ]{1,20}?(?:(?:'s|\s+is|\s+are)\s+still|\s+remains?)\s+"
            + _V
            + _END,
            _V + r"(?:\s+(?:is|are))?\s+still\b",
            _ZH_STILL,
        ],
        drop="held",
    ),
    # a value alone ("以前在阿里，现在在拼多多"): of the slot of what the turn gave up
    _short(
        r"(?:我|我们)?(?:现在|如今|目前)(?:在|是)(?P<x>[^，。,]+?)了?(?=$|[，。,])",
        "fact",
        0.8,
        lambda m, x: None if re.search(r"(?:上班|工作|住)$", x) else f"现在{x}",
        drop="bare",
        slot=True,
    ),
    # "berlin now", "I'm on infra now", "we've been in Cologne since": a value alone
    _short(
        r"(?:(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:now\s+)?(?:on|at|in|with)\s+)?"
        r"(?!(?:i|i'm|i've|we|we're|you|it|it's|that|this|they|he|she|not|no|ever|been|just|long)\b)"
        + _FEW
        + r"\s+(?:"
        + _NOW
        + r"|since\s+[^,;.]+)"
        + _END,
        "fact",
        0.8,
        lambda m, x: None if _NOT_HOME.search(x) else f"{x} now",
        drop="bare",
        slot=True,
    ),
    _short(
        r"(?:i|we)(?:'ve|\s+have)\s+been\s+(?:in|at|on|with)\s+"
        + _FEW
        + r"\s+(?:since|ever since)\b",
        "fact",
        0.8,
        lambda m, x: f"{x} now",
        drop="bare",
        slot=True,
    ),
    # where one is, alone: "…, and as of Monday I'm at Initech"
    _short(
        r"(?:(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:now\s+)?)(?:at|in|with)\s+"
        r"(?!(?:the|a|an|my|our|home|work|the office|school|bed)\b)" + _FEW + _END,
        "fact",
        0.8,
        lambda m, x: x,
        drop="bare",
        slot=True,
    ),
    # a known value alone: "brave, I don't use firefox anymore", "no, uv"
    _short(
        r"(?:(?:the|a|an)\s+)?" + _FEW + r"(?=\s*(?:$|[,;，；。.!?]))",
        "fact",
        0.8,
        lambda m, x: x if category(x) and not _CLAUSE_WORDS.search(x) else None,
        drop="bare",
        slot=True,
    ),
    _short(
        r"(?:现在)?去了?(?P<x>[^，。,]+?)了(?=$|[，。,])",
        "fact",
        0.8,
        "去{x}",
        drop="bare",
        slot=True,
    ),
    _short(
        r"(?:it's|its|it is)\s+(?:now\s+)?"
        r"(?!(?:a|an|the|not|that|this|what|fine|ok|okay|good|great|over)\b)"
        + _FEW
        + r"(?:\s+"
        + _NOW
        + r")?"
        + _END,
        "fact",
        0.8,
        lambda m, x: f"{x} now",
        drop="bare",
        slot=True,
    ),
]
