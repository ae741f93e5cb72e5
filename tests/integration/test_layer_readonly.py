"""A layer the person made read-only gets no write from a project's commands (the rule
the watcher keeps, memcli.store.readonly.read_only: by mode, as root too).
Run as root, a project's `memcli search` wrote the user layer's index, embedding cache
and access counts into its read-only `.memcli` folder (found by helper "breaker"); now
the layer's commands ask memcli.store.readonly.read_only too: its index is read in place
when current, else built in a private folder of the user's cache (services.
readonly_index)."""

from __future__ import annotations

import json
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


def _state(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` with its size and mtime (a rewrite shows, not only a new
    name)."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    }


def _hits(project: Path, query: str, *more: str) -> list[tuple[str, str, float]]:
    found = invoke(CliRunner(), project, "search", query, "--json", *more)
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["data"]["hits"]
    return [(h["layer"], h["entry"]["id"], round(h["score"], 6)) for h in hits]


@pytest.mark.slow  # the real model, the real index of each path
def test_a_read_only_layer_is_searched_as_a_writable_one_and_gets_no_write(
    tmp_path: Path,
    exported,  # noqa: ANN001 - the bundled model, exported once
) -> None:
    """Searched as root or not: its index read in place while current, a private one
    built once its Markdown moved on; the hits equal the writable layer's, and no file
    of the layer is written or rewritten (index, cache, locks, access counts)."""
    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    project = tmp_path / "project"
    for root in (user, project):
        init_workspace(root)
    memory = user / "memory.md"
    lines = [
        "- Likes dark mode in the editor <!-- id=mdark -->",
        "- Prefers tabs over spaces in Go code <!-- id=mtabs -->",
        "- Drinks tea while reviewing code <!-- id=mtea -->",
    ]
    memory.write_text(
        memory.read_text().replace("## Preferences\n", "## Preferences\n" + "\n".join(lines) + "\n")
    )
    queries = ("dark editor theme", "code review habits")
    writable = [_hits(project, q, "--no-touch") for q in queries]  # indexes the layer
    assert any(layer == "user" for hits in writable for layer, _, _ in hits)
    before = _state(user)
    for folder in (user / ".memcli", user):
        folder.chmod(0o555)
    try:
        in_place = [_hits(project, q) for q in queries]  # touches: not counted there
        assert _state(user) == before
        # the Markdown moves on (the person's editor, as root may): a private index
        memory.write_text(
            memory.read_text().replace(
                "## Preferences\n",
                "## Preferences\n- Keeps a dark terminal too <!-- id=mterm -->\n",
            )
        )
        before = _state(user)
        shadowed = [_hits(project, q) for q in queries]
        assert _state(user) == before
    finally:
        for folder in (user, user / ".memcli"):
            folder.chmod(0o755)
    assert in_place == writable
    assert any(i == "mterm" for hits in shadowed for _, i, _ in hits)
    assert shadowed == [_hits(project, q, "--no-touch") for q in queries]  # writable again
