"""Front matter is read with YAML's safe loader only (issue 25): a memory.md from someone
else's repository whose front matter holds a `!!python/...` tag that would run code or
open a file when constructed does nothing; the entries are still read, the front matter
is reported (file and line), and a write is refused with memory.md unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.store.markdown import parse
from memcli.surfaces.cli.app import app

#: tags that, with an unsafe loader, create the file MARKER when the front matter is read
TAGS = [
    "!!python/object/apply:builtins.open [{marker}, 'w']",
    "!!python/object/new:builtins.open [{marker}, 'w']",
    "!!python/object/apply:os.system ['touch {bare}']",
    "!!python/object/apply:subprocess.call [['touch', {marker}]]",
]


def _front(tag: str, marker: Path) -> str:
    filled = tag.format(marker=json.dumps(str(marker)), bare=marker)
    return f"---\nmemcli: 1\nnote: {filled}\n---\n# Memory\n\n## Facts\n- Lives in Lyon <!-- id=mlyon -->\n"


@pytest.mark.parametrize("tag", TAGS)
def test_a_python_tag_in_front_matter_runs_nothing(tag: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = _front(tag, marker)
    doc = parse(text, "memory.md")
    assert not marker.exists(), "the front matter ran code"
    assert [e.text for e in doc.entries()] == ["Lives in Lyon"]  # still read
    assert len(doc.problems) == 1 and "front matter" in str(doc.problems[0])
    assert doc.problems[0].line == 3  # the `note:` line of the file
    assert doc.serialize() == text  # kept byte for byte


@pytest.mark.parametrize("tag", TAGS[:3])
def test_through_the_cli_reads_work_writes_are_refused(
    tag: str, empty_workspace: Path, runner: CliRunner
) -> None:
    marker = empty_workspace.parent / "pwned"
    memory = empty_workspace / "memory.md"
    memory.write_text(_front(tag, marker), encoding="utf-8")
    before = memory.read_bytes()
    listed = runner.invoke(app, ["-w", str(empty_workspace), "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert "Lives in Lyon" in listed.stdout
    added = runner.invoke(app, ["-w", str(empty_workspace), "add", "Works at TechCorp"])
    assert added.exit_code != 0 and "memory.md" in added.stderr
    assert "front matter" in added.stderr
    assert memory.read_bytes() == before
    assert not marker.exists(), "the front matter ran code"
