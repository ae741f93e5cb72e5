"""The git merge driver (issue 17): entries merged by id, never duplicated, never lost:
a conflict doctor reports."""

from __future__ import annotations

from pathlib import Path

from memcli.services.memory import Memory
from tests.support.merging import BASE, entries, merged


def test_text_edited_differently_on_both_sides_keeps_both_without_a_duplicate_id(
    tmp_path: Path,
) -> None:
    ours = BASE.replace("Works at TechCorp", "Works at TechCorp as a staff engineer")
    theirs = BASE.replace("Works at TechCorp", "Works at DataCorp")
    text, conflicts = merged(ours, theirs)
    found = entries(text)
    assert conflicts == 1
    assert found["mwork"] == "Works at TechCorp as a staff engineer"
    [other] = [i for i, t in found.items() if t == "Works at DataCorp"]
    assert other != "mwork"
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "memory.md").write_text(text)
    (ws / "learnings.md").write_text("")
    report = Memory(ws).doctor()
    assert not report["ok"] and any("mwork" in c for c in report["merge_conflicts"])
