"""`history --removed` reads only the entries around what changed between two versions
(memcli.services.removed._around_change): it must find exactly the entries a full parse
of both versions finds removed, with the same text and type, at every boundary."""

from __future__ import annotations

import random

import pytest

from memcli.services.removed import _around_change
from memcli.store.markdown import parse_file
from tests.support.env import SAMPLE

BASE = (SAMPLE / "memory.md").read_text(encoding="utf-8")


def full(a: str, b: str) -> dict[str, tuple[str, str]]:
    old = {e.id: e for e in parse_file(a, "memory.md").entries}
    new = {e.id for e in parse_file(b, "memory.md").entries}
    return {i: (e.text, e.type) for i, e in old.items() if i not in new}


def region(a: str, b: str) -> dict[str, tuple[str, str]]:
    old, new = _around_change(a.encode(), b.encode(), "memory.md")
    return {i: (e.text, e.type) for i, e in old.items() if i not in new}


def _lines() -> list[str]:
    return BASE.splitlines(keepends=True)


def _without(index: int) -> str:
    lines = _lines()
    del lines[index]
    return "".join(lines)


ENTRY_LINES = [i for i, ln in enumerate(_lines()) if ln.startswith("- ")]

CASES = {
    "first entry deleted": (BASE, _without(ENTRY_LINES[0])),
    "last entry deleted": (BASE, _without(ENTRY_LINES[-1])),
    "entry with a continuation line deleted": (
        BASE, BASE.replace(next(ln for ln in _lines() if "Works at TechCorp" in ln)
                           + "  Joined in 2024 as a backend engineer; moved to the platform "
                           "team in 2026.\n", "")),
    "continuation line only changed": (BASE, BASE.replace("Joined in 2024", "Joined in 2023")),
    "text edited mid-line (derived id changes)": (
        BASE, BASE.replace("Likes dark editor themes", "Likes light editor themes")),
    "entry added, nothing removed": (BASE, BASE.replace("## Facts\n", "## Facts\n- New\n")),
    "last line without a newline deleted": (BASE.rstrip("\n") + "\n- Tail fact",
                                            BASE.rstrip("\n") + "\n"),
    "a whole section deleted": (BASE, BASE[: BASE.index("## Facts")] + BASE[
        BASE.index("## Patterns"):]),
    "heading renamed above an entry": (BASE, BASE.replace("## Facts", "## Known facts")),
    "everything deleted": (BASE, ""),
    "from nothing": ("", BASE),
}


@pytest.mark.parametrize("case", list(CASES))
def test_removed_entries_match_a_full_parse_at_each_boundary(case: str) -> None:
    a, b = CASES[case]
    assert region(a, b) == full(a, b)


def test_removed_entries_match_a_full_parse_on_random_edits() -> None:
    rng = random.Random(25)
    for _ in range(300):
        lines = _lines()
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(lines))
            action = rng.choice(["delete", "insert", "edit", "indent"])
            if action == "delete":
                del lines[at]
            elif action == "insert":
                lines.insert(at, f"- inserted {rng.random():.6f}\n")
            elif action == "edit":
                lines[at] = lines[at].replace("e", "E", 1)
            else:
                lines.insert(at, "  a continuation line\n")
        b = "".join(lines)
        assert region(BASE, b) == full(BASE, b), b
