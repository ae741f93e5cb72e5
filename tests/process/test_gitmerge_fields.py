"""A few rows of tests/unit/test_gitmerge_fields.py under a real `git merge` with the
memcli driver registered: one branch changes a field, the other edits the text, the
merge commits cleanly and both changes are in memory.md (an unpin on the merged branch
survives a text edit on this one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_gitmerge_fields import EDITED, FULL, OTHER, TEXT, _result, document


def git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def without(key: str) -> dict[str, str]:
    return {k: v for k, v in FULL.items() if k != key}


#: (name, base metadata, the field side's metadata, which branch changes the field)
ROWS = [
    ("unpin-on-the-merged-branch", FULL, without("pin"), "theirs"),
    ("unpin-here", FULL, without("pin"), "ours"),
    ("importance-on-the-merged-branch", FULL, {**FULL, "imp": OTHER["imp"]}, "theirs"),
    ("keywords-set-here", without("kw"), FULL, "ours"),
    ("unknown-key-removed-on-the-merged-branch", FULL, without("team"), "theirs"),
]


@pytest.mark.slow  # a python process per merge
@pytest.mark.parametrize(
    ("base_meta", "field_meta", "side"), [pytest.param(*row[1:], id=row[0]) for row in ROWS]
)
def test_real_git_merge_keeps_a_field_change_and_a_text_edit(
    tmp_path: Path, base_meta: dict, field_meta: dict, side: str
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(
        repo,
        "config",
        "merge.memcli.driver",
        f'"{sys.executable}" -m memcli merge-driver %O %A %B %P',
    )
    (repo / ".gitattributes").write_text("memory.md merge=memcli\n")
    memory = repo / "memory.md"
    memory.write_text(document(TEXT, base_meta))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    field_change, text_edit = document(TEXT, field_meta), document(EDITED, base_meta)
    here, there = (field_change, text_edit) if side == "ours" else (text_edit, field_change)
    git(repo, "checkout", "-q", "-b", "laptop")
    memory.write_text(there)
    git(repo, "commit", "-qam", "laptop")
    git(repo, "checkout", "-q", "main")
    memory.write_text(here)
    git(repo, "commit", "-qam", "desk")
    git(repo, "merge", "-q", "--no-edit", "laptop")  # exit 0: the driver merged it
    assert git(repo, "status", "--porcelain") == ""
    assert _result(memory.read_text()) == (EDITED, field_meta)
