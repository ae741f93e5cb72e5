"""Whether two memory entries say the same thing, contradict each other or are distinct
(compress, docs/maintenance.md). Pure: two texts and the cosine of their embeddings in,
a verdict out.

Signals that generalise beyond the examples: the embedding cosine (topic and meaning),
lexical overlap of content words (Snowball stems; CJK character bigrams), and structure:
the two texts aligned word by word after dropping filler words. Same frame with one slot
swapped ("Uses Neovim for X" / "Uses Helix for X") is never the same fact: a value after
a relation word (is, at, in, named, 是 …) or a number makes it a contradiction, anything
else two distinct facts. The same words with a negation on one side ("Drinks coffee" /
"Doesn't drink coffee") contradict. Thresholds are chosen on bench/data/*.jsonl
(bench/maintenance.py prints precision and recall).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Verdict = Literal["duplicate", "contradiction", "distinct"]

#: weight of lexical overlap in the duplicate score (the rest is the cosine); more in
#: Chinese, where all-MiniLM-L6-v2 (an English model) tells meanings apart poorly
OVERLAP_WEIGHT = 0.3
OVERLAP_WEIGHT_CJK = 0.7

_CJK_CHAR = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_CHAR}]")
_LETTER = rf"(?:(?![{_CJK_CHAR}])[^\W\d_])"
_TOKEN = re.compile(rf"[{_CJK_CHAR}]|\d+(?:[.:]\d+)*|{_LETTER}+(?:'{_LETTER}+)?")
#: words that carry no fact of their own (articles, pronouns, auxiliaries, hedges)
_FILLER = frozenset(
    """a an the user user's users person they them their he him his she her i me my we our
    you your it its this that these those do does did done doing now currently still
    actually also really always usually just please so very every all each any of
    s 's been other 了 的 都 也 很 着""".split()  # noqa: SIM905
)
_NEGATION = frozenset(["not", "no", "never", "longer", "quit", "stop", "不", "没", "无"])
#: words after which what follows is a value a newer entry overwrites
_VALUE_WORDS = frozenset(
    """be is are was were am use used uses using run runs on at in from version prefer
    prefers preferred live lives lived based work works moved move target targets set
    default named name called last lasts take takes kept 是 用 在 为 叫 到""".split()  # noqa: SIM905
)
#: the same relation in other words (mapped to the first)
_SYNONYMS = {
    word: group[0]
    for group in (
        ("like", "prefer", "love", "enjoy", "favour", "favor", "favourit", "favorit", "fond"),
        ("dislik", "hate", "detest", "annoy"),
        ("use", "util", "employ"),
        ("live", "reside", "base"),
        ("bike", "cycl"),
        ("mom", "mother", "mum"),
        ("dad", "father"),
        ("job", "task"),
    )
    for word in group
}
_IRREGULAR = {
    "has": "have", "had": "have", "having": "have", "is": "be", "are": "be", "was": "be",
    "were": "be", "am": "be", "being": "be", "kept": "keep", "ran": "run",
    "went": "go", "goes": "go", "grew": "grow",
}  # fmt: skip
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve".split(),  # noqa: SIM905
    )
} | {"once": "1", "twice": "2", "half": "0.5", "double": "2"}
#: time words compare like numbers ("30 June" / "15 July" is one value)
_TIME_WORDS = frozenset(
    """january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
    thursday friday saturday sunday am pm morning afternoon evening night""".split()  # noqa: SIM905
)
#: words that join others and hold no value of their own
_FUNCTION = frozenset(
    """and or but for when while with without to in on at by from of as into onto than
    over under about before after during since until per via be have get 和 与 或 在 把
    被 给 跟 对 从 向 于 时""".split()  # noqa: SIM905
)
_CJK_NUMBERS = frozenset("零一二两三四五六七八九十百千半")
#: verbs that carry the relation, not the fact ("Takes oat milk in coffee" = "Drinks oat
#: milk in coffee"): swapping one is a rewording, never another value
_LIGHT = frozenset(
    "be have take get use keep do go happen hold put 有 用 是 为 对 放".split()  # noqa: SIM905
)
#: two texts that each say something the other does not (a qualifier, an object, a scope)
#: are one fact only when their meanings are this close (cosine); chosen on the tune half
#: of bench/data/duplicates.jsonl ("Prefers pytest for testing Python code" ≠ "Prefers
#: pytest markers for slow tests", 0.66)
BOTH_SIDES_COSINE = 0.7


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - snowballstemmer has no type hints
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=100_000)
def _stem(word: str) -> str:
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.isascii() and word.isalpha():
        return _stemmer().stemWord(word)
    return word


@dataclass(frozen=True)
class Token:
    """One content word of an entry."""

    norm: str  # stem, synonyms mapped to one word ("prefers", "likes" -> "like")
    stem: str  # stem as written ("prefer")
    distinctive: bool  # names something: a number, a capitalized name, Latin in CJK text
    number: bool  # a number, a number word or a time word (month, weekday)
    cjk: bool


