"""The index's snapshot of the parsed entries (`.memcli/index/entries-<id>.marshal`): a
one-off process whose files are as indexed reads it instead of parsing the Markdown.

Its text is served by search and inject, so it is trusted only when this user wrote it
on this machine: the index manifest keeps an HMAC-SHA256 of the snapshot's bytes and of
the Markdown files' sha256 it was taken from, keyed by the user's secret
(memcli.store.trust.local_key). A snapshot whose MAC does not verify (another machine's,
another user's, edited, or taken from other files) is never unmarshalled: the caller
parses the Markdown and writes a snapshot of its own. marshal is read only from bytes
the MAC vouches for (it is quick, and not safe against crafted input).

The snapshot is held in columns (`Snapshot`): the ids, types, files, lines and explicit-
id flags of every entry, then every entry's text and metadata as one marshal tuple whose
items each also decode alone (format 2: no references between them), with where each
item ends. A one-off search reads what its ranking needs of every entry from the columns and makes
an Entry (with its metadata dict) only for the few hundred candidates it ranks: making
10k Entry objects and their dicts was ≈ 40 ms of CPU of a cold search at 10k entries.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import marshal
import os
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate
from pathlib import Path
from typing import overload

from memcli.core.models import Entry

PREFIX = "entries-"
#: 2: columns (1, one row per entry: an earlier memcli's snapshot no longer verifies, so
#: the first search re-signs it as columns)
_CONTEXT = b"memcli entries snapshot 2\x00"


def write(
    directory: Path, entries: Sequence[Entry], files: dict[str, list], key: bytes | None
) -> tuple[str, str] | None:
    """Write the snapshot of `entries` read from `files` (name -> files_signature row);
    its (file name, MAC), or None without a key (no snapshot is written then)."""
    if key is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{PREFIX}{os.urandom(6).hex()}.marshal"
    data = marshal.dumps(_columns(entries))
    tmp = directory / (name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(directory / name)
    return name, mac(key, files, data)


def read(
    directory: Path, name: str, expected: object, files: object, key: bytes | None
) -> list[Entry] | None:
    """The entries of snapshot `name` when its bytes and `files` verify against the
    `expected` MAC; None when they do not, or it cannot be read."""
    if key is None or not isinstance(expected, str) or not isinstance(files, dict):
        return None
    if not is_name(name):
        return None  # a manifest naming a file outside the index folder
    try:
        data = (directory / name).read_bytes()
    except OSError:
        return None
    if not hmac.compare_digest(mac(key, files, data), expected):
        return None
    try:
        return Snapshot(marshal.loads(data))
    except (ValueError, EOFError, TypeError, IndexError):
        return None


#: the columns of a snapshot, in order; then `body`, every entry's (text, metadata) as one
#: marshal tuple of format 2 (no references between its items, so each item's bytes also
#: decode alone), and `ends`, where each item ends in it (int64 each)
COLUMNS = ("id", "type", "file", "line", "id_explicit")
#: the marshal format of `body`, and the size of its tuple's header (type byte, count)
_BODY_FORMAT, _HEAD = 2, 5


def _columns(entries: Sequence[Entry]) -> tuple:
    """The snapshot's columns of `entries` (COLUMNS, body, ends)."""
    if isinstance(entries, Snapshot):  # as read: its bytes are still good
        return entries.raw()
    dumps = marshal.dumps
    items = [dumps((e.text, e.meta), _BODY_FORMAT) for e in entries]
    head = _head(len(items))
    ends = array("q", accumulate(map(len, items), initial=_HEAD))[1:]
    return (
        tuple(e.id for e in entries),
        tuple(e.type for e in entries),
        tuple(e.file for e in entries),
        tuple(e.line for e in entries),
        tuple(e.id_explicit for e in entries),
        head + b"".join(items),
        ends.tobytes(),
    )


def _head(n: int) -> bytes:
    """The header of the body's tuple of `n` items in marshal format 2: its type, its
    length."""
    return marshal.dumps((None,) * n, _BODY_FORMAT)[:_HEAD]


