"""The hook commands `memcli install` writes name the workspace as one shell word (issue
25, finding 7): Claude Code runs them through the shell, so a path holding `$(…)`,
quotes or `%` must reach memcli as it is and run nothing else."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memcli.surfaces import install


@pytest.mark.parametrize(
    "name", ["ws $(touch pwned)", "ws `touch pwned`", "ws'; touch pwned; '", 'ws"$HOME"%h']
)
def test_a_hostile_workspace_path_is_one_word_to_the_shell(tmp_path: Path, name: str) -> None:
    workspace = tmp_path / name
    workspace.mkdir()
    plan = install.plan("claude-code", "project", project_dir=tmp_path, home=tmp_path,
                        workspace=str(workspace), command=["printf", "%s\\n"])
    install.apply(plan)
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    commands = [h["command"] for groups in settings["hooks"].values()
                for group in groups for h in group["hooks"]]
    assert commands
    for command in commands:
        done = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True,
                              text=True, check=True)
        words = done.stdout.splitlines()
        assert words[:2] == ["-w", str(workspace)] and words[2] == "hook"
    assert not list(tmp_path.rglob("pwned"))
