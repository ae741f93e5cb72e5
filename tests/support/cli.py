"""The CLI through Typer's CliRunner, and snapshots of a workspace's Markdown files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner


def invoke(runner: CliRunner, ws: Path, *args: str, input: str | bytes | None = None) -> Result:  # noqa: A002
    """`memcli -w WS ARGS...` through the real Typer app."""
    from memcli.surfaces.cli.app import app

    return runner.invoke(app, ["-w", str(ws), *args], input=input)


def as_json(result: Result) -> object:
    """The JSON a successful command printed."""
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every Markdown file under root (derived state aside), by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*.md"))
        if ".memcli" not in p.parts
    }
