"""The git merge driver (issue 17): entries merged by id, never duplicated, never lost:
real `git` with two clones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memcli.services.memory import Memory
from tests.support.processes import indexed_keys

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
    assert desk_add.id in indexed_keys(laptop)
    # and a restore on one side merges back the other way
    merged_mem.restore(victim.id)
    git(laptop, "commit", "-qam", "restore")
    git(laptop, "push", "-q", "origin", "HEAD:main")
    git(workspace, "pull", "-q", "--no-rebase", "origin", "main")
    assert victim.id in {e.id for e in Memory(workspace).entries()}
