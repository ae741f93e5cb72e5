"""Bringing memory in and taking it out: import, export."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from memcli.surfaces.cli import render
from memcli.surfaces.cli.base import (
    JsonOpt,
    NoPagerOpt,
    app,
    memory,
    usage_error,
)


class ExportFormat(StrEnum):  # adapters.portability.EXPORT_FORMATS (a test keeps them equal)
    jsonl = "jsonl"
    markdown = "markdown"
    mem0 = "mem0"


class ImportFormat(StrEnum):  # adapters.portability.IMPORT_FORMATS
    auto = "auto"
    jsonl = "jsonl"
    mem0 = "mem0"
    markdown = "markdown"
    chatgpt = "chatgpt"


@app.command(name="export")
def export_(
    fmt: ExportFormat = typer.Option(ExportFormat.jsonl, "--format", "-f", help="Output format."),
    include_archived: bool = typer.Option(False, "--include-archived", help="Also archive.md."),
    no_pager: bool = NoPagerOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Print every entry as JSON Lines, plain Markdown or mem0's export shape (with
    --json, that text as the envelope's `data.content`)."""
    from memcli.adapters.portability import export_entries

    mem = memory()
    entries = mem.entries(include_archived=include_archived)
    content = export_entries(entries, fmt.value, mem.store.files)
    if json_out:
        render.emit_json({"format": fmt.value, "count": len(entries), "content": content})
    else:
        with render.paged(not no_pager):
            render.write(content)


@app.command(name="import")
def import_(
    file: Path = typer.Argument(..., metavar="FILE", help="A JSONL, mem0 JSON or Markdown file."),
    fmt: ImportFormat = typer.Option(
        ImportFormat.auto, "--format", "-f", help="The file's format (auto: by its name and text)."
    ),
    conversation: bool = typer.Option(
        False,
        "--conversation",
        help="FILE is a conversation (OpenAI-style messages, ChatGPT's conversations.json, "
        "LoCoMo JSON): each becomes an ordered log conversations/<name>.md, one entry per turn.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be added."),
    as_mine: bool = typer.Option(
        False,
        "--as-mine",
        help="File them as your own: corrections, pins and importance ≥ 0.9 apply at once "
        "(otherwise they wait for `memcli review`).",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Bring memories in (CLAUDE.md / MEMORY.md, mem0's export, ChatGPT's memory list,
    JSONL): each through `add`; an exact repeat of an entry is left alone. ChatGPT's
    conversations.json (or other chat messages): your statements go through extract, the
    assistant's replies are left out. With --conversation, whole conversations as logs a
    search reads in order."""
    from memcli.adapters.portability import (
        CONVERSATIONS,
        conversation_kind,
        detect_format,
        parse_import,
    )
    from memcli.core.validate import read_input_file

    if conversation and fmt != ImportFormat.auto:
        usage_error("--format, --conversation: give one of them, not both")
    text = read_input_file(file, "FILE")
    if conversation:
        _import_conversation(text, file.name, dry_run, json_out)
        return
    kind = detect_format(text, file.name) if fmt == ImportFormat.auto else fmt.value
    if kind in (CONVERSATIONS, "chatgpt") and conversation_kind(text):
        _extract_conversations(text, file.name, dry_run, json_out)
        return
    items = parse_import(text, file.name, kind, memory().store.files)
    # every format alike (DESIGN §4, docs/getting-started.md): the person's own only when
    # they say so; otherwise their corrections, pins and importance ≥ 0.9 wait for review
    by = "person" if as_mine else "import"
    done = memory().import_items(items, dry_run=dry_run, source=f"import:{file.name}", by=by)
    if json_out:
        render.emit_json(
            {
                "dry_run": dry_run,
                "items": [
                    {
                        "action": action,
                        "id": entry_id,
                        "text": item.text,
                        "type": item.type,
                        "created": item.created,
                        **({"problem": item.problem} if item.problem else {}),
                    }
                    for action, item, entry_id in done
                ],
            }
        )
        return
    for action, item, entry_id in done:
        render.info(f"{action.upper():6} {entry_id or '-':16} [{item.type}] {item.text}")
        if item.problem:
            render.note(f"  {item.problem}")
    added = sum(1 for action, _, _ in done if action == "add")
    render.note(
        f"{added} to add, {len(done) - added} already there"
        + (" (dry run: nothing was written)" if dry_run else "")
    )


def _import_conversation(text: str, name: str, dry_run: bool, json_out: bool) -> None:
    done = memory().import_conversation(text, name, dry_run=dry_run)
    if json_out:
        render.emit_json({"dry_run": dry_run, "conversations": [c.to_dict() for c in done]})
        return
    from memcli.adapters.conversations import shown_title

    for c in done:
        span = f"  {c.first[:10]} .. {c.last[:10]}" if c.first and c.last else ""
        render.info(f"{c.file}  {c.turns} turns{span}  {shown_title(c.title)}")
    turns = sum(c.turns for c in done)
    render.note(
        f"{len(done)} conversation(s), {turns} turns"
        + (" (dry run: nothing was written)" if dry_run else "")
    )


def _extract_conversations(text: str, name: str, dry_run: bool, json_out: bool) -> None:
    """A conversations file without --conversation: say what it holds, then the user's
    statements through extract (as `memcli extract` decides for a transcript)."""
    from memcli.adapters.conversations import parse_conversations
    from memcli.adapters.portability import conversation_kind
    from memcli.services.conversations import extract_conversations, found_in

    conversations = parse_conversations(text, name)
    found = found_in(conversations)
    render.note(
        f"{name}: {conversation_kind(text)}: {found.conversations} conversation(s), "
        f"{found.user_messages} message(s) of yours, {found.assistant_replies} assistant "
        "replies (never remembered); your explicit statements go through extract "
        "(`--conversation` keeps whole conversations as logs instead)"
    )
    decisions = extract_conversations(
        memory().runtime, conversations, source=f"import:{name}", dry_run=dry_run
    )
    if json_out:
        render.emit_json(
            {
                "dry_run": dry_run,
                "found": {"kind": conversation_kind(text), **found.to_dict()},
                "decisions": [d.to_dict() for d in decisions],
            }
        )
        return
    render.decisions(decisions, dry_run)
