"""Which texts the configured embedding model reads (docs/search.md, Languages).

The bundled all-MiniLM-L6-v2 was trained on English: to it any two Chinese sentences look
alike, so its cosine says nothing about them. A model is *multilingual* when its name or
its config says so (`multilingual`, XLM-RoBERTa, LaBSE, a vocabulary of 100k+ pieces);
such a model reads every script. Any other model reads Latin script only.

One small API, shared by search (whether the semantic side votes on a query or an entry)
and the health notices (a fifth of a workspace in a script the model does not read):

- `multilingual(model)`: the `index.model` setting ("" for the bundled model) reads all.
- `reads(model, text)`: the model reads `text` (most of its letters are in a script the
  model reads; a text without letters is read).
- `semantic_vote(model, text)`: how much its cosine counts for `text` (1 where it reads
  it, else in proportion to its Latin share: a mixed note is partly read).
- `unread_share(model, texts)`: the share of the texts with letters it does not read.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from memcli.index.tokenize import CJK_CLASS, CJK_FIRST

#: the share of a workspace's entries in unread scripts from which memcli suggests a
#: multilingual model ("a fifth")
NOTICE_SHARE = 0.2
#: the multilingual model the notice names, and the command that switches to it
SUGGESTED_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
SWITCH_COMMAND = f"memcli config set index.model {SUGGESTED_MODEL}"

#: names (any part of a model's name or path) of models trained on many languages
_MULTILINGUAL_NAME = re.compile(
    r"multilingual|xlm|labse|bge-m3|distiluse|chinese|text2vec|(?:^|[-_/])zh(?:$|[-_/])",
    re.IGNORECASE,
)
#: config.json model types trained on many languages
_MULTILINGUAL_TYPES = frozenset({"xlm-roberta", "xlm", "mt5", "bert-multilingual"})
#: a vocabulary this large covers many scripts (multilingual BERT: 119,547; LaBSE 501k)
_MULTILINGUAL_VOCAB = 100_000

#: letters of the Latin script: ASCII, Latin-1, Latin Extended A/B, Extended Additional
_LATIN = re.compile(r"[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]")
#: a CJK ideograph, kana or hangul carries about a word, so it counts as CJK_WEIGHT
#: letters
CJK_WEIGHT = 3
_LETTER = re.compile(r"[^\W\d_]")


@lru_cache(maxsize=64)
def multilingual(model: str) -> bool:
    """Whether the model the `index.model` setting names ("" = the bundled
    all-MiniLM-L6-v2) reads every script: its name says so, or (a local folder) its
    config.json does (model type, vocabulary size)."""
    name = model.strip()
    if not name:
        return False
    if _MULTILINGUAL_NAME.search(name):
        return True
    config = Path(name).expanduser() / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    if str(data.get("model_type", "")).lower() in _MULTILINGUAL_TYPES:
        return True
    vocab = data.get("vocab_size")
    return isinstance(vocab, int) and vocab >= _MULTILINGUAL_VOCAB


@lru_cache(maxsize=100_000)
def latin_share(text: str) -> float | None:
    """The share of `text`'s letters in the Latin script, a CJK character counting as
    CJK_WEIGHT letters; None when it has no letters."""
    if text.isascii():  # every ASCII letter is Latin: no pattern to run
        return 1.0 if any(c.isalpha() for c in text) else None
    letters = len(_LETTER.findall(text))
    if not letters:
        return None
    cjk = 0 if max(text) < CJK_FIRST else _cjk_count(text)
    latin = len(_LATIN.findall(text))
    weighted = letters - cjk + CJK_WEIGHT * cjk
    return latin / weighted


#: CJK_CLASS's ranges as sorted bounds (first, one past the last, ...): a character is in
#: the class when bisect puts it after an odd number of them
_CJK_BOUNDS = tuple(
    chr(int(code, 16) + i)
    for pair in sorted(re.findall(r"\\u([0-9a-f]{4})-\\u([0-9a-f]{4})", CJK_CLASS))
    for i, code in enumerate(pair)
)


def _cjk_count(text: str) -> int:
    """How many of `text`'s characters CJK_CLASS holds, without compiling it (its charmap
    costs ≈ 5 ms to compile, more than a one-off search spends counting its candidates
    character by character)."""
    bounds = _CJK_BOUNDS
    return sum(bisect_right(bounds, c) & 1 for c in text if c >= CJK_FIRST)


def reads(model: str, text: str) -> bool:
    """Whether the model (the `index.model` setting) reads `text`: a multilingual model
    reads everything; any other reads a text whose letters are mostly Latin (or that has
    none)."""
    if multilingual(model):
        return True
    share = latin_share(text)
    return share is None or share >= 0.5


def semantic_vote(model: str, text: str, glossed: float = 0.0) -> float:
    """How much the model's cosine counts for `text`, 0 to 1: 1 where it reads it, else
    the text's Latin share over one half (a Chinese note naming `kubectl` and `Slack`
    is partly read; one without Latin letters not at all), or, for a text with Chinese
    in it, `glossed` where that is more (the vote of a text embedded with its Chinese
    glossed in English: memcli.index.gloss)."""
    if multilingual(model):
        return 1.0
    share = latin_share(text)
    if share is None:
        return 1.0
    read = min(1.0, share / 0.5)
    return max(read, glossed) if glossed > read and has_han(text) else read


def has_han(text: str) -> bool:
    """Whether `text` holds a Chinese (Han) character, the script memcli.index.gloss
    glosses (kana and hangul are not)."""
    if not text or max(text) < CJK_FIRST:
        return False
    return any(
        "\u3400" <= c <= "\u4dbf" or "\u4e00" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff"
        for c in text
    )  # the ranges of memcli.index.gloss.HAN_CLASS, without compiling it


def unread_share(model: str, texts: Iterable[str]) -> float:
    """The share of `texts` (those with letters) the model does not read (0 when none
    has letters)."""
    if multilingual(model):
        return 0.0
    shares = [s for s in map(latin_share, texts) if s is not None]
    if not shares:
        return 0.0
    return sum(1 for s in shares if s < 0.5) / len(shares)


def notice(model: str, texts: Iterable[str]) -> str | None:
    """The one line `init`, `index` and `doctor` say when NOTICE_SHARE or more of the
    texts are in a script the model does not read (None otherwise)."""
    share = unread_share(model, texts)
    if share < NOTICE_SHARE:
        return None
    return (
        f"{share:.0%} of the entries are in a script the embedding model does not read "
        f"(it reads Latin script); for those, search reads a word-by-word English gloss "
        f"beside their keywords. A multilingual "
        f"model reads them: `{SWITCH_COMMAND}` (prepares it and rebuilds the index)"
    )
