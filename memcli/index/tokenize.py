"""Tokens for the keyword index: lower-cased words, English stop words dropped, Snowball
stems; CJK runs become single characters plus character bigrams, so a 2-character
Chinese word matches wherever it occurs."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: CJK ideographs, kana and hangul
CJK_CLASS = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
#: the first character CJK_CLASS holds: a text below it has none
CJK_FIRST = "\u3040"
_WORDS = r"[^\W_]+(?:['’][^\W_]+)*"
#: words of a text without CJK characters
_WORD_RE = re.compile(_WORDS, re.UNICODE)


@lru_cache(maxsize=1)
def _cjk_words() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(CJK runs or words, a CJK run), compiled when a text first has a character from
    CJK_FIRST up: the CJK class's charmap costs ≈ 3-6 ms to compile, each pattern, in
    every process."""
    return re.compile(CJK_CLASS + "+|" + _WORDS, re.UNICODE), re.compile(f"^{CJK_CLASS}+$")

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i
    i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves s t just also
    will""".split()  # noqa: SIM905
)


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - snowballstemmer has no type hints
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


def tokenize(text: str) -> list[str]:
    """Index/query tokens of `text` (order kept, duplicates kept for term frequency)."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    tokens: list[str] = []
    words, cjk = (_WORD_RE, None) if not text or max(text) < CJK_FIRST else _cjk_words()
    for match in words.finditer(text):
        word = match.group()
        if cjk is not None and cjk.match(word):
            tokens.extend(word)  # single characters
            tokens.extend(word[i : i + 2] for i in range(len(word) - 1))
            continue
        if word in STOP_WORDS:
            continue
        word = word.replace("'", "")
        if word.isascii() and word.isalpha():
            word = _stem(word)
        tokens.append(word)
    return tokens
