"""`memcli doctor` names the hand edits that used to pass silently (issue 37, item 8;
the parser's side: tests/unit/test_hand_edit_warnings.py), with file:line and what to
do, and writes nothing."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner


def test_doctor_names_both_with_their_lines(workspace: Path, runner: CliRunner) -> None:
    from memcli.surfaces.cli.app import app

    memory = workspace / "memory.md"
    lines = memory.read_text().count("\n")
    with memory.open("a") as out:
        out.write("Works at Globex since 2025\n- Uses emoji <!-- id=mx1 kw=emoji\n")
    before = memory.read_bytes()
    done = runner.invoke(app, ["-w", str(workspace), "doctor"])
    assert done.exit_code == 1
    assert f"memory.md:{lines + 1}: this line is plain text, not a list item" in done.stdout
    assert "start it with `- `" in done.stdout
    assert f"memory.md:{lines + 2}: its metadata comment is not closed" in done.stdout
    assert memory.read_bytes() == before
