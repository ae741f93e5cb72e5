"""Tokens for the keyword index: lower-cased words, English stop words dropped, Snowball
stems; CJK runs become single characters plus character bigrams, so a 2-character
Chinese word matches wherever it occurs."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
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


def _words(text: str) -> Iterator[tuple[str, bool]]:
    """(word, whether it is a CJK run) of `text`: lower-cased, English stop words
    dropped, English words stemmed."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    words, cjk = (_WORD_RE, None) if not text or max(text) < CJK_FIRST else _cjk_words()
    for match in words.finditer(text):
        word = match.group()
        if cjk is not None and cjk.match(word):
            yield word, True
            continue
        if word in STOP_WORDS:
            continue
        word = word.replace("'", "")
        if word.isascii() and word.isalpha():
            word = _stem(word)
        yield word, False


def tokenize(text: str) -> list[str]:
    """Index/query tokens of `text` (order kept, duplicates kept for term frequency)."""
    tokens: list[str] = []
    for word, is_cjk in _words(text):
        if is_cjk:
            tokens.extend(word)  # single characters
            tokens.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            tokens.append(word)
    return tokens


#: two-character Chinese function words (the index keeps every character bigram): they
#: say how a thing is asked ("how", "what", "we", …), not what it is about, so a query's
#: keyword side does not count them
CJK_STOP_WORDS = frozenset(
    """一个 一下 一次 一些 一起 怎么 怎样 什么 如何 为什么 为何 可以 能否 是否 我们 你们
    他们 这个 那个 这些 那些 这里 那里 没有 现在 已经 时候 需要 应该 还是 就是 不是 自己
    因为 所以 但是 如果 然后 之前 之后 以后 多久 多少 哪个 哪些 哪里 有没 有什 么做 么用
    么写 么配 么办 帮我 请问 一样 的时 的是 了吗 是什 么样""".split()  # noqa: SIM905
)
#: a lone CJK character's weight in a query: half a word's (a two-character word that
#: matches counts its bigram and both characters, 2; bench/README.md, "Chinese question
#: words and lone characters")
CJK_CHAR_WEIGHT = 0.5


def query_terms(text: str) -> dict[str, float]:
    """The query's keyword terms (tokenize's) with their weight in BM25 and in the
    query's keyword mass: how often each occurs; a lone CJK character at CJK_CHAR_WEIGHT
    (a Chinese word is matched by its bigram, a character alone is weak evidence); a CJK
    question word (CJK_STOP_WORDS) at nothing, with its characters and the bigrams
    straddling it ("迁移怎么做": 移怎 is no word)."""
    weights: Counter[str] = Counter()
    for word, is_cjk in _words(text):
        if not is_cjk:
            weights[word] += 1.0
            continue
        pairs = [word[i : i + 2] for i in range(len(word) - 1)]
        asked = {j for i, pair in enumerate(pairs) if pair in CJK_STOP_WORDS for j in (i, i + 1)}
        for i, char in enumerate(word):
            if i not in asked:
                weights[char] += CJK_CHAR_WEIGHT
        for i, pair in enumerate(pairs):
            if i not in asked and i + 1 not in asked:
                weights[pair] += 1.0
    return dict(weights)
