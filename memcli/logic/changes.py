"""The ways people say a change or a new fact, English and Chinese (extract, DESIGN §7):
verbs of leaving, selling, giving up ("I left X", "sold the X", "gave up on X", "离职",
"卖了"), of joining and moving ("started at Y", "I'm at Y now", "relocated to Y", "跳槽到Y",
"搬回Y"), of switching ("switched to", "went back to", "Y instead of X", "replaced X
with Y", "换成", "改成", "改用"), and the markers of a present state that replaces an
older one ("now", "these days", "no longer", "any more", "不再", "现在", "已经…了").
Each is a memcli.logic.cues Rule: the slot its value is of when the verb says it
(employer, home, car, team …; memcli.logic.slots finds it otherwise), and for a value
given up (`drop`) how it is said. Which entry a change concerns is
memcli.logic.extract's decision.
"""

from __future__ import annotations

import re

from memcli.logic.cues import Rule, rule
from memcli.logic.slots import category, noun_slot

#: who says it, or nobody ("sold the Subaru", "moved to Lisbon in May": chat drops the "I")
_S = (
    r"(?:(?:i|we)(?:'ve|'d|'m|\s+have|\s+had|\s+am|\s+are)?\s+)?(?:(?:just|finally|recently|"
    r"also|already|actually|basically|officially|now|since|then|eventually)\s+)*"
)
#: a present state, said as one that replaces an older one
_NOW = r"(?:now|these days|nowadays|at this point|for good|any\s?more)"
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
    return f"Works on {x}" if re.search(r"\bteam\b", x, re.I) else f"Lives in {x}"


def _uses(m: re.Match[str], x: str) -> str | None:
    """A new value said by a verb that does not say its slot ("switched to Helix")."""
    if re.match(r"(?:it|that|this|them|the (?:main|master) branch)\b", x, re.I):
        return None
    if not category(x) and re.search(r"\bteam\b", x, re.I):
        return f"Works on {x}"
    return f"Uses {x}"


def _known(m: re.Match[str], x: str) -> str | None:
    """A bare value ("Tesla now", "emacs now, not vim"): only one the lexicon knows."""
    return f"Uses {x}" if category(x) else None


def _car(m: re.Match[str], x: str) -> str | None:
    bare = re.sub(r"^(?:a|an|the|my)\s+", "", x, flags=re.I)
    article = "an" if bare[:1].lower() in "aeiou" else "a"
    return f"Drives {article} {bare}"


def _is(m: re.Match[str], x: str) -> str | None:
    return f"Is {x}" if category(x) == "diet" else None


def _drop(verb: str) -> object:
    def make(m: re.Match[str], x: str) -> str | None:
        if re.match(r"(?:it|that|this|them|him|her|you)\b", x, re.I):
            return None
        return f"{verb} {x}"

    return make


_THIRD = {
    "using": "uses",
    "drinking": "drinks",
    "eating": "eats",
    "playing": "plays",
    "driving": "drives",
    "writing": "writes",
    "running": "runs",
}


def _zh_switched(m: re.Match[str], x: str) -> str | None:
    """ "手机换成 iPhone 15 了" names its slot; "改成 VS Code 了" leaves it to the value."""
    key = re.sub(r"^(?:我|我们|团队|我的|本人|已经)+", "", m.group("k") or "")
    if key and noun_slot(key):
        return f"用户的{key}是{x}"
    return f"用{x}"


_TEAM = r"(?:the\s+)?(?P<x>[\w -]+?\s+team)"

