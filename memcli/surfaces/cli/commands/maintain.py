"""Maintenance: extract, compress, reflect, log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from memcli.surfaces import operations
from memcli.surfaces.cli import render
from memcli.surfaces.cli.base import (
    AllowSecretOpt,
    ImportanceOpt,
    JsonOpt,
    KeywordsOpt,
    app,
    confirmed,
    memory,
    stdin_or,
)


@app.command()
def extract(
    messages: Path = typer.Option(
        ..., "--messages", metavar="FILE", help="Transcript: JSON list or JSONL (- reads stdin)."
    ),
    source: str | None = typer.Option(
        None, "--source", metavar="ID", help="Conversation id (default: file name)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the decisions, write nothing."),
    json_out: bool = JsonOpt,
) -> None:
    """Remember the explicit statements of a conversation (ADD / UPDATE / NOOP each)."""
    from memcli.adapters.messages import load_messages

    default_source = "stdin" if str(messages) == "-" else messages.stem
    decisions = operations.extract(
        memory(), load_messages(messages), source=source or default_source, dry_run=dry_run
    )
    if json_out:
        render.emit_json({"decisions": [d.to_dict() for d in decisions]})
        return
    render.decisions(decisions, dry_run)


@app.command()
def compress(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the plan as a diff only."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Apply without asking."),
    target_tokens: int | None = typer.Option(
        None,
        "--target-tokens",
        min=1,
        metavar="N",
        help="Archive more, least retained first, until the curated files fit in N tokens.",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Merge duplicates, drop superseded and faded entries, consolidate old ones.

    Shows the plan as a unified diff; applies it with --yes or after a prompt on a
    terminal. Everything removed goes to archive.md (`memcli restore ID`)."""
    mem = memory()
    plan = mem.plan_compress(target_tokens=target_tokens)
    layer = operations.layer_name(mem, mem)  # named when the workspace reads several
    what = f"compress of the {layer} layer" if layer else "compress"
    _show_plan(mem, plan, json_out, what, layer)
    if plan.is_empty or dry_run:
        if json_out:
            render.emit_json({**plan.to_dict(), "diff": mem.diff(plan), "applied": None})
        elif dry_run:
            render.note("dry run: nothing was written")
        return
    _confirm_and_apply(mem, plan, yes, json_out, what)


@app.command()
def reflect(
    force: bool = typer.Option(False, "--force", help="Reflect even if the trigger is not met."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the insights, write nothing."),
    json_out: bool = JsonOpt,
) -> None:
    """Write insights (reflections / lessons citing their evidence) about recent entries."""
    mem = memory()
    trigger, plan = mem.plan_reflect(force=force)
    applied = None if dry_run or plan.is_empty else mem.apply(plan)
    if json_out:
        data: dict[str, Any] = {"trigger": trigger.to_dict(), **plan.to_dict()}
        data["applied"] = applied.to_dict() if applied else None
        render.emit_json(data)
        return
    if not trigger.due and not force:
        render.info(f"no reflection due: {trigger.reason} (--force to reflect anyway)")
        return
    if plan.is_empty:
        render.info("no new themes to reflect on")
    for write in plan.writes:
        e = write.entry
        render.info(f"{e.type} {e.id} ({e.file}, evidence {e.source}): {e.text}")
    for note in plan.notes:
        render.note(note)
    if dry_run:
        render.note("dry run: nothing was written")


@app.command()
def log(
    text: str = typer.Argument(..., metavar="TEXT", help="What happened, or - for stdin."),
    importance: float | None = ImportanceOpt,
    keywords: list[str] | None = KeywordsOpt,
    allow_secret: bool = AllowSecretOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Append a timestamped note to today's episode file (episodes/YYYY-MM-DD.md)."""
    entry = memory().log(
        stdin_or(text), importance=importance, keywords=keywords, allow_secret=allow_secret
    )
    if json_out:
        render.emit_json({"entry": entry.to_dict()})
    else:
        render.info(f"logged {entry.id} in {entry.file}")


def _show_plan(mem: Any, plan: Any, json_out: bool, what: str, layer: str | None) -> None:
    """The plan's diff and one line per action, naming `layer` when it is not None (a
    workspace that reads several: compress works within its own)."""
    if json_out:
        return
    tag = f"({layer}) " if layer else ""
    if plan.is_empty:
        render.info(f"{what}: nothing to do")
    else:
        render.diff(mem.diff(plan))
        for action in plan.actions:
            render.info(f"{action.kind:12} {tag}{action.summary}")
    for note in plan.notes:
        render.note(note)


def _confirm_and_apply(mem: Any, plan: Any, yes: bool, json_out: bool, what: str) -> None:
    if not confirmed(yes, json_out, what, f"apply these {len(plan.actions)} change(s)?"):
        return
    applied = mem.apply(plan)
    if json_out:
        render.emit_json({**plan.to_dict(), "applied": applied.to_dict()})
        return
    render.info(f"{what}: wrote {len(applied.written)} entr(ies), archived {len(applied.archived)}")
    if applied.skipped:
        render.note(f"left alone (changed meanwhile): {', '.join(applied.skipped)}")
