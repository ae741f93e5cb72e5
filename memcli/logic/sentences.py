"""Sentences of a chat turn (for extract), English and Chinese: pysbd's rules (a well-kept,
rule-based splitter: abbreviations such as e.g., i.e., Dr., U.S.; decimals; 。！？), with
no boundary inside a URL, e-mail address, path, host name or version
("staging.techcorp.io", "3.12.1"), and a line break always ending a sentence.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: spans a sentence boundary never falls inside: URLs, e-mail addresses, paths, and dotted
#: words (host names, versions, file names, decimals: staging.techcorp.io, 3.12.1, e.g)
_WHOLE = re.compile(
    r"(?:https?|ftp|ssh|file)://[^\s<>\"']*[^\s<>\"'.,;:!?)\]]"
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![\w/])(?:~|\.{1,2})?(?:/[\w.~+-]+)+/?"
    r"|[\w-]+(?:\.[\w-]+)+"
)


@lru_cache(maxsize=1)
def _segmenter() -> Any:  # noqa: ANN401 - pysbd has no type hints
    import pysbd  # here, not at the top: only extract splits sentences

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Sentences of `text` (English and Chinese): pysbd's rules (abbreviations such as
    e.g., i.e., Dr., U.S.; decimals; 。！？), no boundary inside a URL, e-mail address,
    path, host name or version, and a line break always ends a sentence."""
    sentences: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        ends, pos = [], 0
        for piece in _segmenter().segment(line):
            at = line.find(piece, pos)
            if at < 0:
                break
            pos = at + len(piece)
            ends.append(pos)
        whole = [(m.start(), m.end()) for m in _WHOLE.finditer(line)]
        start = 0
        for end in ends[:-1]:
            cut = len(line[:end].rstrip())
            if any(s < cut < e for s, e in whole):
                continue
            sentences.append(line[start:end])
            start = end
        sentences.append(line[start:])
    return [s.strip() for s in sentences if s.strip()]
