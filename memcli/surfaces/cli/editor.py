"""The person's own editor: `memcli edit ID` with no options edits the entry's text in
$VISUAL / $EDITOR, and `memcli open` opens memory.md or learnings.md in it."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from memcli.core.errors import MemcliError


def editor_command() -> list[str]:
    """$VISUAL, else $EDITOR, else vi (split as a shell would: `code --wait` works)."""
    raw = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return shlex.split(raw)


def run_editor(path: Path) -> None:
    """Open `path` in the editor and wait; an editor that fails is an error."""
    command = [*editor_command(), str(path)]
    try:
        code = subprocess.call(command)
    except OSError as exc:
        raise MemcliError(
            f"cannot start the editor {command[0]!r} ({exc.strerror})",
            hint="set $EDITOR (or $VISUAL) to an editor on your PATH",
        ) from None
    if code != 0:
        raise MemcliError(f"the editor {command[0]!r} exited with {code}; nothing was changed")


def edit_text(text: str, entry_id: str) -> str | None:
    """The text after the person edited it in their editor; None when unchanged."""
    with tempfile.TemporaryDirectory(prefix="memcli-edit-") as tmp:
        path = Path(tmp) / f"{entry_id}.md"
        path.write_text(text + "\n", encoding="utf-8")
        run_editor(path)
        edited = path.read_text(encoding="utf-8").rstrip("\n")
    if edited == text:
        return None
    if not edited.strip():
        raise MemcliError(
            f"the text of {entry_id} came back empty; nothing was changed",
            hint=f"`memcli forget {entry_id}` moves an entry to archive.md",
        )
    return edited