class Snapshot(Sequence[Entry]):
    """The entries of a snapshot, in order, each made an Entry when first asked for (by
    position, or all of them on iteration); `column(name)` gives one field of every
    entry without making any. Equal to a list of the same entries."""

    __slots__ = ("_raw", "_made", "_ends")

    def __init__(self, raw: object) -> None:
        """From a snapshot's columns, body and ends (`_columns`); ValueError when they are
        not those."""
        if not isinstance(raw, tuple) or len(raw) != len(COLUMNS) + 2:
            raise ValueError("an entry snapshot of another shape")
        columns, (body, ends) = raw[: len(COLUMNS)], raw[len(COLUMNS) :]
        if any(type(c) is not tuple for c in columns) or len(set(map(len, columns))) > 1:
            raise ValueError("an entry snapshot of another shape")
        if type(body) is not bytes or type(ends) is not bytes or len(ends) % 8:
            raise ValueError("an entry snapshot of another shape")
        n = len(columns[0])
        self._ends = memoryview(ends).cast("q")
        if len(self._ends) != n or (self._ends[-1] if n else _HEAD) != len(body):
            raise ValueError("an entry snapshot of another shape")
        if body[:_HEAD] != _head(n):  # a body of another form
            raise ValueError("an entry snapshot of another shape")
        self._raw: tuple = raw
        self._made: list[Entry | None] = [None] * n

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        index = range(len(self._made))[index]  # a negative one counted from the end
        entry = self._made[index]
        if entry is None:
            entry = self._made[index] = self._make(index)
        return entry

    def __iter__(self) -> Iterator[Entry]:
        """Every entry: those not made yet made at once, the body decoded in one call
        (10k entries in ≈ 25 ms of CPU, against ≈ 50 one by one)."""
        made = self._made
        if None in made:
            ids, types, files, lines, explicit, body, _ = self._raw
            items = marshal.loads(body)
            if type(items) is not tuple or len(items) != len(made):
                raise ValueError("an entry snapshot of another shape")
            texts, metas = [t for t, _ in items], [m for _, m in items]
            if set(map(type, texts)) - {str} or set(map(type, metas)) - {dict}:
                raise ValueError("an entry snapshot of another shape")
            rows = zip(ids, texts, types, files, lines, metas, explicit, strict=True)
            from_row = Entry.from_row
            made[:] = [e if e is not None else from_row(r) for e, r in zip(made, rows, strict=True)]
        return iter(made)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, Snapshot)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def column(self, name: str) -> tuple:
        """Field `name` of every entry, in order: one of COLUMNS (ValueError for the
        text and the metadata, read per entry)."""
        if name not in COLUMNS:
            raise ValueError(f"{name}: read per entry, not as a column")
        return self._raw[COLUMNS.index(name)]

    def raw(self) -> tuple:
        """The columns, body and ends as read (written back as they are)."""
        return self._raw

    def holding(self, word: str) -> list[int]:
        """Positions, in order, of the entries whose text or metadata may hold the string
        `word` whole (a metadata key, say): a superset, each to be checked on its Entry.
        Found in the body's bytes (any str equal to `word` is marshalled as the same
        bytes) without decoding it: a cold inject needs the few pinned entries of 10k."""
        needle = marshal.dumps(word, _BODY_FORMAT)
        body, ends = self._raw[-2], self._ends
        found: list[int] = []
        at = body.find(needle, _HEAD)
        while at >= 0:
            i = bisect_right(ends, at)  # the item the match starts in
            if i >= len(ends):
                break
            found.append(i)
            at = body.find(needle, ends[i])  # the next item's bytes
        return found

    def _make(self, i: int) -> Entry:
        ids, types, files, lines, explicit, body, _ = self._raw
        ends = self._ends
        start = ends[i - 1] if i > 0 else _HEAD
        if not _HEAD <= start <= ends[i]:
            raise ValueError("an entry snapshot of another shape")
        text, meta = marshal.loads(body[start : ends[i]])
        if type(text) is not str or type(meta) is not dict:
            raise ValueError("an entry snapshot of another shape")
        return Entry.from_row((ids[i], text, types[i], files[i], lines[i], meta, explicit[i]))


def is_name(name: object) -> bool:
    """`name` is a snapshot's file name in the index folder (never a path elsewhere)."""
    return (
        isinstance(name, str)
        and name.startswith(PREFIX)
        and name.endswith(".marshal")
        and "/" not in name
        and "\\" not in name
    )


def mac(key: bytes, files: dict[str, list], data: bytes) -> str:
    """HMAC-SHA256 of the files' content hashes and the snapshot's bytes."""
    digests = {
        n: row[4] if isinstance(row, list) and len(row) > 4 else None for n, row in files.items()
    }
    signed = hmac.new(key, _CONTEXT, hashlib.sha256)
    signed.update(json.dumps(digests, sort_keys=True).encode("utf-8") + b"\x00")
    signed.update(data)
    return signed.hexdigest()
