"""What a theme of entries is about, and how to say it offline (reflect,
docs/maintenance.md): the content words of a text (Chinese segmented with jieba's
dictionary, never character n-grams), how close two entries are (the embedding cosine of
two English texts; the overlap of their content words when either is Chinese — the
bundled model is English-only, its cosines of Chinese texts are noise), a theme's label
and the sentence that states it in its evidence's language. Pure apart from the
embedding callable it is given.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from memcli.index.tokenize import STOP_WORDS, tokenize

Embed = Callable[[Sequence[str]], np.ndarray]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_LATIN = re.compile(r"[^\W\d_][\w+#.-]*[\w+#]|[^\W\d_]")
#: words that say how, not what: never a theme's label
_GENERIC = frozenset(
    """prefers prefer likes like loves love uses use using used always never usually often
    first then instead every some runs writes write wants want keeps keep makes make does
    gets goes should would could must need needs has have had takes take owns own plans
    user user's before after each twice once week weeks day days morning evening""".split()  # noqa: SIM905
)
#: Chinese words that carry no subject (pronouns, particles, frequency, generic verbs)
_ZH_STOP = frozenset(
    """我 你 他 她 它 我们 用户 的 了 在 是 有 和 与 或 也 都 很 就 还 要 会 把 被 给 跟 对 从 向
    于 时 一个 一 个 这 那 用 上 里 中 下 每 每天 每年 每周 喜欢 不 没 先 再 又 一下 一遍 一双
    一只 一辆 时候 以后 之前 打算 还是 新 买 叫 做 去 看 说 想 让 得 地 着 过 吗 呢 吧 啊""".split()  # noqa: SIM905
)
#: a speaker's name before a conversation turn's text ("user: …")
_SPEAKER = re.compile(r"^[\w .'-]{1,40}:\s+")


@lru_cache(maxsize=1)
def _jieba():  # noqa: ANN202 - jieba has no type hints
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def _noun(word: str) -> bool:
    """A one-character word jieba's dictionary tags as a noun (猫, 茶; not 跑, 买)."""
    import jieba.posseg

    _jieba()
    return str(jieba.posseg.dt.word_tag_tab.get(word, "")).startswith("n")


def is_chinese(text: str) -> bool:
    """Mostly Chinese: at least as many Chinese characters as Latin words, and two."""
    cjk = len(_CJK.findall(text))
    return cjk >= 2 and cjk >= len(_LATIN.findall(text))


@lru_cache(maxsize=20_000)
def content_words(text: str) -> tuple[tuple[str, str], ...]:
    """(key, word as written) of the content words of `text`, in order, each once: Latin
    words keyed by their stem (stop words, generic verbs and 1–2 letter words left out),
    Chinese runs segmented into dictionary words (particles and pronouns left out)."""
    out: dict[str, str] = {}
    for match in re.finditer(f"{_CJK_RUN.pattern}|{_LATIN.pattern}", text):
        piece = match.group()
        if _CJK.match(piece):
            for word in _jieba().lcut(piece):
                if word not in _ZH_STOP and (len(word) > 1 or _noun(word)):
                    out.setdefault(word, word)
            continue
        folded = piece.casefold()
        if len(folded) < 3 or folded in STOP_WORDS or folded in _GENERIC:
            continue
        stems = tokenize(piece)
        if stems:
            plain = match.start() == 0 and piece[1:].islower()
            out.setdefault(stems[0], folded if plain else piece)
    return tuple(out.items())


def _keys(text: str) -> frozenset[str]:
    return frozenset(key for key, _ in content_words(strip_speaker(text)))


def similarities(texts: Sequence[str], vectors: np.ndarray) -> np.ndarray:
    """How close each pair of texts is: the cosine of two English texts; the overlap of
    their content words (shared / the smaller set) when either is Chinese."""
    sims = np.asarray(vectors @ vectors.T, dtype=np.float64)
    chinese = [is_chinese(t) for t in texts]
    keys = [_keys(t) for t in texts]
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if chinese[i] or chinese[j]:
                small = min(len(keys[i]), len(keys[j]))
                lexical = len(keys[i] & keys[j]) / small if small else 0.0
                sims[i, j] = sims[j, i] = lexical
    np.fill_diagonal(sims, 1.0)
    return sims


def shared_by(members: Sequence[str]) -> int:
    """How many of the members a theme's label must be a word of: half, at least two (a
    word one note uses names that note, not what the notes share)."""
    return max(2, -(-len(members) // 2))


def label(members: Sequence[str], vectors: np.ndarray, embed: Embed | None) -> str | None:
    """What the theme is about: a content word at least half of the members are about
    (`shared_by`). In Chinese the words most of them use (up to two); in English with an
    embedder, the word closest to the members' centroid among those half of them use,
    or, when none is, among those half of them come close to in meaning (MEMBER_AT);
    without one, the word most of them use. None when no
    word is shared enough: then nothing is written (issue 37: a Docker theme was named
    after the one note on pytest)."""
    words: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for text in members:
        for key, word in content_words(strip_speaker(text)):
            words.setdefault(key, word)
            counts[key] += 1
    need = shared_by(members)
    if sum(is_chinese(t) for t in members) * 2 > len(members) or embed is None:
        shared = [k for k, n in counts.most_common() if n >= need]
        if not shared:
            return None
        top = [k for k in shared if counts[k] == counts[shared[0]]][:2]
        return "、".join(words[k] for k in top) if is_chinese(words[top[0]]) else words[top[0]]
    keys = list(words)
    found = embed([words[k] for k in keys])
    # a member is about a word when it uses it or its meaning is close to the word's
    # ("Runs 40 km a week" is about marathon; "Run pytest in the container" is the only
    # Docker note about pytest)
    close = (found @ vectors.T) >= MEMBER_AT
    uses = np.array([[k in dict(content_words(strip_speaker(t))) for t in members] for k in keys])
    used = uses.sum(axis=1) >= need  # words half of them use come first
    fits = used if used.any() else (close | uses).sum(axis=1) >= need
    scores = np.where(fits, found @ vectors.mean(axis=0), -1.0)
    best = int(np.argmax(scores))
    return words[keys[best]] if scores[best] >= LABEL_AT else None


#: an English label is kept when the word's embedding is this close to the theme's
#: centroid (the mean of its members' vectors); chosen on bench/data/reflect_themes.jsonl
LABEL_AT = 0.3
#: a member is about a word it does not use when their embeddings are this close; chosen
#: on the tune half of bench/data/reflect_themes.jsonl (issue 37)
MEMBER_AT = 0.35


def strip_speaker(text: str) -> str:
    """A conversation turn's text without its speaker ("user: …")."""
    return _SPEAKER.sub("", text, count=1)


def statement(members: Sequence[str], about: str) -> str:
    """The theme as one sentence in its evidence's language, stating what the notes
    share, not listing them: "Marathon is a recurring subject: 4 notes are about it." /
    "「日语」是反复出现的主题：4 条笔记都与它有关。" (its evidence is cited in `src=`)."""
    if sum(is_chinese(t) for t in members) * 2 > len(members):
        return f"「{about}」是反复出现的主题：{len(members)} 条笔记都与它有关。"
    head = about[:1].upper() + about[1:] if about[1:2].islower() or len(about) == 1 else about
    return f"{head} is a recurring subject: {len(members)} notes are about it."
