"""Bringing memory in and taking it out: import, export."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from memcli.surfaces.cli import render
from memcli.surfaces.cli.base import (
    JsonOpt,
    app,
    memory,
    usage_error,
)


@app.command(name="export")
def export_(
    fmt: str = typer.Option(
        "jsonl", "--format", "-f", metavar="jsonl|markdown|mem0", help="Output format."
    ),
    include_archived: bool = typer.Option(False, "--include-archived", help="Also archive.md."),
) -> None:
    """Print every entry as JSON Lines, plain Markdown or mem0's export shape."""
    from memcli.adapters.portability import EXPORT_FORMATS, export_entries

    if fmt not in EXPORT_FORMATS:
        usage_error(f"--format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")
    entries = memory().entries(include_archived=include_archived)
    sys.stdout.write(export_entries(entries, fmt))


@app.command(name="import")
def import_(
    file: Path = typer.Argument(..., metavar="FILE", help="A JSONL, mem0 JSON or Markdown file."),
    fmt: str = typer.Option(
        "auto",
        "--format",
        "-f",
        metavar="auto|jsonl|mem0|markdown|chatgpt",
        help="The file's format.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be added."),
    json_out: bool = JsonOpt,
) -> None:
    """Bring memories in (CLAUDE.md / MEMORY.md, mem0's export, ChatGPT's memory list,
    JSONL): each through `add`; an exact repeat of an entry is left alone."""
    from memcli.adapters.portability import IMPORT_FORMATS, detect_format, parse_import
    from memcli.core.validate import read_input_file

    if fmt not in IMPORT_FORMATS:
        usage_error(f"--format {fmt!r}: use one of {', '.join(IMPORT_FORMATS)}")
    text = read_input_file(file, "FILE")
    fmt = detect_format(text, file.name) if fmt == "auto" else fmt
    items = parse_import(text, file.name, fmt)
    by = "agent" if fmt == "mem0" else "person"  # mem0's memories were machine-extracted
    done = memory().import_items(items, dry_run=dry_run, source=f"import:{file.name}", by=by)
    if json_out:
        render.emit_json(
            {
                "dry_run": dry_run,
                "items": [
                    {"action": action, "id": entry_id, "text": item.text, "type": item.type}
                    for action, item, entry_id in done
                ],
            }
        )
        return
    for action, item, entry_id in done:
        render.info(f"{action.upper():6} {entry_id or '-':16} [{item.type}] {item.text}")
    added = sum(1 for action, _, _ in done if action == "add")
    render.note(
        f"{added} to add, {len(done) - added} already there"
        + (" (dry run: nothing was written)" if dry_run else "")
    )
