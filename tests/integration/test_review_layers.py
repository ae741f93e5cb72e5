"""`memcli review` in a project shows and settles what waits in every layer the project
reads (memcli.surfaces.cli.commands.review): an agent's forget of an entry in the
person's own layer (MCP forget_memory finds it there, and says it waits for review) was
invisible to `memcli review` in the project ("0 waiting"), and `review reject ID` did not
find it. Found by trying to break what landed (helper "breaker")."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.store.workspace import init_workspace
from memcli.surfaces import operations
from tests.support.cli import as_json, invoke

MINE = "- Prefers tabs over spaces <!-- id=mtabs -->"  # the person's, in their own layer
OURS = "- The staging host is tern <!-- id=mtern -->"  # the project's, by hand


def with_line(root: Path, line: str) -> None:
    memory = root / "memory.md"
    memory.write_text(memory.read_text().replace("## Facts\n", f"## Facts\n{line}\n", 1))


@pytest.fixture
def asked(tmp_path: Path) -> tuple[Path, Path]:
    """(project, user layer), an agent's forget of an entry of each waiting."""
    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    project = tmp_path / "project"
    for root, line in ((user, MINE), (project, OURS)):
        init_workspace(root)
        with_line(root, line)
    api = Memory(project)
    for key in ("mtabs", "mtern"):  # as MCP forget_memory does
        assert not operations.holder(api, key).forget(key).archived
    return project, user


def test_review_in_a_project_lists_each_layers_requests(asked: tuple[Path, Path]) -> None:
    project, _ = asked
    rows = as_json(invoke(CliRunner(), project, "review", "--json"))["waiting"]
    assert sorted((r["id"], r.get("layer")) for r in rows) == [
        ("mtabs", "user"),
        ("mtern", "project"),
    ]
    text = invoke(CliRunner(), project, "review").output
    assert re.search(r"^mtabs@[0-9a-f]{10}  \(user\) memory\.md", text, re.M), text
    assert "2 waiting" in text


@pytest.mark.parametrize(
    ("args", "kept", "archived"),
    [
        (("reject", "mtabs"), ["mtabs"], []),  # the request dropped, the entry as it was
        (("confirm", "mtabs"), [], ["mtabs"]),
        (("confirm", "mtabs", "mtern"), [], ["mtabs", "mtern"]),  # ids of two layers
        (("reject", "--all"), ["mtabs", "mtern"], []),
    ],
    ids=["reject-one", "confirm-one", "confirm-two-layers", "reject-all"],
)
def test_review_settles_a_request_in_the_layer_holding_it(
    asked: tuple[Path, Path], args: tuple[str, ...], kept: list[str], archived: list[str]
) -> None:
    project, user = asked
    invoke(CliRunner(), project, "review")  # what the person confirms: the listed versions
    done = invoke(CliRunner(), project, "review", *args)
    assert done.exit_code == 0, done.output
    for key in kept:
        entry = operations.holder(Memory(project), key).get(key).entry
        assert "review" not in entry.meta
    gone = {e.id for root in (project, user) for e in Memory(root).list()}
    assert not set(archived) & gone
    left = as_json(invoke(CliRunner(), project, "review", "--json"))["waiting"]
    assert {r["id"] for r in left} == {"mtabs", "mtern"} - set(kept) - set(archived)


def test_an_unknown_id_among_them_changes_nothing(asked: tuple[Path, Path]) -> None:
    project, user = asked
    invoke(CliRunner(), project, "review")
    before = [(root / "memory.md").read_text() for root in (project, user)]
    result = invoke(CliRunner(), project, "review", "confirm", "mtabs", "mtern", "nope")
    assert result.exit_code != 0 and "nope" in result.output
    assert [(root / "memory.md").read_text() for root in (project, user)] == before


def test_a_listing_writes_nothing_into_a_read_only_layer(asked: tuple[Path, Path]) -> None:
    """`memcli review` records what it showed in each layer it lists, but not in a layer
    the person made read-only (root ignores the mode: the rule is memcli's); there,
    ID@FINGERPRINT confirms."""
    project, user = asked
    user.chmod(0o555)
    try:
        rows = as_json(invoke(CliRunner(), project, "review", "--json"))["waiting"]
    finally:
        user.chmod(0o755)
    assert not (user / ".memcli" / "review-listing.json").exists()
    assert (project / ".memcli" / "review-listing.json").exists()
    mine = next(r for r in rows if r["id"] == "mtabs")
    done = invoke(CliRunner(), project, "review", "confirm", f"mtabs@{mine['fingerprint']}")
    assert done.exit_code == 0, done.output
    assert "mtabs" not in {e.id for e in Memory(user).list()}
