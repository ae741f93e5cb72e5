"""The CLI through its real entry point (in this process, output captured as Typer's
CliRunner captures it), its --json envelope, and snapshots of a workspace's Markdown
files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result


def invoke(runner: CliRunner, ws: Path, *args: str, input: str | bytes | None = None) -> Result:  # noqa: A002
    """`memcli -w WS ARGS...` through the console script's entry point
    (memcli.surfaces.cli.fastpath.run: the hooks, the daemon's client, the Typer-free
    search, the Typer app). An exception that is not a deliberate exit propagates: a
    crash fails the test instead of passing for exit code 1."""
    from memcli.surfaces.cli import fastpath

    with runner.isolation(input=input) as streams:
        try:
            code = fastpath.run(["-w", str(ws), *args])
        except SystemExit as exc:  # a deliberate exit
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr, output = (stream.getvalue() for stream in streams)
    return Result(
        runner=runner,
        stdout_bytes=stdout,
        stderr_bytes=stderr,
        output_bytes=output,
        return_value=code,
        exit_code=code,
        exception=SystemExit(code) if code else None,  # as CliRunner: an exit, no crash
        exc_info=None,
    )


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
