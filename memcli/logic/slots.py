"""Slots of extract (DESIGN §7): the one thing a statement or an entry gives a value to —
where one works, lives, what one drives, one's editor, shell, phone, language, manager …
— and the value, in English and Chinese. "Works at Globex" and "I'm working at Initech
now" are of the slot `employer`; "Uses Vim as the main editor" and "switched to Helix"
of `editor` (Helix is an editor: a small lexicon of well-known tools and makes, and the
nouns that name a slot, "editor", "手机"). An entry that states one fact has a frame, its
text with the value left out ("Uses {} as the main editor"): a new value takes the
entry's wording (`fill`), a value given up its negation (`negate`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from memcli.logic.cues import CJK


def _words(listed: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in listed.split(","))


#: well-known values of a slot (lower case; the first words of a value name it)
_LEXICON: dict[str, tuple[str, ...]] = {
    "editor": _words(
        "vim, neovim, nvim, emacs, helix, vs code, vscode, visual studio code, "
        "zed, sublime, sublime text, intellij, pycharm, goland, webstorm, "
        "cursor, nano, kakoune, atom, xcode, android studio, notepad++"
    ),
    "shell": _words("bash, zsh, fish, nushell, nu, powershell, ksh, tcsh, xonsh"),
    "browser": _words(
        "firefox, chrome, chromium, safari, brave, arc, edge, vivaldi, opera, librewolf, zen"
    ),
    "os": _words(
        "ubuntu, fedora, debian, arch, arch linux, linux mint, mint, nixos, "
        "manjaro, pop!_os, opensuse, gentoo, windows, macos, elementary, "
        "endeavouros, linux"
    ),
    "car": _words(
        "tesla, subaru, volvo, toyota, honda, bmw, audi, vw, volkswagen, golf, "
        "kia, hyundai, mazda, ford, polestar, rivian, nissan, skoda, renault, "
        "peugeot, fiat, mercedes, porsche, jeep, mini, prius, 比亚迪, 特斯拉, 蔚来, 理想, "
        "小鹏, 极氪, 问界, 大众, 丰田, 本田, 宝马, 奥迪, 奔驰, 小米su7"
    ),
    "phone": _words(
        "iphone, pixel, galaxy, samsung, oneplus, xiaomi, huawei, fairphone, "
        "nothing phone, 小米, 华为, vivo, oppo, 荣耀, 一加, 魅族"
    ),
    "laptop": _words("thinkpad, macbook, xps, framework, surface, zenbook, matebook"),
    "language": _words(
        "python, go, golang, rust, java, kotlin, typescript, javascript, ruby, "
        "c++, c#, c, swift, scala, elixir, haskell, php, clojure, ocaml, zig, "
        "dart, lua, perl, r, julia"
    ),
    "packages": _words("poetry, uv, pdm, pip, pipenv, conda, hatch, rye, pixi"),
    "ci": _words(
        "jenkins, github actions, gitlab ci, argo cd, argocd, spinnaker, "
        "circleci, travis, buildkite, flux, teamcity, drone, tekton"
    ),
    "database": _words("postgres, postgresql, mysql, mariadb, sqlite, mongodb, oracle"),
    "drink": _words("coffee, tea, green tea, black tea, matcha, decaf, 咖啡, 茶, 绿茶"),
    "diet": _words("vegetarian, vegan, pescatarian, keto, omnivore, 素食"),
}
#: more of them, kept apart to keep the table above short to read
_MORE = {
    "editor": "jetbrains, fleet, kate, gedit, textmate, bbedit, notepad, micro, lapce, windsurf, "
    "rider, clion, eclipse",
    "shell": "elvish, cmd",
    "browser": "duckduckgo, tor browser, waterfox, floorp, orion, mullvad browser",
    "os": "chromeos, kubuntu, xubuntu, rocky linux, almalinux, centos, rhel, red hat, void linux, "
    "alpine, solus, zorin",
    "car": "chevrolet, chevy, dodge, lexus, acura, infiniti, genesis, lucid, byd, nio, xpeng, "
    "zeekr, cupra, seat, opel, citroen, dacia, alfa romeo, land rover, range rover, jaguar, saab, "
    "suzuki, mitsubishi, cadillac, buick, lincoln, rav4, civic, corolla, camry, model 3, model y, "
    "model s, octavia, polo, leaf, ioniq, outback, forester, crosstrek, 吉利, 长城, 哈弗, 五菱, "
    "红旗, 领克, 零跑, 埃安, 小米 su7",
    "phone": "moto, motorola, nokia, xperia, redmi, honor, realme, 红米, 苹果手机",
    "laptop": "dell, latitude, elitebook, spectre, lenovo, yoga, legion, asus, rog, razer, "
    "chromebook, 小米笔记本, 联想, 戴尔",
    "language": "elm, erlang, f#, fortran, cobol, nim, crystal, gleam, mojo, solidity, objective-c",
    "packages": "npm, yarn, pnpm, bun, cargo, pip-tools",
    "ci": "azure pipelines, bamboo, harness, concourse, woodpecker, bitbucket pipelines",
    "database": "cockroachdb, clickhouse, redis, dynamodb, cassandra, sql server, mssql, timescale",
    "drink": "espresso, latte, oat milk, soy milk, juice, herbal tea, chai, rooibos, mate, "
    "yerba mate, kombucha, cold brew, hot chocolate, cocoa, water, 豆浆, 牛奶, 奶茶, 红茶, "
    "花茶, 乌龙茶",
}
for _slot, _listed in _MORE.items():
    _LEXICON[_slot] += _words(_listed)
#: nouns that name a slot where it is the subject or the role ("my editor is …", "手机换成…")
_NOUNS: dict[str, tuple[str, ...]] = {
    "editor": _words("editor, ide, 编辑器, 写代码"),
    "shell": _words("shell, 终端"),
    "browser": _words("browser, 浏览器"),
    "os": _words("desktop, os, operating system, distro, 系统"),
    "car": _words("car, vehicle, 车, 座驾"),
    "phone": _words("phone, 手机"),
    "laptop": _words("laptop, work laptop, notebook, 笔记本, 电脑, 笔记本办公"),
    "language": _words("language, programming language, 语言, 开发"),
    "packages": _words("dependencies, python dependencies, 依赖, 包管理"),
    "ci": _words("ci, deploys, deploy, deployment, 持续集成, 部署"),
    "database": _words("database, db, 数据库"),
    "manager": _words("manager, boss, lead, 经理, 领导, 上级"),
    "employer": _words("employer, 雇主, 东家"),
    "timezone": _words("timezone, time zone, 时区"),
    "team": _words("team, 团队, 组"),
    "home": _words(
        "home, hometown, home city, city, town, residence, place of residence, 居住地, 住址, 住处"
    ),
    "drink": _words("drinks, 喝"),
}
_ARTICLE = r"(?:(?:a|an|the|my)\s+)?"
#: words before a value that do not name it ("a used Golf", "mostly Python")
_BARE = re.compile(
    r"^(?:(?:a|an|the|my|our|used|new|brand new|second-hand|secondhand|old|mostly|mainly|"
    r"primarily|largely|basically|only|just)\s+)+",
    re.I,
)

#: one-fact texts: (pattern with the value `v` and maybe a slot noun `k`, the slot or "")
_FRAMES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.I), slot)
    for p, slot in [
        (r"^(?:works|is working) (?:at|for) (?P<v>.+)$", "employer"),
        (r"^(?:works on|is on|is in) the (?P<v>.+?) team$", "team"),
        (r"^(?:lives|is living) (?:in|at) (?P<v>.+)$", "home"),
        (r"^is based in (?P<v>.+)$", "home"),
        (rf"^drives {_ARTICLE}(?P<v>.+)$", "car"),
        (r"^drinks (?P<v>.+?)(?P<rest> (?:in the mornings?|every \w+|at \w+))?$", "drink"),
        (r"^is (?P<v>vegetarian|vegan|pescatarian|keto|an omnivore)$", "diet"),
        (
            r"^(?:writes|codes(?: mostly| mainly)? in|programs in) (?:mostly |mainly )?(?P<v>.+)$",
            "",
        ),
        (rf"^uses {_ARTICLE}(?P<v>.+?) as {_ARTICLE}(?:main |default |primary )?(?P<k>.+)$", ""),
        (rf"^uses {_ARTICLE}(?P<v>.+?) to (?:manage |run |for )?(?P<k>.+)$", ""),
        (rf"^uses {_ARTICLE}(?P<v>.+)$", ""),
        (rf"^has {_ARTICLE}(?P<v>.+)$", ""),
        (rf"^runs {_ARTICLE}(?P<v>.+?) on {_ARTICLE}(?P<k>.+)$", ""),
        (r"^prefers (?P<v>.+?) for (?P<k>.+)$", "prefers for"),
        (r"^prefers (?P<v>\w+) (?P<k>themes?|mode|fonts?)$", "prefers"),
        (r"^plays (?P<v>.+?) (?P<k>on weekends|every \w+)$", "weekly"),
        (r"^(?P<s>(?:the|our) .+?) (?:deploys|ships|runs) (?:with|on) (?P<v>.+)$", "ci"),
        (
            r"^(?:user's |the |our |my )?(?P<k>[^\W\d_][\w' -]{0,40}?) (?:is|are) "
            rf"{_ARTICLE}(?P<v>(?!no longer\b|not\b).+)$",
            "",
        ),
        (r"^用户的(?P<k>.+?)(?:是|叫)(?P<v>.+)$", ""),
        (r"^(?:喜欢)?用?(?P<v>\S+?)(?P<k>主题|模式|字体)$", "prefers"),
        (r"^在(?P<v>.+?)(?:工作|上班)$", "employer"),
        (r"^在(?P<v>.+?)(?:团队|组)$", "team"),
        (r"^住在(?P<v>.+)$", "home"),
        (r"^开(?:一辆)?(?P<v>.+)$", "car"),
        (r"^(?P<pre>每天早上|早上|每天)?喝(?P<v>.+)$", "drink"),
        (r"^周末去(?P<v>.+)$", "weekly"),
        (r"^(?P<s>团队|我们)用(?P<v>.+?)(?P<k>做持续集成|部署|做 ?CI)$", "ci"),
        (r"^(?:主要)?用(?P<v>.+?)(?P<k>写代码|开发|笔记本办公|办公|做持续集成)$", ""),
        (r"^(?:主要)?用(?P<v>.+)$", ""),
    ]
]


#: nouns of one slot said in several ways
_SAME_KEY = {"theme": "themes", "mode": "themes", "themes": "themes", "font": "fonts"}


@dataclass(frozen=True)
class Slot:
    name: str  # employer, home, car, editor, … ; "" when only the wording says
    value: str
    frame: str  # the text with "{}" for the value; "" when the text says more than one fact
    #: the words that say which one of the slot it is ("work" of "work phone", "staging" of
    #: "the staging database"): a statement is of an entry only when the entry says them too
    of: tuple[str, ...] = ()
    #: the subject is a thing, not the person ("The staging database is …"): a statement is
    #: of it only when it names the thing (`of`)
    thing: bool = False


def _first_words(value: str) -> str:
    plain = "".join(c for c in unicodedata.normalize("NFKD", value) if not unicodedata.combining(c))
    return " ".join(plain.casefold().replace("-", " ").split())


#: what may follow a known name in a value: a name's own words ("Pixel 9 Pro", "Model 3"),
#: where or how much ("green tea in the mornings", "Go every day"), the slot's noun ("fish
#: shell"); not a clause ("the Subaru finally died")
_NAME_TAIL = re.compile(
    r"^(?:[A-Z0-9]\S*|\d\S*|[^\w\s]\S*|[a-z]+-\w+|(?:pro|max|air|plus|mini|ultra|lite|se|xl|"
    r"hybrid|ev|gt|gti|sport|touring|wagon|estate|nightly|insiders|beta|stable)\b|"
    r"(?:in|on|at|for|with|from|by|to|of|as|via|and|or|every|"
    r"each|all|only|mostly|mainly|exclusively|too|again|daily|full|now|these|nowadays|"
    r"btw|tbh|lol|ftw|fwiw|honestly|please|though|still|already)\b)"
)


def _name_tail(value: str, size: int) -> bool:
    """What follows the lexicon's name in `value` is a name's tail, not a clause."""
    bare = _BARE.sub("", value.strip())
    rest = bare[size:].strip() if len(bare) >= size else ""
    return not rest or bool(_NAME_TAIL.match(rest)) or bool(noun_slot(rest.split()[0]))


def category(value: str) -> str:
    """The slot a value is of by the lexicon ("Helix" → editor, "特斯拉" → car), or "": its
    first words are a name the lexicon knows and what follows is no clause of its own."""
    v = _first_words(_BARE.sub("", value.strip()))
    best, size = "", 0
    for name, words in _LEXICON.items():
        for word in words:
            cjk = CJK.search(word)
            hit = v.startswith(word) if cjk else v == word or v.startswith(word + " ")
            if hit and len(word) > size:
                best, size = name, len(word)
    if best and not CJK.search(value) and not _name_tail(value, size):
        return ""  # "the Subaru finally died": a clause about the Subaru, not a value
    return best


def fits(value: str, name: str) -> bool:
    """`value` may be one of slot `name`: the lexicon's, when it knows the slot's values
    ("bikes" is no car, "Tesla" is), else any value of no other slot ("Initech", "Berlin")."""
    known = category(value)
    return known == name if known or name in _LEXICON else True


#: words before a slot's noun that say which one of it ("work phone", "home laptop",
#: "prod database", "工作手机"): a statement with one is of another entry than one without
_WHICH = frozenset(
    _words(
        "work, home, personal, private, office, school, side, hobby, gaming, travel, family, "
        "company, old, previous, former, second, spare, backup, other, prod, production, "
        "staging, dev, test, testing, qa, local, remote, 工作, 私人, 家里, 家用, 备用, 旧, 公司, "
        "生产, 测试"
    )
)
#: people a noun may be of ("my partner is vegan now" is the partner's diet, not the person's)
_PEOPLE = frozenset(
    _words(
        "partner, wife, husband, spouse, girlfriend, boyfriend, sister, brother, sibling, mom, "
        "mum, mother, dad, father, parents, son, daughter, kid, kids, child, friend, colleague, "
        "coworker, co-worker, neighbour, neighbor, roommate, flatmate, cousin, uncle, aunt"
    )
)


def _which(key: str, name: str) -> tuple[str, ...]:
    """The words of a slot's noun phrase that say which one of the slot it is ("work" of
    "work phone", "staging" of "staging database", a possessive: "manager's"), none for the
    noun alone ("phone", "work laptop" when that is the slot's noun, "main editor")."""
    n = _first_words(key).replace("’", "'")
    for word in sorted(_NOUNS.get(name, ()), key=len, reverse=True):
        if n == word or n.endswith(" " + word) or (CJK.search(word) and n.endswith(word)):
            n = n[: len(n) - len(word)]
            break
    if CJK.search(n):
        return tuple(w for w in sorted(_WHICH) if CJK.search(w) and w in n)
    return tuple(w for w in n.split() if w in _WHICH or w.endswith("'s"))


def _of_another(key: str) -> bool:
    """A noun of something else's ("editor font", "manager's manager", "partner", "编辑器字
    体": the head noun is the last, and is of no slot): no slot of the person's, whatever its
    value is."""
    n = _first_words(key).replace("’", "'")
    words = n.split()
    if not words:
        return False
    if CJK.search(n):
        nouns = [w for ws in _NOUNS.values() for w in ws if CJK.search(w)]
        return any(w in n for w in nouns) and not noun_slot(n)
    return (
        any("'" in w for w in words)
        or words[-1] in _PEOPLE
        or any(noun_slot(w) for w in words[:-1])
    )


def noun_slot(noun: str) -> str:
    """The slot a noun names ("main editor" → editor, "手机" → phone), or ""."""
    n = _first_words(noun)
    for name, nouns in _NOUNS.items():
        for word in nouns:
            if n == word or n.endswith(" " + word) or (CJK.search(word) and n.endswith(word)):
                return name  # the noun is the head, the last: "手机号" is no phone
    return ""


#: what a question about the person asks for, by its verb ("where do you work?")
_ASKED_BY_VERB = [
    (
        re.compile(
            r"\b(?:where|who) do you (?:work|work for)\b|\bwhich company\b"
            r"|在哪(?:里|儿)?(?:工作|上班)|哪家公司",
            re.I,
        ),
        "employer",
    ),
    (
        re.compile(
            r"\bwhere do you live\b|\bwhere are you based\b|\bwhich city\b|住(?:在)?哪", re.I
        ),
        "home",
    ),
    (re.compile(r"\bwhat do you drive\b|开什么车", re.I), "car"),
    (re.compile(r"\bwho do you report to\b|向谁汇报", re.I), "manager"),
]


def asked_slot(question: str) -> str:
    """The slot a question asks the person for ("What editor are you using these days?" →
    editor, "Where do you work?" → employer, "你用什么编辑器？" → editor), or ""."""
    for pattern, name in _ASKED_BY_VERB:
        if pattern.search(question):
            return name
    q = _first_words(question)
    for name, nouns in _NOUNS.items():
        for word in nouns:
            if CJK.search(word) and word in q and len(word) > 1:
                return name
            if not CJK.search(word) and re.search(
                rf"\b(?:what|which|your) (?:\w+ )?{re.escape(word)}\b", q
            ):
                return name
    return ""


def parse(text: str) -> Slot | None:
    """The slot and value of a one-fact text ("Works at Globex", "用户的手机是华为 Mate 40"),
    or None. A text of several clauses has no frame (a new value never goes into it)."""
    first = text.split("\n")[0].strip().rstrip(" .。")
    several = bool(re.search(r"[;；]|\.\s|,\s*(?:and|but)\s|，", first))
    for pattern, fixed in _FRAMES:
        m = pattern.match(first)
        if not m:
            continue
        groups = m.groupdict()
        value = (groups.get("v") or "").strip()
        if not value:
            continue
        name = fixed
        key = (groups.get("k") or "").strip()
        if not name or name in ("prefers for", "prefers", "weekly"):
            by_noun = noun_slot(key) if key else ""
            if fixed:  # "Prefers dark themes" / "Prefers light mode": one slot
                name = f"{fixed} {_SAME_KEY.get(key.casefold(), key.casefold())}"
            elif key and (not by_noun or first.startswith("用户的")) and _of_another(key):
                # "editor font", "用户的编辑器字体": not the editor
                name = f"of {key.casefold()}"
            else:
                name = by_noun or category(value) or (f"of {key.casefold()}" if key else "")
        if not name:
            continue
        start = m.start("v") + len(groups["v"]) - len(groups["v"].lstrip())
        end = m.end("v") - len(groups["v"]) + len(groups["v"].rstrip())
        frame = "" if several else first[:start] + "{}" + first[end:]
        which = _which(key, name) if key and not fixed and not name.startswith("of ") else ()
        thing = bool(re.match(r"(?:the|our) ", first, re.I)) and not groups.get("s")
        return Slot(name, value, frame, which, thing)
    return None


def fill(frame: str, value: str) -> str:
    """`frame` with `value` (its own article dropped); "a"/"an" before it chosen anew."""
    value = _BARE.sub("", value.strip())
    before, _, after = frame.partition("{}")
    said = re.search(rf"\s*{re.escape(after.strip())}s?\b", value, re.I) if after.strip() else None
    if said and said.start() > 0:  # "green tea in the mornings" + "… in the morning"
        value = value[: said.start()]
    for noun in ("手机", "笔记本", "电脑", "主题", "编辑器"):  # "用户的手机是{}" + "小米手机"
        if value.endswith(noun) and noun in frame and len(value) > len(noun):
            value = value[: -len(noun)].strip()
    if CJK.search(before):  # "周末去{}" + "周末游泳": the words the frame has already
        lead = before.strip()
        while lead and not value.startswith(lead):
            lead = lead[:-1]
        value = value[len(lead) :].strip() if len(lead) >= 2 else value
    article = re.search(r"\b(an?) $", before, re.I)
    if article:
        before = before[: article.start()] + ("an " if value[:1].lower() in "aeiou" else "a ")
    return before + value + after


def negate(text: str) -> str:
    """A one-fact text said no longer true: "No longer works at Globex", "不再在阿里巴巴工作"."""
    if text.startswith("用户的") and "是" in text:  # "用户的手机不再是华为 Mate 40"
        return text.replace("是", "不再是", 1)
    if CJK.match(text):
        return "不再" + text
    said = re.match(r"(?P<s>(?:the|our|user's) [\w' -]+?) (?P<v>is|are|\w+s) ", text, re.I)
    if said and said.group("v") in ("is", "are"):  # "The staging database is no longer …",
        # "User's manager is no longer Dana"
        return f"{said.group('s')} {said.group('v')} no longer {text[said.end() :]}"
    if said:  # "The team no longer deploys with Jenkins"
        return f"{said.group('s')} no longer {said.group('v')} {text[said.end() :]}"
    return "No longer " + text[:1].lower() + text[1:]
