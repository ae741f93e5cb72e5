"""What add, extract and compress print names the layer an entry went to while the
workspace reads more than itself, and stays as it was with one workspace (docs/layers.md).
The real CLI (its entry point) and the real model."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.store.workspace import init_workspace
from tests.support.cli import invoke

SAID = "I prefer pytest over unittest. Remember that our staging host is called tern."
ID = r"m[0-9a-f]+"

ROWS = [
    # (a per-user workspace exists, the command, a line its output must hold (a regex:
    # {user} is the per-user workspace), a text no line may hold)
    (False, ("add", "Deploys from main"), rf"added {ID} to memory\.md \(fact\)", "layer"),
    (True, ("add", "Deploys from main"), rf"added {ID} to memory\.md \(fact, project layer\)", ""),
    (
        True,
        ("add", "--to", "user", "--type", "preference", "Prefers small pull requests"),
        rf"added {ID} to memory\.md of {{user}} \(preference, user layer\)",
        "",
    ),
    (
        False,
        ("add", "The staging host is called tern."),
        rf"updated {ID} in memory\.md: the same text was already there",
        "layer",
    ),
    (
        True,
        ("add", "The staging host is called tern."),
        rf"updated {ID} in memory\.md \(project layer\): the same text was already there",
        "",
    ),
    (True, ("extract",), rf"ADD +{ID} +\[preference\] \(user\) Prefers pytest over unittest", ""),
    (True, ("extract",), r"\w+ +\S+ +\[fact\] \(project\) Our staging host is called tern", ""),
    (False, ("extract",), rf"ADD +{ID} +\[preference\] Prefers pytest over unittest", "(project)"),
    (False, ("extract",), r"\w+ +\S+ +\[fact\] Our staging host is called tern", "(user)"),
    (True, ("compress", "--dry-run"), rf"merge +\(project\) merged 1 duplicate\(s\) into {ID}", ""),
    (False, ("compress", "--dry-run"), rf"merge +merged 1 duplicate\(s\) into {ID}", "(project)"),
    (True, ("compress", "--yes"), r"compress of the project layer: wrote 1 entr\(ies\), archived 1", ""),
    (False, ("compress", "--yes"), r"compress: wrote 1 entr\(ies\), archived 1", "layer"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("has_user", "args", "line", "absent"), ROWS)
def test_write_lines_name_the_layer_only_when_several_are_read(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    exported,  # noqa: ANN001
    has_user: bool,
    args: tuple[str, ...],
    line: str,
    absent: str,
) -> None:
    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    project = tmp_path / "project"
    init_workspace(project)
    if has_user:
        init_workspace(user)
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    monkeypatch.setenv("MEMCLI_LAYERS_USER_TYPES", "preference")
    runner = CliRunner()
    for text in ("The staging host is called tern.", "Our staging host is called tern"):
        assert invoke(runner, project, "add", text).exit_code == 0
    if args == ("extract",):
        transcript = tmp_path / "session.json"
        transcript.write_text(json.dumps([{"role": "user", "content": SAID}]))
        args = ("extract", "--messages", str(transcript))
    done = invoke(runner, project, *args)
    assert done.exit_code == 0, done.output
    wanted = re.compile(line.replace("{user}", re.escape(str(user.resolve()))))
    lines = done.stdout.splitlines()
    assert any(wanted.fullmatch(text) for text in lines), done.stdout
    assert not absent or absent not in done.stdout, done.stdout
