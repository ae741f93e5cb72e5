"""Local keyword extraction for entries added without keywords (offline).

Picks up to `limit` distinctive words in order of appearance: technical tokens first
(with digits, dots, capitals), then other words of four letters or more; stop words are
skipped. Chinese/Japanese text gets none here (no segmenter is bundled): the keyword
index already finds it through character bigrams.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memcli.core.validate import clean_keywords
from memcli.index.tokenize import STOP_WORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+#-]*[A-Za-z0-9+#]")
_GENERIC_WORDS = (
    "prefers prefer likes like uses use using used always never usually often first then "
    "instead when with from into about after before should would could every some"
)
_GENERIC = frozenset(_GENERIC_WORDS.split())


def extract_keywords(text: str, limit: int = 5) -> list[str]:
    technical: list[str] = []
    plain: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()
        lower = word.lower()
        if lower in STOP_WORDS or lower in _GENERIC or lower.isdigit():
            continue
        is_technical = (
            any(c.isdigit() for c in word)
            or any(c in ".+#" for c in word)
            or any(c.isupper() for c in word[1:])
            or (word[0].isupper() and match.start() > 0)
        )
        bucket = technical if is_technical else plain
        if lower not in technical and lower not in plain and (is_technical or len(word) >= 4):
            bucket.append(lower)
    return (technical + plain)[:limit]


def recomputed_keywords(stored: Sequence[str], old_text: str, new_text: str) -> list[str] | None:
    """The keywords of an entry whose text changes from `old_text` to `new_text`, or None
    when they stay as they are.

    Automatic keywords are not marked in the files: `add` (and `log`, `extract`) store
    extract_keywords(text) as kw= when no keywords are given, and a later duplicate `add`
    appends the keywords it brings. So the stored keywords are automatic when they are
    exactly what extract_keywords gives for the old text, or begin with it (automatic
    ones, then keywords added since): those leading automatic ones are replaced by the
    new text's, the rest stay. Any other keywords (and any at all when the old text gives
    none) were set by a person (`--keywords`, by hand) and stay as they are."""
    auto_old = extract_keywords(old_text)
    have = list(stored)
    if (have and not auto_old) or [k.casefold() for k in have[: len(auto_old)]] != auto_old:
        return None
    rest = [k for k in have[len(auto_old) :] if k.casefold() not in auto_old]
    return clean_keywords(extract_keywords(new_text) + rest)
