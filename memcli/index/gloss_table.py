"""The gloss table as one file (memcli.index.gloss): the words, sorted, and their glosses,
with the offsets of each. A lookup bisects the bytes as read, so a query's few dozen
lookups build no table (reading a 150,000-word dict costs ≈ 0.1 s); after BULK lookups
(a sync of many notes) the whole table is read into a dict once.

Layout: the word count N (4 bytes), N + 1 word offsets and N + 1 gloss offsets (4 bytes
each, this machine's byte order: the file is a per-user cache), the words' bytes, then
the glosses' bytes; each word and gloss UTF-8, ended by a newline. Sorted by UTF-8
bytes, which is code point order."""

from __future__ import annotations

import mmap
from array import array
from collections.abc import Mapping

#: lookups after which the whole table is read into a dict
BULK = 2000


def encode(table: Mapping[str, str]) -> bytes:
    """The file for `table` (no word or gloss holds a newline)."""
    words = sorted(table, key=str.encode)
    word_bytes = [f"{w}\n".encode() for w in words]
    gloss_bytes = [f"{table[w]}\n".encode() for w in words]
    return b"".join(
        [
            len(words).to_bytes(4, "little"),
            _offsets(word_bytes).tobytes(),
            _offsets(gloss_bytes).tobytes(),
            *word_bytes,
            *gloss_bytes,
        ]
    )


def _offsets(parts: list[bytes]) -> array:
    out = array("I", [0])
    for part in parts:
        out.append(out[-1] + len(part))
    return out


class Table:
    """Lookups in an encoded table, as bytes or mapped (ValueError: the bytes are not
    one)."""

    def __init__(self, blob: bytes | mmap.mmap) -> None:
        if len(blob) < 4:
            raise ValueError("too short for a gloss table")
        count = int.from_bytes(blob[:4], "little")
        size = 4 * (count + 1)
        self._words = array("I")
        self._glosses = array("I")
        self._words.frombytes(blob[4 : 4 + size])
        self._glosses.frombytes(blob[4 + size : 4 + 2 * size])
        start = 4 + 2 * size
        if len(self._words) != count + 1 or len(self._glosses) != count + 1:
            raise ValueError("a gloss table's offsets are cut short")
        end = start + self._words[-1]
        if end + self._glosses[-1] != len(blob):
            raise ValueError("a gloss table's size does not match its offsets")
        self._word_bytes = memoryview(blob)[start:end]
        self._gloss_bytes = memoryview(blob)[end:]
        self._count = count
        self._lookups = 0
        self._whole: dict[str, str] | None = None

    def __len__(self) -> int:
        return self._count

    def get(self, word: str) -> str | None:
        """The gloss of `word`, None when the table lacks it."""
        if self._whole is not None:
            return self._whole.get(word)
        self._lookups += 1
        if self._lookups > BULK:
            self._whole = self._read_whole()
            return self._whole.get(word)
        key = word.encode()
        words, offsets = self._word_bytes, self._words
        low, high = 0, self._count
        while low < high:
            middle = (low + high) // 2
            found = bytes(words[offsets[middle] : offsets[middle + 1] - 1])
            if found < key:
                low = middle + 1
            elif found > key:
                high = middle
            else:
                gloss = self._gloss_bytes[self._glosses[middle] : self._glosses[middle + 1] - 1]
                return bytes(gloss).decode()
        return None

    def _read_whole(self) -> dict[str, str]:
        words = bytes(self._word_bytes).decode().split("\n")[:-1]
        glosses = bytes(self._gloss_bytes).decode().split("\n")[:-1]
        return dict(zip(words, glosses, strict=True))
