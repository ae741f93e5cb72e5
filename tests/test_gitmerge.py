"""The git merge driver (issue 17): entries merged by id, never duplicated, never lost;
pure cases first, then real `git` with two clones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memcli.services.memory import Memory
from memcli.store.gitmerge import merge_entries
from memcli.store.markdown import parse

BASE = """# Memory

Kept by hand, merged by memcli.

## Preferences
- Prefers pytest over unittest <!-- id=mpytest imp=0.8 -->
- Likes dark editor themes

## Facts
- Works at TechCorp <!-- id=mwork -->
- Lives in Berlin <!-- id=mhome -->
"""


def merged(ours: str, theirs: str, base: str = BASE) -> tuple[str, int]:
    outcome = merge_entries(base, ours, theirs, "memory.md")
    return outcome.text, outcome.conflicts


def entries(text: str) -> dict[str, str]:
    doc = parse(text, "memory.md")
    assert not doc.problems
    ids = Counter(e.id for e in doc.entries())
    assert all(n == 1 for n in ids.values()), ids  # never a duplicate id
    return {e.id: e.text for e in doc.entries()}


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


# ---------------------------------------------------------------------- real git


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_two_clones_merge_concurrent_changes_without_conflict_or_duplicate(
    workspace: Path, tmp_path: Path
) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(workspace, "init", "-q", "-b", "main")
    Memory(workspace).init()  # writes .gitattributes and registers the driver
    assert "memory.md merge=memcli" in (workspace / ".gitattributes").read_text()
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "workspace")
    git(workspace, "remote", "add", "origin", str(origin))
    git(workspace, "push", "-q", "origin", "main")
    laptop = tmp_path / "laptop"
    git(tmp_path, "clone", "-q", str(origin), str(laptop))
    result = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(laptop), "git", "setup"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    desk, lap = Memory(workspace), Memory(laptop)
    victim = next(e for e in desk.entries() if e.id_explicit and e.file == "memory.md")
    edited = next(e for e in desk.entries() if e.id_explicit and e.id != victim.id
                  and e.file == "memory.md")
    # the desk adds, edits one entry's text and forgets another
    desk_add = desk.add("Desk: the build server is ci.techcorp.io").entry
    desk.edit(edited.id, text=edited.text + " (checked on the desk)")
    desk.forget(victim.id)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "desk")
    git(workspace, "push", "-q", "origin", "main")
    # the laptop adds, raises the importance of the same edited entry, restores nothing yet
    lap_add = lap.add("Laptop: standups move to 9:30").entry
    lap.edit(edited.id, importance=0.95)
    lap_lesson = lap.add("Run migrations on staging first", type="lesson").entry
    git(laptop, "add", "-A")
    git(laptop, "commit", "-qm", "laptop")
    git(laptop, "pull", "-q", "--no-rebase", "origin", "main")  # the merge
    status = git(laptop, "status", "--porcelain")
    assert "UU" not in status and "AA" not in status
    for name in ("memory.md", "learnings.md", "archive.md"):
        assert "<<<<<<<" not in (laptop / name).read_text()
    merged_mem = Memory(laptop)
    live = [e for e in merged_mem.entries()]
    ids = Counter(e.id for e in live)
    assert all(n == 1 for n in ids.values()), ids
    by_id = {e.id: e for e in live}
    assert desk_add.id in by_id and lap_add.id in by_id and lap_lesson.id in by_id
    assert by_id[edited.id].text.endswith("(checked on the desk)")
    assert by_id[edited.id].importance == 0.95  # both sides' edits, field by field
    assert victim.id not in by_id
    archived = [e.id for e in merged_mem.entries(include_archived=True) if e.file == "archive.md"]
    assert victim.id in archived
    assert merged_mem.doctor()["ok"]
    # the post-merge hook re-indexed: the laptop's index knows the desk's entry
    from memcli.index.backend import open_backend
    from memcli.store.config import IndexSettings

    held = open_backend(IndexSettings(), laptop / ".memcli" / "index").fingerprint().keys
    assert desk_add.id in held
    # and a restore on one side merges back the other way
    merged_mem.restore(victim.id)
    git(laptop, "commit", "-qam", "restore")
    git(laptop, "push", "-q", "origin", "HEAD:main")
    git(workspace, "pull", "-q", "--no-rebase", "origin", "main")
    assert victim.id in {e.id for e in Memory(workspace).entries()}
