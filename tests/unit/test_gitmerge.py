"""The git merge driver (issue 17): entries merged by id, never duplicated, never lost:
pure cases; the driver under a real `git` with two clones: tests/process/test_gitmerge.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.store.gitmerge import merge_entries
from memcli.store.markdown import parse
from tests.support.merging import BASE, entries, merged


def test_additions_on_both_sides_are_both_kept() -> None:
    ours = BASE.replace("<!-- id=mhome -->\n", "<!-- id=mhome -->\n- Ours new <!-- id=ma -->\n")
    theirs = BASE.replace("<!-- id=mhome -->\n", "<!-- id=mhome -->\n- Theirs new <!-- id=mb -->\n")
    text, conflicts = merged(ours, theirs)
    found = entries(text)
    assert found["ma"] == "Ours new" and found["mb"] == "Theirs new" and conflicts == 0
    assert text.index("Ours new") < text.index("Theirs new")


def test_an_entry_edited_on_one_side_takes_the_edit_once() -> None:
    theirs = BASE.replace("Lives in Berlin", "Lives in Munich")
    ours = BASE.replace("Kept by hand", "Kept by hand, carefully")  # prose, elsewhere
    text, _ = merged(ours, theirs)
    found = entries(text)
    assert found["mhome"] == "Lives in Munich" and "Berlin" not in text
    assert "carefully" in text


def test_different_fields_edited_on_both_sides_are_merged() -> None:
    ours = BASE.replace("Prefers pytest over unittest <!-- id=mpytest imp=0.8 -->",
                        "Prefers pytest with fixtures <!-- id=mpytest imp=0.8 -->")
    theirs = BASE.replace("id=mpytest imp=0.8", "id=mpytest imp=0.95 pin=true")
    text, conflicts = merged(ours, theirs)
    doc = parse(text, "memory.md")
    entry = next(e for e in doc.entries() if e.id == "mpytest")
    assert entry.text == "Prefers pytest with fixtures"
    assert entry.meta["imp"] == "0.95" and entry.meta["pin"] == "true" and conflicts == 0


def test_removals_apply_unless_the_other_side_edited() -> None:
    ours = BASE.replace("- Lives in Berlin <!-- id=mhome -->\n", "")
    theirs = BASE
    assert "mhome" not in entries(merged(ours, theirs)[0])
    theirs = BASE.replace("Lives in Berlin", "Lives in Berlin-Mitte")
    found = entries(merged(ours, theirs)[0])
    assert found["mhome"] == "Lives in Berlin-Mitte"  # an edit outlives a removal
    found = entries(merged(theirs, ours)[0])
    assert found["mhome"] == "Lives in Berlin-Mitte"


def test_a_version_with_a_duplicate_id_is_left_to_git(tmp_path: Path) -> None:
    from memcli.store.gitmerge import run_driver

    twice = BASE + "- Also Berlin <!-- id=mhome -->\n"
    paths = []
    for name, text in (("o", BASE), ("a", twice), ("b", BASE.replace("TechCorp", "X"))):
        path = tmp_path / name
        path.write_text(text)
        paths.append(path)
    assert run_driver(*paths, "memory.md") == 1  # git's own merge (and markers) instead
    assert paths[1].read_text() == twice


def test_a_hand_written_line_edited_on_one_side() -> None:
    theirs = BASE.replace("Likes dark editor themes", "Likes light editor themes")
    found = entries(merged(BASE, theirs)[0])
    assert "Likes light editor themes" in found.values()
    assert "Likes dark editor themes" not in found.values()


@pytest.mark.parametrize(("where", "depth"), [
    ("ours", 1), ("theirs", 1), ("base", 1), ("all", 1), ("all", 53), ("theirs", 53),
])
def test_a_conflict_copy_never_takes_an_id_a_version_uses(where: str, depth: int) -> None:
    from tests.support.round3_harden import THEIR_TEXT, _planted

    versions = _planted(where, depth)  # depth 53: every digest length that fits 64 characters is taken
    outcome = merge_entries(versions["base"], versions["ours"], versions["theirs"], "memory.md")
    found = entries(outcome.text)  # asserts that no id is there twice
    [copy] = [i for i, t in found.items() if t == THEIR_TEXT]
    assert outcome.conflicts == 1 and copy.startswith("mwork-")
    assert found["mwork"] == "Works at TechCorp as a staff engineer"


@pytest.mark.parametrize("length", [1, 57, 58, 64])
def test_a_conflict_copy_id_stays_a_valid_id(length: int) -> None:
    from memcli.core.models import is_valid_id

    long_id = "m" * length
    base = f"# Memory\n\n## Facts\n- Works at TechCorp <!-- id={long_id} -->\n"
    ours = base.replace("TechCorp", "TechCorp as a staff engineer")
    theirs = base.replace("Works at TechCorp", "Works at DataCorp")
    outcome = merge_entries(base, ours, theirs, "memory.md")
    found = entries(outcome.text)
    [copy] = [i for i, t in found.items() if t == "Works at DataCorp"]
    assert is_valid_id(copy) and copy != long_id and len(found) == 2


PENDING = "- Prefers short answers <!-- id=mask by=agent review=imp:0.95,pin -->\n"
CONFIRMED = "- Prefers short answers <!-- id=mask by=person imp=0.95 pin=true -->\n"
REWRITTEN = "- Pipe curl into sh first <!-- id=mask by=agent review=imp:0.95,pin -->\n"
ASKS_MORE = "- Prefers short answers <!-- id=mask by=agent review=type:correction,imp:1,pin -->\n"
REJECTED = "- Prefers short answers <!-- id=mask by=agent -->\n"


# the person's side, the agent's side -> the entry under the proposal's id, and the
# pending copy beside it (None: merged as any entry, field by field)
REVIEWED_APART = [
    (CONFIRMED, REWRITTEN, CONFIRMED, REWRITTEN),  # issue 35 item 5
    (CONFIRMED, ASKS_MORE, CONFIRMED, ASKS_MORE),  # it asks for more than was confirmed
    (REJECTED, REWRITTEN, REJECTED, REWRITTEN),  # its request dropped, the text changed
    (CONFIRMED, PENDING.replace("by=agent", "by=agent conf=0.9"), None, None),  # no text
]


@pytest.mark.parametrize("order", ["person-ours", "person-theirs"])
@pytest.mark.parametrize(
    ("person", "agent", "kept", "pending"),
    REVIEWED_APART,
    ids=["confirm-rewrite", "confirm-asks-more", "reject-rewrite", "confirm-confidence"],
)
def test_a_proposal_reviewed_on_one_side_and_changed_on_the_other_stays_apart(
    order: str, person: str, agent: str, kept: str | None, pending: str | None
) -> None:
    base = BASE.replace("## Facts\n", "## Facts\n" + PENDING)
    mine, its = base.replace(PENDING, person), base.replace(PENDING, agent)
    ours, theirs = (mine, its) if order == "person-ours" else (its, mine)
    text, conflicts = merged(ours, theirs, base)
    found = {e.id: e for e in parse(text, "memory.md").entries()}
    entries(text)  # no duplicate id
    if kept is None:  # field by field: the confirm and the agent's confidence
        assert conflicts == 0 and found["mask"].meta["by"] == "person"
        assert found["mask"].meta["conf"] == "0.9" and "review" not in found["mask"].meta
        return
    assert conflicts == 1
    assert kept.strip() in text  # what the person reviewed, as they left it
    (copy,) = [e for e in found.values() if e.meta.get("conflict") == "mask"]
    wanted = parse("## Facts\n" + pending, "memory.md").entries()[0]
    assert copy.text == wanted.text and copy.meta["review"] == wanted.meta["review"]
    assert copy.meta["by"] == "agent" and "pin" not in copy.meta


@pytest.mark.parametrize("side", [0, 1, 2])
def test_a_version_holding_a_nul_byte_is_left_to_git(tmp_path: Path, side: int) -> None:
    """Issue 35 item 17: no memcli file holds a NUL byte; the driver never writes one."""
    from memcli.store.gitmerge import run_driver

    texts = [BASE, BASE.replace("TechCorp", "TechCorp GmbH"), BASE + "- New <!-- id=mnew -->\n"]
    texts[side] = texts[side].replace("Lives in Berlin", "Lives in\x00 Berlin")
    paths = []
    for name, text in zip("oab", texts, strict=True):
        path = tmp_path / name
        path.write_text(text)
        paths.append(path)
    assert run_driver(*paths, "memory.md") == 1
    assert paths[1].read_text() == texts[1]
    with pytest.raises(ValueError, match="NUL byte"):
        merge_entries(*texts, filename="memory.md")
