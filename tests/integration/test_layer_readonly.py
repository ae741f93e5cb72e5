"""A layer the person made read-only gets no write from a project's commands (the rule
the watcher keeps, memcli.surfaces.daemon.layerwatch.read_only: by mode, as root too).
Run as root, a project's `memcli search` still writes the user layer's index, embedding
cache and access counts into its read-only `.memcli` folder: the failing reproduction,
kept until the index, the cache and the access counts ask the same question. Found by
trying to break what landed (helper "breaker")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.store.workspace import init_workspace
from tests.support.cli import invoke


@pytest.mark.slow  # the search embeds the user layer's entries with the real model
@pytest.mark.skipif(os.geteuid() != 0, reason="a user other than root: the system refuses")
def test_a_search_in_the_project_writes_nothing_into_a_read_only_user_layer(
    tmp_path: Path,
    exported,  # noqa: ANN001 - the bundled model, exported once
) -> None:
    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    project = tmp_path / "project"
    for root in (user, project):
        init_workspace(root)
    memory = user / "memory.md"
    line = "- Likes dark mode in the editor <!-- id=mdark -->"
    memory.write_text(memory.read_text().replace("## Preferences\n", f"## Preferences\n{line}\n"))
    (user / ".memcli").mkdir(exist_ok=True)
    before = sorted(p.relative_to(user) for p in user.rglob("*"))
    for folder in (user / ".memcli", user):
        folder.chmod(0o555)
    try:
        found = invoke(CliRunner(), project, "search", "dark mode")
        after = sorted(p.relative_to(user) for p in user.rglob("*"))
    finally:
        for folder in (user, user / ".memcli"):
            folder.chmod(0o755)
    assert "mdark" in found.output  # read, as a layer that cannot be written is
    assert after == before
