"""Every field the git merge driver merges (issue 25): one side sets, changes or removes
a metadata key (id, imp, conf, created, updated, kw, src, pin, expires, a key memcli
does not know) while the other side edits the entry's text; both changes survive, in
either direction. An unpin on the other side is not undone by a text edit here. The same
rows under a real `git merge`: tests/process/test_gitmerge_fields.py."""

from __future__ import annotations

import pytest

from memcli.store.markdown import parse
from tests.support.merging import merged

ID = "mpytest"
TEXT = "Prefers pytest over unittest"
EDITED = "Prefers pytest with fixtures over unittest"
#: the entry's metadata in the base version (every key memcli writes, and one it does not)
FULL = {
    "imp": "0.8",
    "conf": "0.9",
    "created": "2026-01-02T03:04:05Z",
    "updated": "2026-02-03T04:05:06Z",
    "kw": "python,testing",
    "src": "cli",
    "pin": "true",
    "expires": "2027-01-01",
    "team": "core",
}
#: key -> another value a side may give it
OTHER = {
    "imp": "0.3",
    "conf": "0.5",
    "created": "2025-12-31T23:59:59Z",
    "updated": "2026-11-24T08:00:00Z",
    "kw": "python,pytest,fixtures",
    "src": "mcp",
    "pin": "false",
    "expires": "2026-12-31",
    "team": "platform",
}


def document(text: str, meta: dict[str, str], entry_id: str = ID) -> str:
    comment = " ".join(f"{k}={v}" for k, v in {"id": entry_id, **meta}.items())
    return (
        "# Memory\n\n## Preferences\n"
        f"- {text} <!-- {comment} -->\n"
        "- Likes dark editor themes <!-- id=mdark -->\n"
    )


def field_rows() -> list[tuple[str, str, dict[str, str], dict[str, str]]]:
    """(key, what happens, base metadata, the changing side's metadata)."""
    rows = []
    for key in FULL:
        without = {k: v for k, v in FULL.items() if k != key}
        rows.append((key, "set", without, FULL))  # absent in the base, one side adds it
        rows.append((key, "change", FULL, {**FULL, key: OTHER[key]}))
        rows.append((key, "remove", FULL, without))  # an unpin, a keyword list dropped...
    return rows


def _result(text: str) -> tuple[str, dict[str, str]]:
    doc = parse(text, "memory.md")
    assert not doc.problems
    found = [e for e in doc.entries() if e.id == ID]
    assert len(found) == 1, [e.id for e in doc.entries()]
    return found[0].text, {k: v for k, v in found[0].meta.items() if k != "id"}


@pytest.mark.parametrize("field_side", ["ours", "theirs"])
@pytest.mark.parametrize(
    ("key", "action", "base_meta", "changed_meta"),
    [pytest.param(*row, id=f"{row[0]}-{row[1]}") for row in field_rows()],
)
def test_a_field_change_and_a_text_edit_both_survive(
    key: str, action: str, base_meta: dict, changed_meta: dict, field_side: str
) -> None:
    base = document(TEXT, base_meta)
    field_change = document(TEXT, changed_meta)
    text_edit = document(EDITED, base_meta)
    ours, theirs = (field_change, text_edit) if field_side == "ours" else (text_edit, field_change)
    out, conflicts = merged(ours, theirs, base)
    assert conflicts == 0
    assert _result(out) == (EDITED, changed_meta), f"{key} {action} by {field_side}"
    assert "Likes dark editor themes" in out


@pytest.mark.parametrize("field_side", ["ours", "theirs"])
@pytest.mark.parametrize("key", list(FULL))
def test_changes_to_different_fields_on_both_sides_both_survive(key: str, field_side: str) -> None:
    """One side changes `key`, the other changes a different key and the text."""
    other_key = "team" if key != "team" else "imp"
    base = document(TEXT, FULL)
    one = document(TEXT, {**FULL, key: OTHER[key]})
    two = document(EDITED, {**FULL, other_key: OTHER[other_key]})
    ours, theirs = (one, two) if field_side == "ours" else (two, one)
    out, conflicts = merged(ours, theirs, base)
    assert conflicts == 0
    assert _result(out) == (EDITED, {**FULL, key: OTHER[key], other_key: OTHER[other_key]})


@pytest.mark.parametrize("field_side", ["ours", "theirs"])
def test_an_id_change_and_a_text_edit_lose_nothing(field_side: str) -> None:
    """A new id is a new entry to the driver: the renamed one and the edited one are both
    kept, each id once."""
    base = document(TEXT, FULL)
    renamed = document(TEXT, FULL, entry_id="mrenamed")
    edited = document(EDITED, FULL)
    ours, theirs = (renamed, edited) if field_side == "ours" else (edited, renamed)
    out, _ = merged(ours, theirs, base)
    doc = parse(out, "memory.md")
    ids = [e.id for e in doc.entries()]
    assert sorted(ids) == sorted({*ids}) and {"mrenamed", ID} <= set(ids)
    assert {e.id: e.text for e in doc.entries()}[ID] == EDITED


def test_text_edited_on_both_sides() -> None:
    base = document(TEXT, FULL)
    same, _ = merged(document(EDITED, FULL), document(EDITED, FULL), base)
    assert _result(same) == (EDITED, FULL)  # the same edit: once
    ours = document(EDITED, FULL)
    theirs = document("Prefers pytest, always", {**FULL, "imp": OTHER["imp"]})
    out, conflicts = merged(ours, theirs, base)
    assert conflicts == 1
    doc = parse(out, "memory.md")
    by_id = {e.id: e for e in doc.entries()}
    assert by_id[ID].text == EDITED and by_id[ID].meta["imp"] == OTHER["imp"]
    kept = [e for e in doc.entries() if e.meta.get("conflict") == ID]
    assert [e.text for e in kept] == ["Prefers pytest, always"]
