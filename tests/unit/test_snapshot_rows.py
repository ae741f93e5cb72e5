"""The index's entry snapshot is held in columns (memcli.index.snapshot.Snapshot) and
makes an Entry only of the positions asked for: the very entries that were written, each
field of every entry readable as a column without making one, and a signed snapshot of
another shape (another memcli version's) is not used: the caller parses the Markdown."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from memcli.core.models import Entry, column
from memcli.index import snapshot

KEY = b"k" * 32
FILES = {"memory.md": [10, 1, 2, 3, "a" * 64]}


def _entries() -> list[Entry]:
    return [
        Entry("m1", "Prefers tea", "fact", "memory.md", 3),
        Entry("m2", "Deploys on Fridays", "lesson", "learnings.md", 9, {"imp": "0.9"}, True),
        Entry("m3", "喜欢用中文", "preference", "memory.md", 12, {"kw": "a,b", "src": "x"}),
    ]


def _read(directory: Path, data: bytes) -> list[Entry] | None:
    (directory / "entries-0a1b2c.marshal").write_bytes(data)
    signature = snapshot.mac(KEY, FILES, data)
    return snapshot.read(directory, "entries-0a1b2c.marshal", signature, FILES, KEY)


def test_the_columns_read_back_as_the_entries_written(tmp_path: Path) -> None:
    written = _entries()
    name, signature = snapshot.write(tmp_path, written, FILES, KEY)
    read = snapshot.read(tmp_path, name, signature, FILES, KEY)
    assert isinstance(read, snapshot.Snapshot) and len(read) == 3
    assert column(read, "id") == ("m1", "m2", "m3")  # no Entry made for these
    assert column(read, "file") == tuple(e.file for e in written)
    assert column(read, "line") == (3, 9, 12)
    with pytest.raises(ValueError):
        column(read, "text")  # read per entry
    assert read._made == [None, None, None]
    assert vars(read[2]) == vars(written[2]) and read[2] is read[2]
    assert read._made[:2] == [None, None]  # only the one asked for was made
    kept = read[2]
    assert read == written and list(read) == written and list(read)[2] is kept
    fresh = snapshot.read(tmp_path, name, signature, FILES, KEY)  # all made in one pass
    assert [vars(e) for e in fresh] == [vars(e) for e in written]
    assert [vars(e) for e in read] == [vars(e) for e in written]
    assert [e.importance for e in read] == [e.importance for e in written]  # a normal Entry
    assert read[1:] == written[1:] and read[-1] is read[2] and read[-3] == written[0]
    with pytest.raises(IndexError):
        read[-4]
    again, _ = snapshot.write(tmp_path, read, FILES, KEY)  # written back from its columns
    loads = marshal.loads
    assert loads((tmp_path / again).read_bytes()) == loads((tmp_path / name).read_bytes())


def test_a_signed_snapshot_of_another_shape_is_not_used(tmp_path: Path) -> None:
    """An earlier memcli's rows, columns of unequal length, a column missing, metadata
    that is not a dict: None (and the rows of version 1 do not even verify: the MAC's
    context names the version)."""
    rows = [(e.id, e.text, e.type, e.file, e.line, e.meta, e.id_explicit) for e in _entries()]
    assert _read(tmp_path, marshal.dumps(rows)) is None
    good = snapshot._columns(_entries())
    short = (*good[:2], good[2][:2], *good[3:])
    assert _read(tmp_path, marshal.dumps(short)) is None
    assert _read(tmp_path, marshal.dumps(good[:6])) is None
    assert _read(tmp_path, marshal.dumps(tuple(list(c) for c in good))) is None
    odd = [Entry(e.id, e.text, e.type, e.file, e.line) for e in _entries()]
    raw = list(snapshot._columns(odd))  # as written, but each metadata a list
    listed = [marshal.dumps((e.text, ["not", "a", "dict"]), 2) for e in odd]
    raw[5] = raw[5][:5] + b"".join(listed)
    raw[6] = b"".join(sum(map(len, listed[: i + 1]), 5).to_bytes(8, "little") for i in range(3))
    read = _read(tmp_path, marshal.dumps(tuple(raw)))
    assert read is not None  # each entry's text and metadata are read when it is made
    with pytest.raises(ValueError, match="another shape"):
        read[1]
    with pytest.raises(ValueError, match="another shape"):
        list(read)  # all at once: the same check
    cut = (*good[:6], good[6][:-8])  # where the last entry ends: missing
    assert _read(tmp_path, marshal.dumps(cut)) is None


def test_the_inject_orderings_make_only_the_entries_they_may_hold(tmp_path: Path) -> None:
    """A view of the snapshot orders the pinned entries and the entries of some types
    (of_types) as a view of the same entries as a list does, and makes only the entries
    of those types or whose bytes hold a `pin` string: not a pinned one archived, one
    whose pin is off, one that only says "pin" in its text or an agent's pin."""
    from memcli.logic.inject_choice import PROFILE_TYPES
    from memcli.services.search import SearchView

    agent = {"by": "agent", "src": "a"}
    written = [
        Entry("a1", "Tea over coffee", "preference", "memory.md", 1, {"conf": "0.6"}),
        Entry("a2", "Deploys on Fridays", "lesson", "learnings.md", 2, {"pin": "true", "conf": "0.8"}),
        Entry("a3", "pin", "fact", "memory.md", 3),  # its text is the word: made, not taken
        Entry("a4", "Old pinned rule", "lesson", "archive.md", 4, {"pin": "yes"}),
        Entry("a5", "Go 1.23 now", "correction", "memory.md", 5, {"conf": "0.9"}),
        Entry("a6", "Agent's pin", "lesson", "memory.md", 6, {**agent, "pin": "1"}),
        Entry("a7", "Unpinned", "lesson", "learnings.md", 7, {"pin": "false", "conf": "1"}),
        Entry("a8", "Dark mode", "preference", "memory.md", 8, {"conf": "0.95"}),
        Entry("a9", "Vim keys", "preference", "archive.md", 9, {"conf": "1"}),
        Entry("b1", "Plain fact", "fact", "memory.md", 10, {"kw": "pin"}),  # a value
        Entry("b2", "Pinned nowhere", "fact", "memory.md", 11, {"conf": "1"}),
        Entry("b3", "A pinch of salt", "lesson", "learnings.md", 12),
    ]
    name, signature = snapshot.write(tmp_path, written, FILES, KEY)
    read = snapshot.read(tmp_path, name, signature, FILES, KEY)
    assert isinstance(read, snapshot.Snapshot)
    assert read.holding("pin") == [1, 2, 3, 5, 6, 9]
    assert read._made == [None] * 12  # found in the bytes, nothing decoded
    listed, snapped = SearchView(list(written)), SearchView(read)
    assert [e.id for e in snapped.pinned] == ["a2"] == [e.id for e in listed.pinned]
    assert [e.id for e in snapped.of_types(PROFILE_TYPES)] == ["a8", "a1"]
    assert [e.id for e in listed.of_types(PROFILE_TYPES)] == ["a8", "a1"]
    made = [written[i].id for i, e in enumerate(read._made) if e is not None]
    assert made == ["a1", "a2", "a3", "a6", "a7", "a8", "b1"]  # no correction: not pinned
