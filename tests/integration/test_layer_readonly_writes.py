"""A per-user layer the person made read-only (0555) gets no Markdown write from a
project, as root too (issue 35, item 10; docs/layers.md): `add --to user`, MCP
`add_memory(layer="user")`, `forget` and `edit` of its entry are refused with a message
naming the layer, and nothing in it changes."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from tests.integration.test_layer_readonly import _state
from tests.support.cli import invoke
from tests.support.env import make_workspace


@pytest.fixture
def locked(tmp_path: Path):  # noqa: ANN201 - (project, the user layer)
    user = make_workspace(Path(os.environ["XDG_DATA_HOME"]) / "memcli", "mu1", "Likes dark mode")
    project = make_workspace(tmp_path / "project", "mp1", "Deploys from main")
    (user / ".memcli").mkdir(exist_ok=True)
    for folder in (user / ".memcli", user):
        folder.chmod(0o555)
    yield project, user
    for folder in (user, user / ".memcli"):
        folder.chmod(0o755)


#: the project's commands that would write into the user layer
WRITES = [
    ("add", "--to", "user", "Prefers tabs"),
    ("add", "--to", "user", "Never deploy on Fridays", "--type", "correction"),
    ("forget", "mu1"),
    ("edit", "mu1", "--text", "Likes light mode"),
    ("edit", "mu1", "--pin"),
]


@pytest.mark.parametrize("args", WRITES, ids=lambda a: " ".join(a[:3]))
def test_a_read_only_user_layer_refuses_every_write_of_a_project(
    locked: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    project, user = locked
    before, mine = _state(user), (user / "memory.md").read_bytes()
    done = invoke(CliRunner(), project, *args)
    assert done.exit_code == 1, done.output
    assert "read-only" in done.output and str(user) in done.output, done.output
    assert "Traceback" not in done.output
    assert (user / "memory.md").read_bytes() == mine and _state(user) == before


def test_the_project_itself_is_still_written(locked: tuple[Path, Path]) -> None:
    project, user = locked
    done = invoke(CliRunner(), project, "add", "Uses make for builds")
    assert done.exit_code == 0, done.output
    assert "Uses make for builds" in (project / "memory.md").read_text()


@pytest.mark.slow  # a real MCP server process over stdio
def test_mcp_add_memory_to_a_read_only_user_layer_is_refused(locked: tuple[Path, Path]) -> None:
    from tests.integration.test_layers import _mcp

    project, user = locked
    mine = (user / "memory.md").read_bytes()

    async def steps(session) -> None:  # noqa: ANN001
        added = await session.call_tool(
            "add_memory", {"content": "Prefers tabs", "layer": "user"}
        )
        assert added.is_error and "read-only" in added.content[0].text, added
        gone = await session.call_tool("forget_memory", {"memory_key": "mu1"})
        assert gone.is_error and "read-only" in gone.content[0].text, gone

    anyio.run(_mcp, project, steps)
    assert (user / "memory.md").read_bytes() == mine