@lru_cache(maxsize=50_000)
def tokens(text: str) -> tuple[Token, ...]:
    """The content words of `text`, in order (fillers dropped, negations kept)."""
    raw = unicodedata.normalize("NFKC", text).replace("’", "'")
    raw = re.sub(r"(?i)\b(\w+)n't\b", r"\1 not", raw)
    raw = re.sub(r"(?i)\bdislik(?:e|es|ed|ing)\b", "not like", raw)  # = "doesn't like"
    raw = re.sub(r"(?i)\bany\s?(?:more|longer)\b", " ", raw)
    raw = raw.replace("不再", "不").replace("没有", "没")
    has_cjk = bool(_CJK.search(raw))
    out: list[Token] = []
    for index, match in enumerate(_TOKEN.finditer(raw)):
        word = match.group()
        if _CJK.match(word):
            if word not in _FILLER:
                number = word in _CJK_NUMBERS
                out.append(Token(word, word, number, number, True))
            continue
        lower = word.casefold()
        lower = lower.removesuffix("'s")
        if lower in _FILLER:
            continue
        number = lower[0].isdigit() or lower in _NUMBER_WORDS or lower in _TIME_WORDS
        named = (
            (index > 0 and word[0].isupper())
            or (any(c.isupper() for c in word[1:]) and not word.isupper())
            or (word.isupper() and len(word) > 1)
            or (has_cjk and word.isascii())
        )
        stem = _stem(lower)
        out.append(Token(_SYNONYMS.get(stem, stem), stem, number or named, number, False))
    return tuple(out)


def _negations(seq: tuple[Token, ...]) -> tuple[int, tuple[str, ...]]:
    count = sum(t.norm in _NEGATION for t in seq)
    rest = tuple(t.norm for t in seq if t.norm not in _NEGATION)
    return count, rest


_VALUE_STEMS = frozenset(_stem(w) for w in _VALUE_WORDS)
_STRONG_CJK = frozenset("是叫为")


def _bag(seq: tuple[Token, ...]) -> set[str]:
    """Content units for overlap: Latin stems, CJK characters and character bigrams."""
    bag = {t.norm for t in seq if t.norm not in _NEGATION}
    cjk = [t.norm for t in seq if t.cjk]
    bag |= {a + b for a, b in zip(cjk, cjk[1:], strict=False)}
    return bag


@lru_cache(maxsize=50_000)
def units(text: str) -> frozenset[str]:
    """The content units of `text` whose overlap PairFeatures.overlap measures."""
    return frozenset(_bag(tokens(text)))


@dataclass(frozen=True)
class PairFeatures:
    """What the verdict on a pair of entries rests on."""

    cosine: float
    overlap: float  # Dice coefficient of the content units
    exact: bool  # the same content words in the same order
    negated: bool  # the same words, a negation on one side only
    swapped: bool  # the same frame with one slot replaced
    conflict: bool  # the replaced slot holds a value (number, or after a relation word)
    clash: bool  # each side names something (a number, a name) the other does not
    polarity: bool = False  # one side says not/no/never/不, the other does not
    cjk: bool = False  # either text has CJK characters
    both_say_more: bool = False  # each side holds a content word the other lacks
    numbers_differ: bool = False  # both hold numbers, not the same ones

    @property
    def duplicate_score(self) -> float:
        """Cosine blended with lexical overlap."""
        weight = OVERLAP_WEIGHT_CJK if self.cjk else OVERLAP_WEIGHT
        return (1.0 - weight) * self.cosine + weight * self.overlap


def features(a: str, b: str, cosine: float) -> PairFeatures:
    """The features of the pair (a, b) whose embeddings have this cosine."""
    ta, tb = tokens(a), tokens(b)
    na, nb = [t.norm for t in ta], [t.norm for t in tb]
    bag_a, bag_b = units(a), units(b)
    overlap = 2 * len(bag_a & bag_b) / (len(bag_a) + len(bag_b)) if bag_a or bag_b else 1.0
    neg_a, rest_a = _negations(ta)
    neg_b, rest_b = _negations(tb)
    negated = bool(rest_a) and rest_a == rest_b and (neg_a > 0) != (neg_b > 0)
    swapped, conflict = _one_slot(ta, tb, na, nb)
    only_a = {t.norm for t in ta if t.distinctive} - set(nb)
    only_b = {t.norm for t in tb if t.distinctive} - set(na)
    return PairFeatures(
        cosine=float(cosine),
        overlap=overlap,
        exact=na == nb,
        negated=negated,
        swapped=swapped,
        conflict=conflict,
        clash=bool(only_a and only_b),
        polarity=(neg_a > 0) != (neg_b > 0),
        cjk=any(t.cjk for t in (*ta, *tb)),
        both_say_more=_says_more(ta, tb) and _says_more(tb, ta),
        numbers_differ=_numbers_differ(ta, tb),
    )


def _holds_word(span: Sequence[Token]) -> bool:
    return any(t.stem not in _FUNCTION and t.norm not in _NEGATION for t in span)


