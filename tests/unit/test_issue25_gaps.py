"""Gaps the mutation list found in issue 25's round-three fixes (tests/support/
mutation_list.py names each): a snapshot signed for other Markdown files, a snapshot
name with a folder in it and two conflict copies whose ids would coincide."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.core.models import Entry
from memcli.index import snapshot
from memcli.store.gitmerge import merge_entries
from tests.support.merging import entries

KEY = b"k" * 32
FILES = {"memory.md": [10, 1, 2, 3, "a" * 64]}


def test_a_snapshot_taken_from_other_files_is_not_trusted(tmp_path: Path) -> None:
    rows = [Entry("m1", "Prefers tea", "fact", "memory.md", 3)]
    name, signature = snapshot.write(tmp_path, rows, FILES, KEY)
    assert [e.text for e in snapshot.read(tmp_path, name, signature, FILES, KEY)] == ["Prefers tea"]
    other = {"memory.md": [10, 1, 2, 3, "b" * 64]}  # the same stamp, another content
    assert snapshot.read(tmp_path, name, signature, other, KEY) is None
    assert snapshot.read(tmp_path, name, signature, {**FILES, "x.md": [1]}, KEY) is None


@pytest.mark.parametrize(
    "name",
    ["entries-0a1b/../../x.marshal", "entries-/etc.marshal", "entries-a\\b.marshal"],
)
def test_a_snapshot_name_with_a_folder_is_refused(name: str) -> None:
    assert not snapshot.is_name(name)


def test_two_conflict_copies_in_one_merge_never_share_an_id() -> None:
    """Two 64-character ids alike in their first 57 characters, both edited on both
    sides to the same text there: each copy's id is cut to fit, so the second must not
    take the first one's."""
    first, second = "m" * 60 + "aaaa", "m" * 60 + "bbbb"
    base = (
        "# Memory\n\n## Facts\n"
        f"- Works at TechCorp <!-- id={first} -->\n"
        f"- Lives in Leipzig <!-- id={second} -->\n"
    )
    ours = base.replace("TechCorp", "TechCorp as an engineer").replace("Leipzig", "Berlin")
    theirs = base.replace("Works at TechCorp", "Moved away").replace(
        "Lives in Leipzig", "Moved away"
    )
    outcome = merge_entries(base, ours, theirs, "memory.md")
    found = entries(outcome.text)  # asserts that no id is there twice
    copies = [i for i, t in found.items() if t == "Moved away"]
    assert outcome.conflicts == 2 and len(copies) == 2 and len(set(copies)) == 2