CHANGES: list[Rule] = [
    # given up: "I left Globex", "sold the Subaru", "gave up on Vim", "quit sugar"
    rule(
        _S + r"(?:left|resigned from|departed|parted ways with|moved out of|moved away from)\s+"
        r"(?P<x>(?!my\s+(?:keys|phone|bag|wallet|laptop|umbrella|jacket)\b)[^,;.]+)",
        "correction",
        0.85,
        _drop("Left"),
        drop="named",
    ),
    rule(
        _S + r"(?:sold|got rid of|traded in|scrapped|returned)\s+(?P<x>[^,;.]+?)"
        r"(?=\s+for\s+|$|[,;.])",
        "correction",
        0.85,
        _drop("Sold"),
        drop="named",
    ),
    rule(
        _S + r"(?:gave up(?:\s+on)?|ditched|dropped|abandoned|quit)\s+(?P<x>[^,;.]+)",
        "correction",
        0.85,
        _drop("Quit"),
        drop="frame",
    ),
    rule(
        _S + r"(?:stopped|quit)\s+(?P<v>using|drinking|eating|playing|driving|writing|running)\s+"
        r"(?P<x>[^,;.]+)",
        "correction",
        0.85,
        lambda m, x: f"No longer {_THIRD[m.group('v').lower()]} {x}",
        drop="own",
    ),
    rule(
        r"no more\s+(?P<x>[^,;.]+?)(?:\s+for me)?$", "correction", 0.85, _drop("Quit"), drop="frame"
    ),
    rule(r"(?P<x>[^,;.]+?)\s+is behind me", "correction", 0.85, _drop("Left"), drop="named"),
    # joined: "I'm working at Initech now", "started at Umbrella", "new job at Initech"
    rule(
        _S + r"(?:(?:am|'m|was)\s+)?(?:now\s+)?(?:working|employed|hired|doing (?:contract )?work)"
        r"\s+(?:at|for|by|with)\s+(?P<x>[^,;.]+)",
        "fact",
        0.85,
        _employer,
        slot_name="employer",
    ),
    rule(
        _S + r"(?:joined|started (?:working )?at|started a new job at|took a (?:job|position) at|"
        r"taken a (?:job|position) at|accepted an offer from|got hired by|got a job at|"
        r"signed with|remain at|still work at|am still at|'m still at)\s+(?!the\s+[\w -]+team)"
        r"(?P<x>[^,;.]+)",
        "fact",
        0.85,
        _employer,
        slot_name="employer",
    ),
    rule(
        r"(?:my\s+)?new job(?:\s+is)?(?:\s+at|:)\s*(?P<x>[^,;.]+)",
        "fact",
        0.85,
        _employer,
        slot_name="employer",
    ),
    rule(
        r"i(?:'m|\s+am)\s+(?:now\s+)?at\s+(?P<x>[^,;.]+?)\s+" + _NOW + r"\b.*",
        "fact",
        0.85,
        _employer,
        slot_name="employer",
    ),
    # teams: "joined the infra team", "I'm on the search team now"
    rule(
        _S + r"(?:joined|moved to|switched to|(?:am|'m)\s+(?:now\s+)?(?:on|in|part of)|ended up on|"
        r"got moved to|transferred to|work on|been moved to)\s+" + _TEAM + r"\b",
        "fact",
        0.85,
        "Works on the {x}",
        slot_name="team",
    ),
    # home: "living in Vienna now", "relocated to Hamburg", "we're out in Dresden now"
    rule(
        _S + r"(?:relocated|moved(?:\s+back)?|moving)\s+(?:from\s+[^,;]+?\s+)?to\s+(?P<x>[^,;.]+)",
        "correction",
        0.85,
        lambda m, x: _uses(m, x) if category(x) else _home(m, x),
        slot_name="",
    ),
    rule(
        _S + r"(?:(?:am|'m|are|'re)\s+)?(?:now\s+)?(?:living|residing|reside|live|settled)\s+"
        r"(?:in|at)\s+(?P<x>[^,;.]+)",
        "fact",
        0.8,
        _home,
        slot_name="home",
    ),
    rule(
        r"(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:out\s+|back\s+)?in\s+(?P<x>[^,;.]+?)\s+"
        + _NOW
        + r"\b",
        "fact",
        0.8,
        _home,
        slot_name="home",
    ),
    # cars: "I drive a Tesla now", "bought a used Golf"
    rule(
        _S + r"(?:(?:am|'m)\s+)?(?:drive|driving)\s+(?P<x>(?:a|an|the)\s+[^,;.]+)",
        "fact",
        0.8,
        _car,
        slot_name="car",
    ),
    # a new value by a verb that does not say the slot: memcli.logic.slots finds it
    rule(
        _S + r"(?:switched|switching|changed|migrated|moved|upgraded|converted|gone|went|got)\s+"
        r"(?:back\s+|over\s+)?(?:from\s+(?P<old>[^,;]+?)\s+)?to\s+(?P<x>[^,;.]+)",
        "correction",
        0.85,
        _uses,
        slot=True,
    ),
    rule(
        _S + r"(?:replaced|swapped)\s+(?P<old>[^,;]+?)\s+(?:with|for)\s+(?P<x>[^,;.]+)",
        "correction",
        0.85,
        _uses,
        slot=True,
    ),
    rule(
        _S + r"(?:(?:am|'m)\s+)?(?:back\s+on|(?:now\s+)?on|using|ended up (?:going )?with|"
        r"going with|went with|bought|got|picked up)\s+(?P<x>[^,;.]+?)(?:\s+" + _NOW + r")?$",
        "fact",
        0.8,
        lambda m, x: _known(m, x),
        slot=True,
    ),
    rule(r"(?P<x>[^,;.]+?)\s+(?:now|these days|nowadays)$", "fact", 0.8, _known, slot=True),
    rule(r"(?P<x>[^,;.]+?)\s+instead of\s+(?P<old>[^,;.]+)", "fact", 0.8, _known, slot=True),
    rule(r"i(?:'m|\s+am)\s+(?:now\s+)?(?P<x>\w+)\s+" + _NOW, "fact", 0.8, _is, slot=True),
    rule(
        r"i\s+report\s+to\s+(?P<x>[^,;.]+)",
        "fact",
        0.8,
        "User's manager is {x}",
        slot_name="manager",
    ),
    rule(
        r"new\s+(?P<k>manager|boss|lead|editor|shell|phone|car|laptop|browser)(?:\s+is|:)\s*"
        r"(?P<x>[^,;.]+)",
        "fact",
        0.85,
        "User's {k} is {x}",
        slot=True,
    ),
    # Chinese
    rule(
        r"(?:我|本人)?(?:已经|已|刚)?(?:从)?(?P<x>[^，。,]+?)离职了?",
        "correction",
        0.85,
        "从{x}离职",
        drop="named",
    ),
    rule(
        r"(?:我|本人)?(?:已经|已|刚)?离开了?(?P<x>[^，。,]+?)了?$",
        "correction",
        0.85,
        "离开{x}",
        drop="named",
    ),
    rule(
        r"(?:我)?(?:已经)?把?(?P<x>[^，。,把]+?)卖(?:掉)?了",
        "correction",
        0.85,
        "卖了{x}",
        drop="named",
    ),
    rule(
        r"(?:我)?(?:已经|已)?戒掉?了?(?P<x>[^，。,了]+)", "correction", 0.85, "戒{x}", drop="frame"
    ),
    rule(r"(?P<x>[^，。,]+?)戒了", "correction", 0.85, "戒{x}", drop="frame"),
    rule(
        r"(?:我|团队|我们)?(?:已经|现在)?(?:不再|不)(?P<v>用|使用|去|喝|开)(?P<x>[^，。,]+?)了",
        "correction",
        0.9,
        "不再{v}{x}",
        drop="own",
    ),
    rule(
        r"(?P<x>[^，。,]+?)(?:不怎么|很少)?(?:不去|不喝|不用|不写|不开)了",
        "correction",
        0.85,
        "不再用{x}",
        drop="own",
    ),
    rule(
        r"(?:我)?(?:已经|最近|终于)?(?:跳槽到|跳槽去|入职(?:了)?|加入了?|去了|(?:现)?就职于|"
        r"(?:现)?任职于)(?P<x>[^，。,]+?)(?:了|上班|工作)?$",
        "fact",
        0.85,
        lambda m, x: f"在{x}" if re.search(r"团队|组$", x) else f"在{x}工作",
        slot_name="",
    ),
    rule(
        r"(?:我)?(?:现在)?在(?P<x>[^，。,]+?)(?:上班|工作)",
        "fact",
        0.85,
        "在{x}工作",
        slot_name="employer",
    ),
    rule(
        r"(?:我们|我)?(?:家)?(?:已经|今年|终于|最近)?(?:.{0,6}?)(?:搬回|搬去|搬到|迁居|迁到)了?"
        r"(?:老家)?(?P<x>[^，。,]+?)了?$",
        "correction",
        0.85,
        "住在{x}",
        slot_name="home",
    ),
    rule(r"(?:我)?现在住(?:在)?(?P<x>[^，。,]+)", "fact", 0.8, "住在{x}", slot_name="home"),
    rule(
        r"(?:我)?(?:被)?(?:调到了?|调入|换到了?|转到了?)(?P<x>[^，。,]+?(?:团队|组))",
        "fact",
        0.85,
        "在{x}",
        slot_name="team",
    ),
    rule(
        r"(?:我)?(?:现在)?开(?P<x>[^，。,]+?)了?$",
        "fact",
        0.8,
        lambda m, x: f"开{x}" if category(x) == "car" else None,
        slot_name="car",
    ),
    rule(
        r"(?:我)?(?:现在)?(?:改喝|喝)(?P<x>[^，。,]+?)了?$", "fact", 0.8, "喝{x}", slot_name="drink"
    ),
    rule(
        r"(?:我)?现在向(?P<x>[^，。,]+?)汇报", "fact", 0.8, "用户的经理是{x}", slot_name="manager"
    ),
    rule(
        r"(?:我的)?(?P<k>[^，。,]{0,8}?)(?:已经)?(?:换成|改成|改用|换用|更换为|换为)了?"
        r"(?P<x>[^，。,]+?)了?$",
        "correction",
        0.85,
        _zh_switched,
        slot=True,
    ),
    rule(
        r"(?:我)?(?:现在)?(?:主要)?(?:用|使用|写)(?P<x>[^，。,]+?)了?$",
        "fact",
        0.8,
        lambda m, x: f"用{x}" if category(x) else None,
        slot=True,
    ),
]
