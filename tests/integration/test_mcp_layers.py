"""MCP's resources of every layer (docs/layers.md): inside a project the server lists the
person's own curated files beside the project's, under URIs naming the layer, and
`memory://entry/{id}` resolves an id of either layer, naming it; a changed `[layers]`
shows without restarting. A real MCP client over stdio, the server in its own process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from memcli.store.trust import trust
from tests.integration.test_layers import _mcp
from tests.support.env import make_workspace

pytestmark = pytest.mark.slow

OWN = {"memory://memory.md", "memory://learnings.md"}
USERS = {"memory://layer/user/memory.md", "memory://layer/user/learnings.md"}
#: a path layer's name, percent-encoded
TEAM = "memory://layer/..%2Fteam/memory.md"
TEAMS = {TEAM, "memory://layer/..%2Fteam/learnings.md"}


def test_resources_of_every_layer_and_entries_of_any(tmp_path: Path) -> None:
    user = make_workspace(
        Path(os.environ["XDG_DATA_HOME"]) / "memcli", "mu1", "Prefers small pull requests"
    )
    project = make_workspace(tmp_path / "project", "mp1", "Deploys to Fly.io from main")
    team = make_workspace(tmp_path / "team", "mt1", "The team deploys on Tuesdays")
    (project / "memcli.toml").write_text('[layers]\nread = "user, ../team"\n')
    trust(project)  # a path layer is read once the person trusts the setting

    async def steps(session):  # noqa: ANN001, ANN202
        listed = {str(r.uri): r for r in (await session.list_resources()).resources}
        assert set(listed) == OWN | USERS | TEAMS
        shared = (await session.read_resource(TEAM)).contents[0].text
        assert shared == (team / "memory.md").read_text() and "mt1" in shared
        assert str(user) in listed["memory://layer/user/memory.md"].description
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memory://entry/{memory_key}"]
        mine = (await session.read_resource("memory://layer/user/memory.md")).contents[0].text
        ours = (await session.read_resource("memory://memory.md")).contents[0].text
        assert mine == (user / "memory.md").read_text() and "mu1" in mine
        assert ours == (project / "memory.md").read_text() and "mu1" not in ours
        entries = {}
        for key in ("mu1", "mp1"):
            text = (await session.read_resource(f"memory://entry/{key}")).contents[0].text
            entries[key] = json.loads(text)
        assert entries["mu1"]["layer"] == "user" and entries["mu1"]["text"].startswith("Prefers")
        assert entries["mp1"]["layer"] == "project"
        with pytest.raises(Exception, match="nope"):  # noqa: B017 - an MCP error
            await session.read_resource("memory://entry/nope")
        with pytest.raises(Exception, match="Unknown resource"):  # noqa: B017
            await session.read_resource("memory://layer/team/memory.md")
        # the layer list changes while the server runs: reading no other layer
        (project / "memcli.toml").write_text('[layers]\nread = ""\n')
        listed = {str(r.uri) for r in (await session.list_resources()).resources}
        assert listed == OWN
        with pytest.raises(Exception, match="mu1"):  # noqa: B017 - not read any more
            await session.read_resource("memory://entry/mu1")

    anyio.run(_mcp, project, steps)
