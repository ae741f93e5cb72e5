"""Entries one at a time: init, add, list, get, edit, forget, open, restore, stats."""

from __future__ import annotations

from typing import Any

import typer

from memcli.core.errors import MemcliError
from memcli.core.requests import (
    AddRequest,
    GetRequest,
    ListRequest,
)
from memcli.surfaces import operations
from memcli.surfaces.cli import complete, progress, render, served
from memcli.surfaces.cli.args import check_new_type, resolve_list
from memcli.surfaces.cli.base import (
    AllowSecretOpt,
    ConfidenceOpt,
    ImportanceOpt,
    JsonOpt,
    KeywordFilterOpt,
    KeywordsOpt,
    ListSort,
    NoPagerOpt,
    SinceOpt,
    SourceOpt,
    TypeFilterOpt,
    UntilOpt,
    app,
    env,
    memory,
    show,
    stdin_or,
    usage_error,
)


@app.command()
def init(
    path: str | None = typer.Argument(
        None,
        metavar="PATH",
        help="Where to create it (default: the workspace other commands use here, "
        "~/.local/share/memcli unless MEMCLI_WORKSPACE is set or this is a workspace).",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Create a workspace with memory.md, learnings.md and a .gitignore."""
    from memcli.services.memory import Memory
    from memcli.store.workspace import resolve_workspace

    mem = Memory(env().root(path))
    created = mem.init()
    with progress.model_steps() as report:  # the one-time ONNX export, now rather than later
        mem.runtime.prepare_model(report)
    if json_out:
        render.emit_json({"workspace": str(mem.root), "created": [str(p) for p in created]})
        return
    render.info(f"workspace {mem.root}: created {len(created)} file(s)")
    from memcli.services.health import language_notice

    said = language_notice(mem.runtime)  # a workspace of notes the model does not read
    if said:
        render.note(said)
    try:
        default = resolve_workspace(None)
    except MemcliError:
        default = None
    if default != mem.root:
        import shlex

        quoted = shlex.quote(str(mem.root))
        render.note(
            f"other commands run here use {default}; to use this workspace from anywhere, "
            f"`export MEMCLI_WORKSPACE={quoted}` (or pass -w {quoted})"
        )


@app.command()
def add(
    text: str = typer.Argument(
        ..., metavar="TEXT", help="The entry's text, or - to read it from stdin."
    ),
    type_: str = typer.Option(
        "fact",
        "--type",
        "-t",
        metavar="TYPE",
        help="preference, fact, pattern, reflection, correction, skill, lesson, or the type "
        "of a section of yours.",
        autocompletion=complete.types,
    ),
    new_type: bool = typer.Option(
        False, "--new-type", help="--type names a new type: start a `##` section for it."
    ),
    importance: float | None = ImportanceOpt,
    confidence: float | None = ConfidenceOpt,
    keywords: list[str] | None = KeywordsOpt,
    source: str | None = SourceOpt,
    pin: bool = typer.Option(
        False,
        "--pin",
        help="Put this entry into every inject block (first), whatever the prompt; never "
        "forget or compress it.",
    ),
    allow_secret: bool = AllowSecretOpt,
    to: str | None = typer.Option(
        None,
        "--to",
        metavar="LAYER",
        help="The layer to write to: user (your own workspace) or project (this one); "
        "default: this one, or yours for the types [layers] user_types names.",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Add an entry (an exact duplicate updates the existing entry instead)."""
    mem = memory()
    request = AddRequest(
        stdin_or(text),
        type=check_new_type(type_, mem, new_type),
        importance=importance,
        confidence=confidence,
        keywords=None if keywords is None else tuple(keywords),
        source=source,
        pin=pin,
        allow_secret=allow_secret,
        by="person",
    )
    dest = operations.write_target(mem, to, request.type)
    result = dest.add(request)
    where = result.entry.file if dest.root == mem.root else f"{result.entry.file} of {dest.root}"
    layer = operations.layer_name(mem, dest)  # named when the workspace reads several
    if json_out:
        render.emit_json({**result.to_dict(), **({"layer": layer} if layer else {})})
    elif result.action == "added":
        named = f", {layer} layer" if layer else ""
        pinned = "; pinned: goes into every inject block" if result.entry.pinned else ""
        render.info(f"added {result.entry.id} to {where} ({result.entry.type}{named}){pinned}")
    else:
        where += f" ({layer} layer)" if layer else ""
        render.info(f"updated {result.entry.id} in {where}: the same text was already there")


@app.command(name="list")
def list_(
    type_: list[str] | None = TypeFilterOpt,
    since: str | None = SinceOpt,
    until: str | None = UntilOpt,
    keyword: list[str] | None = KeywordFilterOpt,
    include_archived: bool = typer.Option(False, "--include-archived", help="Also archive.md."),
    pinned: bool = typer.Option(False, "--pinned", help="Only pinned entries."),
    sort: ListSort = typer.Option(
        ListSort.file, "--sort", help="file order, or newest created/updated, or importance."
    ),
    limit: int | None = typer.Option(
        None, "--limit", "-n", min=1, metavar="N", help="At most this many entries."
    ),
    no_pager: bool = NoPagerOpt,
    json_out: bool = JsonOpt,
) -> None:
    """List entries, optionally filtered."""
    mem = memory()
    request = ListRequest(
        types=tuple(type_ or ()),
        since=since,
        until=until,
        keywords=tuple(keyword or ()),
        include_archived=include_archived,
        pinned=pinned,
        sort=sort.value,
        limit=limit,
    )
    entries = operations.list_entries(mem, resolve_list(request, mem, env().now()))
    layers = None
    if entries and hasattr(entries[0], "layer"):  # several layers: each says its own
        layers = [e.layer for e in entries]
        entries = [e.entry for e in entries]
    if json_out:
        rows = [e.to_dict() for e in entries]
        if layers is not None:
            rows = [{**row, "layer": layer} for row, layer in zip(rows, layers, strict=True)]
        render.emit_json({"entries": rows})
    else:
        with render.paged(not no_pager):
            render.entries_table(entries, layers=layers)


@app.command()
def get(
    entry_id: str = typer.Argument(
        ..., metavar="ID", help="The entry's id.", autocompletion=complete.ids
    ),
    no_pager: bool = NoPagerOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Show one entry in full, with metadata and access statistics."""
    show(served.answer(memory(), GetRequest(entry_id)), json_out, pager=not no_pager)


@app.command()
def edit(
    entry_id: str = typer.Argument(
        ..., metavar="ID", help="The entry's id.", autocompletion=complete.ids
    ),
    text: str | None = typer.Option(
        None, "--text", metavar="TEXT", help="New text (- reads stdin)."
    ),
    importance: float | None = ImportanceOpt,
    confidence: float | None = ConfidenceOpt,
    keywords: list[str] | None = KeywordsOpt,
    source: str | None = SourceOpt,
    pin: bool | None = typer.Option(
        None,
        "--pin/--unpin",
        help="Pinned: in every inject block (first), never forgotten or compressed.",
    ),
    allow_secret: bool = AllowSecretOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Change an entry's text and/or metadata; with no options, edit its text in
    $VISUAL / $EDITOR."""
    if not allow_secret and all(
        v is None for v in (text, importance, confidence, keywords, source, pin)
    ):
        from memcli.surfaces.cli.editor import edit_text

        own = memory()
        mem = operations.holder(own, entry_id)  # the layer holding it
        current = mem.get(entry_id).entry
        text = edit_text(current.text, current.id)
        if text is None:
            render.note(f"{current.id}: the text is unchanged; nothing was written")
            return
        entry = mem.edit(current.id, text=text, by="person")
        _edited(entry, mem if mem is not own else None, json_out)
        return
    mem = memory()
    target = operations.holder(mem, entry_id)  # the layer holding it (services.layers)
    entry = target.edit(
        entry_id,
        text=stdin_or(text) if text is not None else None,
        importance=importance,
        confidence=confidence,
        keywords=keywords,
        source=source,
        pin=pin,
        allow_secret=allow_secret,
        by="person",  # confirmed by a person: no longer fades with age
    )
    _edited(entry, target if target is not mem else None, json_out)


def _edited(entry: Any, layer: Any, json_out: bool) -> None:
    """Say what `edit` wrote (`layer`: the other layer's Memory it went to, or None)."""
    if json_out:
        render.emit_json({"entry": entry.to_dict()})
    else:
        where = "" if layer is None else f" of {layer.root}"
        render.info(f"edited {entry.id} in {entry.file}{where}")


@app.command()
def forget(
    entry_id: str = typer.Argument(
        ..., metavar="ID", help="The entry's id.", autocompletion=complete.ids
    ),
    reason: str = typer.Option(
        "forgotten", "--reason", metavar="TEXT", help="Why, kept in archive.md."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Move an entry to archive.md (restore brings it back)."""
    mem = memory()
    target = operations.holder(mem, entry_id)  # the layer holding it (services.layers)
    entry = target.forget(entry_id, reason=reason, by="person").entry  # at once: yours
    if json_out:
        render.emit_json({"entry": entry.to_dict(), "reason": reason})
    else:
        where = "" if target is mem else f" of {target.root}"
        render.info(f"moved {entry.id} from {entry.file} to archive.md{where}")


@app.command(name="open")
def open_(
    file: str = typer.Argument(
        "", metavar="[FILE]", help="memory.md (default), learnings.md, a file [files] adds, "
        "or archive.md.", show_default=False
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Open a memory file of the workspace in $VISUAL / $EDITOR."""
    from memcli.store.config_files import load_registry
    from memcli.surfaces.cli.editor import run_editor

    root = env().root()
    files = load_registry(root)
    allowed = (*files.names, files.archive)
    file = file or files.primary
    if file not in allowed:
        usage_error(f"FILE: {file!r} is not one of {', '.join(allowed)}")
    path = root / file
    if not path.exists():
        raise MemcliError(f"{path}: no such file", hint="`memcli init` creates the workspace")
    run_editor(path)
    if json_out:
        render.emit_json({"file": str(path)})


@app.command()
def restore(
    entry_id: str = typer.Argument(
        ..., metavar="ID", help="The entry's id.", autocompletion=complete.archived_ids
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Bring an entry back: from archive.md, or one deleted (by hand, by a stale editor
    save) whose text the history holds, with its last text."""
    entry = memory().restore(entry_id)
    if json_out:
        render.emit_json({"entry": entry.to_dict()})
    else:
        render.info(f"restored {entry.id} to {entry.file} ({entry.type})")


@app.command()
def stats(
    days: float = typer.Option(
        30.0,
        "--days",
        min=0.0,
        metavar="N",
        help="Count the entries no search or inject returned in the last N days.",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Counts by type and file, and how the memory is used (importance, keywords, the
    entries unused lately, the most used; a running watcher's latency)."""
    from memcli.surfaces.daemon.autostart import answers

    mem = memory()
    data = mem.stats(days=days)
    if answers(str(mem.root)):  # a watcher serves it: its search and inject latency
        from memcli.surfaces.daemon.service import query_status

        status = query_status(mem.root) or {}
        data["watcher"] = {"pid": status.get("pid"), "latency": status.get("latency", {})}
    if json_out:
        render.emit_json(data)
        return
    used = {u["id"]: f"{u['count']}× {' '.join(u['text'].split())[:70]}" for u in data["most_used"]}
    unused = data["unused"]
    unused = {**unused, "ids": ", ".join(unused["ids"]) + (" …" if unused["count"] > 10 else "")}
    render.key_values({**data, "most_used": used, "unused": unused}.items())
