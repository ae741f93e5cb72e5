"""The CLI through Typer's CliRunner, its --json envelope, and snapshots of a
workspace's Markdown files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import Result
from typer.testing import CliRunner


def invoke(runner: CliRunner, ws: Path, *args: str, input: str | bytes | None = None) -> Result:  # noqa: A002
    """`memcli -w WS ARGS...` through the real Typer app."""
    from memcli.surfaces.cli.app import app

    return runner.invoke(app, ["-w", str(ws), *args], input=input)


def envelope(text: str) -> Any:
    """The `data` of a successful command's --json output, the envelope's shape checked:
    `{"ok": true, "command": ..., "data": ...}`."""
    doc = json.loads(text)
    assert isinstance(doc, dict) and doc.get("ok") is True, doc
    assert set(doc) == {"ok", "command", "data"} and isinstance(doc["command"], str), doc
    return doc["data"]


def failure(text: str) -> dict[str, Any]:
    """The `error` of a failed command's --json output, the envelope's shape checked:
    `{"ok": false, "command": ..., "error": {"code", "message", "hint"}}` (and `data`
    when the command has some)."""
    doc = json.loads(text)
    assert isinstance(doc, dict) and doc.get("ok") is False, doc
    assert set(doc) - {"data"} == {"ok", "command", "error"}, doc
    assert set(doc["error"]) == {"code", "message", "hint"}, doc
    return doc["error"]


def as_json(result: Result) -> Any:
    """The data a successful command printed with --json."""
    assert result.exit_code == 0, result.output
    return envelope(result.stdout)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every Markdown file under root (derived state aside), by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*.md"))
        if ".memcli" not in p.parts
    }
