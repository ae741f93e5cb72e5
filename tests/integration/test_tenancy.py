"""The layers of a workspace served to tenants (services.tenancy, mcp_http.reachable):
a table of grants and the layers each served workspace reads, and the writes refused.
Fast (no model, no server); the real server is tests/process/test_mcp_tenants.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcli.core.errors import ValidationError
from memcli.services import layers, tenancy
from memcli.services.memory import Memory
from memcli.store.trust import trust
from memcli.surfaces.mcp_http import Grant, reachable
from tests.support.env import make_workspace


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setattr(tenancy, "_SERVED", {})
    places = {
        "user": make_workspace(Path(os.environ["XDG_DATA_HOME"]) / "memcli", "mu1", "Mine"),
        "alice": make_workspace(tmp_path / "alice", "ma1", "Alice's"),
        "bob": make_workspace(tmp_path / "bob", "mb1", "Bob's"),
        "shared": make_workspace(tmp_path / "shared", "ms1", "Ours"),
    }
    (places["shared"] / "memcli.toml").write_text('[layers]\nread = "user, ../alice"\n')
    trust(places["shared"])
    (places["alice"] / "memcli.toml").write_text('[layers]\nread = "user, ../shared"\n')
    trust(places["alice"])
    return places


def _grant(world: dict[str, Path], *names: str) -> Grant:
    return Grant("0" * 64, {n: world[n] for n in names})


#: (grants as workspace names per token, the workspace served, the layers it reads)
CASES = [
    ([("alice",)], "alice", ["project"]),  # the operator's own memory: never
    ([("alice", "shared")], "alice", ["project", "../shared"]),
    ([("alice", "shared")], "shared", ["project", "../alice"]),
    # bob reaches shared too: shared may not hand him alice's memory
    ([("alice", "shared"), ("bob", "shared")], "shared", ["project"]),
    ([("alice", "shared"), ("bob", "shared")], "alice", ["project", "../shared"]),
    # a grant that names the per-user workspace: read as the user layer
    ([("alice", "user")], "alice", ["project", "user"]),
    ([("user",)], "user", ["project"]),
]


@pytest.mark.parametrize(("tokens", "served", "read"), CASES)
def test_a_served_workspace_reads_only_layers_every_tenant_was_granted(
    world: dict[str, Path], tokens: list[tuple[str, ...]], served: str, read: list[str]
) -> None:
    grants = [_grant(world, *names) for names in tokens]
    tenancy.confine(world[served], reachable(grants, world[served]))
    names = [layer.name for layer in layers.open_layers(Memory(world[served]))]
    assert names == read


def test_unconfined_the_person_reads_every_layer_they_set(world: dict[str, Path]) -> None:
    names = [layer.name for layer in layers.open_layers(Memory(world["alice"]))]
    assert names == ["project", "user", "../shared"]


def test_a_tenant_writes_nothing_to_a_user_layer(world: dict[str, Path]) -> None:
    alice = world["alice"]
    (alice / "memcli.toml").write_text('[layers]\nuser_types = "preference"\n')
    trust(alice)
    mem = Memory(alice)
    assert layers.target(mem, None, "preference").root == world["user"]  # the person's own
    tenancy.confine(alice, [alice, world["user"]])
    assert layers.target(mem, None, "preference") is mem
    with pytest.raises(ValidationError, match="layer 'user' cannot be written"):
        layers.target(mem, "user", "fact")
    assert layers.target(mem, "project", "fact") is mem
