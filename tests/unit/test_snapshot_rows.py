"""The index's entry snapshot is read back into `Entry` objects all at once
(memcli.core.models.Entry.from_rows): the very entries that were written, and a signed
snapshot whose rows have another shape (a snapshot of another memcli version) is not
used: the caller parses the Markdown."""

from __future__ import annotations

import marshal
from pathlib import Path

from memcli.core.models import Entry
from memcli.index import snapshot

KEY = b"k" * 32
FILES = {"memory.md": [10, 1, 2, 3, "a" * 64]}


def _entries() -> list[Entry]:
    return [
        Entry("m1", "Prefers tea", "fact", "memory.md", 3),
        Entry("m2", "Deploys on Fridays", "lesson", "learnings.md", 9, {"imp": "0.9"}, True),
        Entry("m3", "喜欢用中文", "preference", "memory.md", 12, {"kw": "a,b", "src": "x"}),
    ]


def test_the_rows_read_back_as_the_entries_written(tmp_path: Path) -> None:
    written = _entries()
    name, signature = snapshot.write(tmp_path, written, FILES, KEY)
    read = snapshot.read(tmp_path, name, signature, FILES, KEY)
    assert read == written
    assert [vars(e) for e in read] == [vars(e) for e in written]
    assert [e.importance for e in read] == [e.importance for e in written]  # a normal Entry


def test_a_signed_snapshot_of_rows_of_another_shape_is_not_used(tmp_path: Path) -> None:
    rows = [e.as_row() for e in _entries()]
    for bad in ([rows[0][:6], *rows[1:]], [*rows[:2], (*rows[2], "extra")]):
        data = marshal.dumps(bad)
        (tmp_path / "entries-0a1b2c.marshal").write_bytes(data)
        signature = snapshot.mac(KEY, FILES, data)
        assert snapshot.read(tmp_path, "entries-0a1b2c.marshal", signature, FILES, KEY) is None