def _light(span: Sequence[Token]) -> bool:
    """The span is only a light verb (and function words): "Takes" in "Takes oat milk"."""
    return all(not t.distinctive and (t.stem in _FUNCTION or t.norm in _LIGHT_STEMS) for t in span)


_LIGHT_STEMS = frozenset(_stem(w) for w in _LIGHT)


def _says_more(mine: tuple[Token, ...], theirs: tuple[Token, ...]) -> bool:
    """`mine` holds a content word (not a function word, a negation or a light verb) that
    `theirs` lacks: a qualifier, an object or a scope of its own."""
    other = {t.norm for t in theirs}
    return any(
        not t.cjk
        and t.norm not in other
        and t.stem not in _FUNCTION
        and t.norm not in _NEGATION
        and t.norm not in _LIGHT_STEMS
        for t in mine
    )


def _numbers_differ(ta: tuple[Token, ...], tb: tuple[Token, ...]) -> bool:
    """Both texts hold numbers, not the same ones ("每周跑四十公里" / "每周日跑十公里")."""
    na = {t.norm for t in ta if t.number and not t.norm.isalpha()} | {
        t.norm for t in ta if t.cjk and t.number
    }
    nb = {t.norm for t in tb if t.number and not t.norm.isalpha()} | {
        t.norm for t in tb if t.cjk and t.number
    }
    return bool(na) and bool(nb) and na != nb


def _one_slot(
    ta: tuple[Token, ...], tb: tuple[Token, ...], na: list[str], nb: list[str]
) -> tuple[bool, bool]:
    """(one slot replaced, and that slot holds a value): the texts align except for one
    short span on each side that shares no word with the other and holds a content word
    (not only "for"/"when" or a relation word)."""
    if not na or not nb or na == nb:
        return False, False
    if sorted(na) == sorted(nb) and ({"over", "than", "instead", "rather"} & set(na)):
        return True, True  # "X over Y" / "Y over X"
    ops = difflib.SequenceMatcher(None, na, nb, autojunk=False).get_opcodes()
    changed = [op for op in ops if op[0] != "equal"]
    if len(changed) > 1 and all(
        op[0] == "replace" and _holds_word(ta[op[1] : op[2]]) and _holds_word(tb[op[3] : op[4]])
        for op in changed
    ):
        return True, False  # the same frame, several slots replaced: another fact
    if len(changed) != 1 or changed[0][0] != "replace":
        return False, False
    _, i1, i2, j1, j2 = changed[0]
    sa, sb = ta[i1:i2], tb[j1:j2]
    cjk = any(t.cjk for t in (*ta, *tb))
    same = len(na) - len(sa)
    if set(na[i1:i2]) & set(nb[j1:j2]) or not (_holds_word(sa) and _holds_word(sb)):
        return False, False
    if i1 == 0 and j1 == 0 and (_light(sa) or _light(sb)):
        return False, False  # the predicate reworded: "Drinks oat milk" / "Takes oat milk"
    ratio = same / max(len(na), len(nb))
    if same < (1 if cjk else 2) or ratio < 0.4:
        return False, False
    span = 6 if cjk else 3
    if len(sa) > span or len(sb) > span or (ratio < 0.5 and not cjk):
        return True, False  # a longer clause swapped: another fact, no single value
    # a number or date on each side, nothing else changed with it ("Japan twice")
    numbers = all(
        any(t.number for t in side)
        and all(t.number or t.stem in _FUNCTION or not t.distinctive for t in side)
        for side in (sa, sb)
    )
    # the word before the slot (two back past a name's first character: 叫小雨)
    window = ta[max(0, i1 - 2) : i1]
    if cjk and len(window) == 2 and window[0].stem not in _STRONG_CJK:
        window = window[1:]
    after_value = any(t.stem in _VALUE_STEMS for t in window)
    return True, numbers or after_value


def judge(
    pair: PairFeatures, duplicate_threshold: float, contradiction_similarity: float
) -> Verdict:
    """duplicate / contradiction / distinct. A contradiction needs the topic close
    (cosine ≥ contradiction_similarity) and a structural sign; a duplicate needs no such
    sign, no names or numbers on both sides that the other lacks, and a duplicate score
    ≥ duplicate_threshold (or the same content words)."""
    if pair.negated or pair.conflict:
        close = max(pair.cosine, pair.overlap) >= contradiction_similarity
        return "contradiction" if close else "distinct"
    if pair.exact:
        return "duplicate"
    if pair.swapped or pair.clash or pair.polarity or pair.numbers_differ:
        return "distinct"
    if pair.both_say_more and pair.cosine < BOTH_SIDES_COSINE:
        return "distinct"  # a qualifier, object or scope on each side: two facts
    return "duplicate" if pair.duplicate_score >= duplicate_threshold else "distinct"


def verdict(
    a: str, b: str, cosine: float, duplicate_threshold: float, contradiction_similarity: float
) -> Verdict:
    """judge(features(a, b, cosine), …): the verdict on one pair of texts."""
    return judge(features(a, b, cosine), duplicate_threshold, contradiction_similarity)
