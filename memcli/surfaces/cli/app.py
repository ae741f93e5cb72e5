"""The Typer app: parse options into a request, make one library call, render the result.

Errors become exit codes and messages in memcli.surfaces.guard (`_Group.invoke` asks
it); the commands a watch daemon serves (search, inject, get) run through
memcli.surfaces.cli.served, as the quick path and the daemon do.
"""

from __future__ import annotations

import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from memcli.core.errors import ExitCode, MemcliError
from memcli.core.requests import (
    FORMATS,
    MODES,
    AddRequest,
    GetRequest,
    InjectRequest,
    ListRequest,
    SearchQuery,
)
from memcli.surfaces import guard, operations
from memcli.surfaces.cli import render, served
from memcli.surfaces.cli.args import check_new_type, resolve_list

__all__ = ["ExitCode", "app", "main"]


class Mode(StrEnum):  # core.requests.MODES: choices in --help, exit code 2 for others
    hybrid = "hybrid"
    semantic = "semantic"
    keyword = "keyword"


class Format(StrEnum):  # core.requests.FORMATS
    markdown = "markdown"
    xml = "xml"
    json = "json"


assert tuple(Mode) == MODES and tuple(Format) == FORMATS


class _State:
    workspace: str | None = None
    traceback: bool = False


state = _State()


class _Group(TyperGroup):
    """Domain errors and Ctrl-C become messages and exit codes (memcli.surfaces.guard)."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (MemcliError, KeyboardInterrupt, BrokenPipeError, UnicodeError) as exc:
            code, message = guard.outcome(exc) or (ExitCode.ERROR, str(exc))
            if message is not None:
                if state.traceback:
                    raise
                render.error(message)
            raise typer.Exit(code) from None


# Typer prints `NAME <str>` for every argument: its metavar and help say it better
if hasattr(typer.core.TyperArgument, "display_type_rich"):
    typer.core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]

app = typer.Typer(
    cls=_Group,
    name="memcli",
    help="Long-term memory for people and LLM agents, kept in plain Markdown.",
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


JsonOpt = typer.Option(False, "--json", help="Machine-readable JSON on stdout.")


class ListSort(StrEnum):
    """Orders of `memcli list`."""

    file = "file"
    created = "created"
    updated = "updated"
    importance = "importance"


def _memory() -> Any:
    from memcli.services.memory import shared_memory

    return shared_memory(state.workspace)


def usage_error(message: str) -> None:
    """Report a usage mistake the option parser cannot see; exit code 2."""
    render.error(message)
    raise typer.Exit(ExitCode.USAGE)


def _stdin_or(text: str) -> str:
    from memcli.core.validate import read_stdin

    return read_stdin() if text == "-" else text


KeywordsOpt = typer.Option(
    None, "--keywords", "-k", metavar="WORD,...", help="Keywords, comma-separated."
)
SourceOpt = typer.Option(None, "--source", metavar="ID", help="Conversation or session id.")
TypeFilterOpt = typer.Option(
    None,
    "--type",
    "-t",
    metavar="TYPE",
    help="Only this type (repeat it, or commas: skill,lesson).",
)
KeywordFilterOpt = typer.Option(
    None, "--keyword", "-k", metavar="WORD", help="Has this keyword (repeat: all of them)."
)
_WHEN = "YYYY-MM-DD, an ISO time, today, yesterday, 7d or 2w"
SinceOpt = typer.Option(None, "--since", metavar="WHEN", help=f"Created on or after: {_WHEN}.")
UntilOpt = typer.Option(None, "--until", metavar="WHEN", help=f"Created on or before: {_WHEN}.")
ImportanceOpt = typer.Option(
    None,
    "--importance",
    "-i",
    min=0.0,
    max=1.0,
    metavar="0..1",
    help="How much it matters (default 0.5).",
)
ConfidenceOpt = typer.Option(
    None,
    "--confidence",
    "-c",
    min=0.0,
    max=1.0,
    metavar="0..1",
    help="How sure it is (default 1).",
)
AllowSecretOpt = typer.Option(
    False,
    "--allow-secret",
    help="Store text that looks like a credential (marked secret=ok: inject may use it).",
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("memcli")
        except PackageNotFoundError:  # run from a source tree that was never installed
            number = "unknown"
        sys.stdout.write(f"memcli {number}\n")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def main_options(
    workspace: str | None = typer.Option(
        None,
        "--workspace",
        "-w",
        metavar="PATH",
        help="Workspace directory (default: $MEMCLI_WORKSPACE, the workspace this directory "
        "is in, else ~/.local/share/memcli).",
    ),
    traceback: bool = typer.Option(False, "--traceback", help="Show the full stack on errors."),
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        expose_value=False,
        callback=_print_version,
        help="Print memcli's version and exit.",
    ),
) -> None:
    """memcli: long-term memory in memory.md and learnings.md."""
    state.workspace = workspace
    state.traceback = traceback


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

    mem = Memory(resolve_workspace(path or state.workspace))
    created = mem.init()
    if json_out:
        render.emit_json({"workspace": str(mem.root), "created": [str(p) for p in created]})
        return
    render.info(f"workspace {mem.root}: created {len(created)} file(s)")
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
    ),
    new_type: bool = typer.Option(
        False, "--new-type", help="--type names a new type: start a `##` section for it."
    ),
    importance: float | None = ImportanceOpt,
    confidence: float | None = ConfidenceOpt,
    keywords: list[str] | None = KeywordsOpt,
    source: str | None = SourceOpt,
    pin: bool = typer.Option(False, "--pin", help="Never forget or compress this entry."),
    allow_secret: bool = AllowSecretOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Add an entry (an exact duplicate updates the existing entry instead)."""
    mem = _memory()
    request = AddRequest(
        _stdin_or(text),
        type=check_new_type(type_, mem, new_type),
        importance=importance,
        confidence=confidence,
        keywords=None if keywords is None else tuple(keywords),
        source=source,
        pin=pin,
        allow_secret=allow_secret,
        by="person",
    )
    result = operations.add(mem, request)
    if json_out:
        render.emit_json(result.to_dict())
    elif result.action == "added":
        render.info(f"added {result.entry.id} to {result.entry.file} ({result.entry.type})")
    else:
        render.info(
            f"updated {result.entry.id} in {result.entry.file}: the same text was already there"
        )


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
    json_out: bool = JsonOpt,
) -> None:
    """List entries, optionally filtered."""
    mem = _memory()
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
    entries = operations.list_entries(mem, resolve_list(request, mem))
    if json_out:
        render.emit_json([e.to_dict() for e in entries])
    else:
        render.entries_table(entries)


@app.command()
def get(
    entry_id: str = typer.Argument(..., metavar="ID", help="The entry's id."),
    json_out: bool = JsonOpt,
) -> None:
    """Show one entry in full, with metadata and access statistics."""
    _show(served.answer(_memory(), GetRequest(entry_id)), json_out)


@app.command()
def edit(
    entry_id: str = typer.Argument(..., metavar="ID", help="The entry's id."),
    text: str | None = typer.Option(
        None, "--text", metavar="TEXT", help="New text (- reads stdin)."
    ),
    importance: float | None = ImportanceOpt,
    confidence: float | None = ConfidenceOpt,
    keywords: list[str] | None = KeywordsOpt,
    source: str | None = SourceOpt,
    pin: bool | None = typer.Option(None, "--pin/--unpin", help="Never forget or compress it."),
    allow_secret: bool = AllowSecretOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Change an entry's text and/or metadata; with no options, edit its text in
    $VISUAL / $EDITOR."""
    if not allow_secret and all(
        v is None for v in (text, importance, confidence, keywords, source, pin)
    ):
        from memcli.surfaces.cli.editor import edit_text

        mem = _memory()
        current = mem.get(entry_id).entry
        text = edit_text(current.text, current.id)
        if text is None:
            render.note(f"{current.id}: the text is unchanged; nothing was written")
            return
        entry = mem.edit(current.id, text=text, by="person")
        if json_out:
            render.emit_json(entry.to_dict())
        else:
            render.info(f"edited {entry.id} in {entry.file}")
        return
    entry = _memory().edit(
        entry_id,
        text=_stdin_or(text) if text is not None else None,
        importance=importance,
        confidence=confidence,
        keywords=keywords,
        source=source,
        pin=pin,
        allow_secret=allow_secret,
        by="person",  # confirmed by a person: no longer fades with age (DESIGN §5.1)
    )
    if json_out:
        render.emit_json(entry.to_dict())
    else:
        render.info(f"edited {entry.id} in {entry.file}")


@app.command()
def forget(
    entry_id: str = typer.Argument(..., metavar="ID", help="The entry's id."),
    reason: str = typer.Option(
        "forgotten", "--reason", metavar="TEXT", help="Why, kept in archive.md."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Move an entry to archive.md (restore brings it back)."""
    entry = _memory().forget(entry_id, reason=reason)
    if json_out:
        render.emit_json({"forgotten": entry.to_dict()})
    else:
        render.info(f"moved {entry.id} from {entry.file} to archive.md")


@app.command(name="open")
def open_(
    file: str = typer.Argument(
        "memory.md", metavar="[FILE]", help="memory.md (default), learnings.md or archive.md."
    ),
) -> None:
    """Open a memory file of the workspace in $VISUAL / $EDITOR."""
    from memcli.store.workspace import resolve_workspace
    from memcli.surfaces.cli.editor import run_editor

    allowed = ("memory.md", "learnings.md", "archive.md")
    if file not in allowed:
        usage_error(f"FILE {file!r}: one of {', '.join(allowed)}")
    root = resolve_workspace(state.workspace)
    path = root / file
    if not path.exists():
        raise MemcliError(f"{path}: no such file", hint="`memcli init` creates the workspace")
    run_editor(path)


@app.command()
def restore(
    entry_id: str = typer.Argument(..., metavar="ID", help="The archived entry's id."),
    json_out: bool = JsonOpt,
) -> None:
    """Bring an entry back from archive.md."""
    entry = _memory().restore(entry_id)
    if json_out:
        render.emit_json({"restored": entry.to_dict()})
    else:
        render.info(f"restored {entry.id} to {entry.file} ({entry.type})")


@app.command()
def stats(json_out: bool = JsonOpt) -> None:
    """Counts by type and file."""
    data = _memory().stats()
    if json_out:
        render.emit_json(data)
    else:
        render.key_values(data.items())


@app.command()
def search(
    query: str = typer.Argument(..., metavar="QUERY", help="What to look for (- reads stdin)."),
    mode: Mode | None = typer.Option(
        None,
        "--mode",
        "-m",
        help="Which relevance: both, embeddings only or BM25 only (default hybrid).",
    ),
    type_: list[str] | None = TypeFilterOpt,
    keyword: list[str] | None = KeywordFilterOpt,
    since: str | None = SinceOpt,
    until: str | None = UntilOpt,
    limit: int | None = typer.Option(
        None, "--limit", "-n", min=1, metavar="N", help="At most this many hits (default 10)."
    ),
    min_score: float | None = typer.Option(
        None, "--min-score", metavar="SCORE", help="Drop hits scoring less."
    ),
    explain: bool = typer.Option(False, "--explain", help="Show every score component."),
    include_archived: bool = typer.Option(False, "--include-archived", help="Also archive.md."),
    no_touch: bool = typer.Option(False, "--no-touch", help="Do not count this as an access."),
    json_out: bool = JsonOpt,
) -> None:
    """Search memories: semantic + keyword relevance, recency, importance."""
    mem = _memory()
    request = SearchQuery(
        _stdin_or(query),
        mode=mode.value if mode else None,
        types=tuple(type_ or ()),
        keywords=tuple(keyword or ()),
        since=since,
        until=until,
        limit=limit,
        min_score=min_score,
        include_archived=include_archived,
        touch=not no_touch,
    )
    data = served.answer(mem, request, progress=render.progress_callback("embedding"))
    _show(data, json_out, explain)


def _show(data: dict[str, Any], json_out: bool, explain: bool = False) -> None:
    """Print a served command's answer (memcli.surfaces.cli.served.show)."""
    code = served.show(data, {"json": json_out, "explain": explain})
    if code:
        raise typer.Exit(code)


@app.command()
def index(
    rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild from the Markdown alone."),
    json_out: bool = JsonOpt,
) -> None:
    """Bring the search index up to date; prints what changed."""
    report = _memory().index(rebuild=rebuild, progress=render.progress_callback("embedding"))
    if json_out:
        render.emit_json(report.to_dict())
    else:
        render.info(
            f"index: {report.added} added, {report.changed} changed, {report.removed} removed, "
            f"{report.total} entries ({report.embedded} embedded"
            + (", rebuilt" if report.rebuilt else "")
            + ")"
        )


@app.command()
def inject(
    source: str | None = typer.Argument(None, metavar="-", help="- reads the context from stdin."),
    query: str | None = typer.Option(None, "--query", "-q", metavar="TEXT", help="Context text."),
    context_file: Path | None = typer.Option(
        None, "--context-file", metavar="FILE", help="Context from a file."
    ),
    messages: Path | None = typer.Option(
        None,
        "--messages",
        metavar="FILE",
        help="Chat transcript (JSON list or JSONL of {role, content}).",
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", min=1, metavar="N", help="Token budget (default 2000)."
    ),
    encoding: str | None = typer.Option(
        None, "--encoding", metavar="NAME", help="tiktoken encoding (default cl100k_base)."
    ),
    fmt: Format = typer.Option(Format.markdown, "--format", "-f", help="Block format."),
    types: list[str] | None = typer.Option(
        None,
        "--types",
        "--type",
        "-t",
        metavar="TYPE,...",
        help="Only these types (repeat it, or commas: skill,lesson).",
    ),
    no_touch: bool = typer.Option(
        False, "--no-touch", help="Do not count the chosen entries as accessed."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Print a token-budgeted memory block to put into a prompt."""
    given = [x for x in (source, query, context_file, messages) if x is not None]
    if len(given) > 1:
        usage_error("give one of -, --query, --context-file or --messages")
    if source is not None and source != "-":
        usage_error(f"unexpected argument {source!r} (use --query TEXT, or - for stdin)")
    context = served.read_context(source == "-", query, context_file, messages)
    request = InjectRequest(
        context,
        max_tokens=max_tokens,
        encoding=encoding,
        fmt=fmt.value,
        types=tuple(types or ()),
        touch=not no_touch,
    )
    _show(served.answer(_memory(), request), json_out)


@app.command()
def watch(
    status: bool = typer.Option(False, "--status", help="Ask a running watcher how it is."),
    background: bool = typer.Option(
        False, "--background", help="Start it as a process of its own (log in .memcli/)."
    ),
    stop: bool = typer.Option(False, "--stop", help="Stop the watcher of this workspace."),
    install_service: bool = typer.Option(
        False, "--install-service", help="Write a systemd user unit / launchd agent for it."
    ),
    uninstall_service: bool = typer.Option(
        False, "--uninstall-service", help="Remove the file --install-service wrote."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Keep the index current while files change, and answer search/inject/get fast."""
    import signal

    from memcli.services.memory import shared_memory
    from memcli.surfaces.daemon.service import (
        WatchService,
        query_status,
        start_background,
        stop_running,
    )

    if install_service or uninstall_service:
        from memcli.store.workspace import resolve_workspace
        from memcli.surfaces.daemon.unitfile import (
            platform_kind,
            service_file,
            start_command,
            stop_command,
        )

        kind = platform_kind()
        path, text = service_file(resolve_workspace(state.workspace), kind)
        if uninstall_service:
            existed = path.exists()
            if existed:
                path.unlink()
            data = {"file": str(path), "removed": existed, "run_first": stop_command(path, kind)}
            message = (
                f"removed {path} (run `{stop_command(path, kind)}` first if it runs)"
                if existed else f"{path}: not installed"
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            from memcli.store.files import atomic_write

            atomic_write(path, text)
            data = {"file": str(path), "start": start_command(path, kind)}
            message = f"wrote {path}; start it with: {start_command(path, kind)}"
        if json_out:
            render.emit_json(data)
        else:
            render.info(message)
        return
    if background or stop:
        root = shared_memory(state.workspace).root
        try:
            if stop:
                pid = stop_running(root)
                data: dict[str, Any] = {"stopped": pid}
                message = f"stopped memcli watch (pid {pid})" if pid else "none was running"
            else:
                data = start_background(root)
                message = f"memcli watch runs as pid {data['pid']}; its log: {data['log']}"
        except RuntimeError as exc:
            raise MemcliError(str(exc)) from None
        if json_out:
            render.emit_json(data)
        else:
            render.info(message)
        return
    if status:
        root = shared_memory(state.workspace).root
        info = query_status(root)
        if info is None:
            render.error(f"no memcli watch is running for {root}")
            raise typer.Exit(ExitCode.ERROR)
        if json_out:
            render.emit_json(info)
        else:
            render.key_values(info.items())
        return
    service = WatchService(state.workspace, log=render.pinned_info())

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, terminate)  # also when started with SIGINT ignored (`cmd &`)
    try:
        service.start()
    except RuntimeError as exc:
        render.error(str(exc))
        raise typer.Exit(ExitCode.ERROR) from None
    try:
        while True:  # short naps: a signal the kernel hands to another thread is only
            time.sleep(0.5)  # acted on once this (main) thread runs again
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
    render.info("stopped; the index is consistent with the files")


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
    decisions = _memory().extract(
        load_messages(messages), source=source or default_source, dry_run=dry_run
    )
    if json_out:
        render.emit_json([d.to_dict() for d in decisions])
        return
    if not decisions:
        render.info("no explicit statements to remember")
    for d in decisions:
        line = f"{d.action:6} {d.entry_id or '-':9} [{d.candidate.type}] {d.candidate.text}"
        render.info(line + (f"  ({d.reason})" if d.action == "SKIP" else ""))
    if dry_run:
        render.note("dry run: nothing was written")


@app.command()
def compress(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the plan as a diff only."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Apply without asking."),
    target_tokens: int | None = typer.Option(
        None,
        "--target-tokens",
        min=1,
        metavar="N",
        help="Archive more, least retained first, until both files fit.",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Merge duplicates, drop superseded and faded entries, consolidate old ones.

    Shows the plan as a unified diff; applies it with --yes or after a prompt on a
    terminal. Everything removed goes to archive.md (`memcli restore ID`)."""
    mem = _memory()
    plan = mem.plan_compress(target_tokens=target_tokens)
    _show_plan(mem, plan, json_out, "compress")
    if plan.is_empty or dry_run:
        if json_out:
            render.emit_json({**plan.to_dict(), "diff": mem.diff(plan), "applied": None})
        elif dry_run:
            render.note("dry run: nothing was written")
        return
    _confirm_and_apply(mem, plan, yes, json_out, "compress")


@app.command()
def reflect(
    force: bool = typer.Option(False, "--force", help="Reflect even if the trigger is not met."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the insights, write nothing."),
    json_out: bool = JsonOpt,
) -> None:
    """Write insights (reflections / lessons citing their evidence) about recent entries."""
    mem = _memory()
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
    entry = _memory().log(
        _stdin_or(text), importance=importance, keywords=keywords, allow_secret=allow_secret
    )
    if json_out:
        render.emit_json(entry.to_dict())
    else:
        render.info(f"logged {entry.id} in {entry.file}")


def _show_plan(mem: Any, plan: Any, json_out: bool, what: str) -> None:
    if json_out:
        return
    if plan.is_empty:
        render.info(f"{what}: nothing to do")
    else:
        render.diff(mem.diff(plan))
        for action in plan.actions:
            render.info(f"{action.kind:12} {action.summary}")
    for note in plan.notes:
        render.note(note)


def _confirmed(yes: bool, json_out: bool, what: str, question: str) -> bool:
    """Whether to apply: --yes, or a person said so on a terminal; never silently in a
    pipe or for --json (an error naming --yes)."""
    if yes:
        return True
    if not (sys.stdin.isatty() and sys.stdout.isatty()) or json_out:
        raise MemcliError(
            f"{what} was not applied: pass --yes to apply it (nothing was changed)",
            hint="--dry-run shows the plan without this message",
        )
    if typer.confirm(question, default=False):
        return True
    render.info("nothing was changed")
    return False


def _confirm_and_apply(mem: Any, plan: Any, yes: bool, json_out: bool, what: str) -> None:
    if not _confirmed(yes, json_out, what, f"apply these {len(plan.actions)} change(s)?"):
        return
    applied = mem.apply(plan)
    if json_out:
        render.emit_json({**plan.to_dict(), "applied": applied.to_dict()})
        return
    render.info(f"{what}: wrote {len(applied.written)} entr(ies), archived {len(applied.archived)}")
    if applied.skipped:
        render.note(f"left alone (changed meanwhile): {', '.join(applied.skipped)}")


@app.command()
def history(
    entry_id: str | None = typer.Argument(None, metavar="ID", help="Only this entry's changes."),
    file: str | None = typer.Option(
        None, "--file", "-f", metavar="FILE", help="Only this file (memory.md, …)."
    ),
    removed: bool = typer.Option(
        False, "--removed", help="Entries an editor's save removed after memcli wrote them."
    ),
    limit: int = typer.Option(
        20, "--limit", "-n", min=1, metavar="N", help="At most this many versions (default 20)."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Past versions of the files (memcli's writes and changes made by others)."""
    from memcli.services.recovery import when

    mem = _memory()
    if removed:
        items = mem.removed()
        if json_out:
            render.emit_json({"removed": items})
            return
        if not items:
            render.note("no entry memcli wrote was removed by someone else's save")
        for item in items:
            what = "edit reverted" if item.get("kind") == "reverted" else "removed"
            render.info(f"{item['id']}  {item['file']}  {what} {when(item['t'])}: {item['text']}")
        if items:
            render.note("`memcli restore ID` brings one back")
        return
    found = mem.history(entry_id, file=file, limit=limit)
    if json_out:
        render.emit_json({"versions": [v.to_dict() for v in found]})
        return
    if not found:
        render.note("no versions in the history" + (f" change {entry_id}" if entry_id else ""))
    for v in found:
        who = f"memcli {v.op}" if v.source == "memcli" else v.source
        if entry_id:
            text = v.text if v.text is not None else "(removed)"
            render.info(f"{when(v.t)}  {v.file}  {who}: {text}")
        else:
            render.info(
                f"{when(v.t)}  {v.file}  {who}  +{len(v.added)} ~{len(v.changed)} "
                f"-{len(v.removed)}  {v.sha[:10]}"
            )


@app.command()
def undo(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change, write nothing."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Apply without asking."),
    json_out: bool = JsonOpt,
) -> None:
    """Take back memcli's last operation (later edits by anyone are kept)."""
    from memcli.services.recovery import when

    mem = _memory()
    plan = mem.plan_undo()
    if not json_out:
        import difflib

        for name, (before, after) in plan.files.items():
            render.diff(
                "".join(
                    difflib.unified_diff(
                        before.splitlines(keepends=True),
                        after.splitlines(keepends=True),
                        f"a/{name}",
                        f"b/{name}",
                    )
                )
            )
        render.info(f"undo {plan.op} of {when(plan.t)} ({len(plan.files)} file(s))")
        if plan.conflicts:
            render.note(f"{plan.conflicts} place(s) changed since: both versions kept")
    if dry_run or not plan.files:
        if json_out:
            render.emit_json({**plan.to_dict(), "applied": False})
        elif not plan.files:
            render.note("its changes are no longer in the files: nothing to take back")
        else:
            render.note("dry run: nothing was written")
        return
    if not _confirmed(yes, json_out, "undo", "apply?"):
        return
    mem.undo(plan)
    if json_out:
        render.emit_json({**plan.to_dict(), "applied": True})
    else:
        render.info(f"undid {plan.op}")


@app.command()
def doctor(json_out: bool = JsonOpt) -> None:
    """Check the workspace: damaged entries, duplicate ids, entries an editor's save
    removed, merge conflicts, editor bytes to merge back; the model, its ONNX export, the
    index, the watcher's socket, the git merge driver. Exit 1 when something needs
    attention."""
    from memcli.surfaces.daemon.service import watcher_check

    mem = _memory()
    report = mem.doctor(extra=[watcher_check(mem.root)])
    if json_out:
        render.emit_json(report)
    else:
        for check in report["checks"]:
            render.info(f"{check['name']}: {check['detail']}")
        for problem in report["problems"]:
            render.info(f"problem: {problem}")
        for dup in report["duplicate_ids"]:
            render.info(f"duplicate: {dup}")
        for item in report["removed_entries"]:
            render.info(
                f"removed by an editor's save: {item['id']} ({item['file']}): {item['text']} "
                f"— `memcli restore {item['id']}` brings it back"
            )
        for conflict in report["merge_conflicts"]:
            render.info(f"merge conflict: {conflict}")
        for item in report["merged_late_writes"]:
            render.info(f"merged back bytes an editor wrote late into {item}")
        if report["ok"]:
            render.info(f"{report['workspace']}: ok")
    if not report["ok"]:
        raise typer.Exit(ExitCode.ERROR)


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
    entries = _memory().entries(include_archived=include_archived)
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
    done = _memory().import_items(items, dry_run=dry_run, source=f"import:{file.name}", by=by)
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


config_app = typer.Typer(
    help="The settings in effect; edit memcli.toml or your config.toml.", no_args_is_help=True
)
app.add_typer(config_app, name="config")


def _fresh_settings() -> Any:
    """Settings read now (not a long-lived process's cached ones)."""
    from memcli.services.memory import Memory
    from memcli.store.workspace import resolve_workspace

    return Memory(resolve_workspace(state.workspace)).settings


@config_app.command("list")
def config_list(json_out: bool = JsonOpt) -> None:
    """Every setting with the value in effect (defaults, config files, MEMCLI_*)."""
    from memcli.services.configedit import effective

    values = effective(_fresh_settings())
    if json_out:
        render.emit_json(values)
        return
    for key, value in values.items():
        render.info(f"{key} = {value!r}" if isinstance(value, str) else f"{key} = {value}")


@config_app.command("get")
def config_get(key: str = typer.Argument(..., metavar="SECTION.KEY")) -> None:
    """One setting's value in effect."""
    from memcli.services.configedit import effective, split_key

    split_key(key)
    value = effective(_fresh_settings())[key]
    render.info(str(value).lower() if isinstance(value, bool) else str(value))


@config_app.command("set")
def config_set(
    key: str = typer.Argument(..., metavar="SECTION.KEY"),
    value: str = typer.Argument(..., metavar="VALUE", help="A TOML value: 10, 0.5, true, text."),
    user: bool = typer.Option(
        False, "--user", help="In your own config.toml (every workspace), not memcli.toml."
    ),
) -> None:
    """Write one setting (comments in the file are kept); checked before it is written."""
    from memcli.services.configedit import check, parse_value, split_key, with_value
    from memcli.store.files import atomic_write
    from memcli.store.trust import user_config_file
    from memcli.store.workspace import resolve_workspace

    section, name = split_key(key)
    root = resolve_workspace(state.workspace)
    path = user_config_file() if user else root / "memcli.toml"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    new = with_value(old, section, name, parse_value(value))
    check(root, None if user else new, new if user else None)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, new)
    render.info(f"{path}: {key} = {value}")
    if not user:
        import tomllib

        table = tomllib.loads(new)
        if table.get("llm") or "model" in table.get("index", {}):
            render.note("memcli.toml changed: `memcli trust` approves its LLM and model settings")


@app.command(name="merge-driver", hidden=True)
def merge_driver(
    base: Path = typer.Argument(..., help="%O: the common ancestor's version."),
    ours: Path = typer.Argument(..., help="%A: our version; the result is written here."),
    theirs: Path = typer.Argument(..., help="%B: their version."),
    pathname: str | None = typer.Argument(None, help="%P: the file's path in the repo."),
) -> None:
    """The git merge driver `memcli git setup` registers (merges entries by id)."""
    from memcli.store.gitmerge import run_driver

    raise typer.Exit(run_driver(base, ours, theirs, pathname))


git_app = typer.Typer(help="Keep a workspace in git: entry-aware merges.", no_args_is_help=True)
app.add_typer(git_app, name="git")


@git_app.command("setup")
def git_setup(
    path: str | None = typer.Argument(
        None, metavar="PATH", help="The workspace (default: the current one)."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Register the entry-aware merge driver: .gitattributes, git config, post-merge hook."""
    from memcli.store.gitmerge import setup
    from memcli.store.workspace import resolve_workspace

    root = resolve_workspace(path or state.workspace)
    done = setup(root)
    if json_out:
        render.emit_json({"workspace": str(root), "done": done})
        return
    for line in done:
        render.info(line)
    if not done:
        render.info(f"{root}: already set up")


@app.command()
def mcp(
    http: str | None = typer.Option(
        None,
        "--http",
        metavar="HOST:PORT",
        help="Serve over streamable HTTP at /mcp instead of stdio (host 127.0.0.1 "
        "unless given). A bearer token is required: MEMCLI_MCP_TOKEN or --token-file.",
    ),
    token_file: Path | None = typer.Option(
        None,
        "--token-file",
        metavar="FILE",
        help="The token (one line), or [[grant]] tables naming each token's workspaces.",
    ),
) -> None:
    """Serve memory to MCP hosts over stdio, or over HTTP with --http (search, get, add,
    inject, forget)."""
    if http is None:
        if token_file is not None:
            usage_error("--token-file is for --http; stdio needs no token")
        from memcli.surfaces.mcp_server import serve

        serve(state.workspace)
        return
    from memcli.surfaces.mcp_http import serve_http

    serve_http(_memory().root, http, token_file)


@app.command()
def hook(
    event: str = typer.Argument(
        ..., metavar="EVENT", help="session-start, user-prompt-submit, pre-compact or stop."
    ),
    max_tokens: int | None = typer.Option(
        None,
        "--max-tokens",
        metavar="N",
        help="Budget of the block (1500 at session start, 600 a prompt).",
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help="Seconds before giving up (8 for inject, 50 for extract).",
    ),
) -> None:
    """Answer an agent host's hook (Claude Code: hook JSON on stdin). Session start and
    each prompt get a memory block; pre-compact and stop remember what the transcript
    says. Never blocks a prompt: a failure is one line on stderr and exit 0."""
    from memcli.surfaces import hooks

    args = [event]
    if max_tokens is not None:
        args += ["--max-tokens", str(max_tokens)]
    if timeout is not None:
        args += ["--timeout", str(timeout)]
    raise typer.Exit(hooks.run(state.workspace, args))


ScopeProjectOpt = typer.Option(False, "--project", help="This project's settings files.")
ScopeUserOpt = typer.Option(False, "--user", help="Your own settings files (the default).")
DryRunOpt = typer.Option(False, "--dry-run", help="Show the changes as a diff, write nothing.")


def _install(
    host: str, project: bool, user: bool, dry_run: bool, json_out: bool, remove: bool
) -> None:
    from memcli.surfaces import install as installer

    if project and user:
        usage_error("give --project or --user, not both")
    plan = installer.plan(
        host, "project" if project else "user", remove=remove, workspace=state.workspace
    )
    written = [] if dry_run else installer.apply(plan)
    if json_out:
        render.emit_json({**plan.to_dict(), "written": [str(p) for p in written]})
        return
    for change in plan.changes:
        if dry_run and change.changed:
            render.diff(change.diff())
        for line in change.did:
            render.info(f"{change.path}: {line}")
        if not change.did:
            state_ = "nothing of memcli's there" if remove else "already set up"
            render.info(f"{change.path}: {state_}")
    for note in plan.notes:
        render.note(note)
    if dry_run:
        render.note("dry run: nothing was written")


@app.command()
def install(
    host: str = typer.Argument(..., metavar="HOST", help="claude-code, cursor or codex."),
    project: bool = ScopeProjectOpt,
    user: bool = ScopeUserOpt,
    dry_run: bool = DryRunOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Wire memcli into an agent host: Claude Code hooks (+ MCP with --project), the MCP
    server for Cursor and Codex. Merges into the settings files; running it again
    changes nothing."""
    _install(host, project, user, dry_run, json_out, remove=False)


@app.command()
def uninstall(
    host: str = typer.Argument(..., metavar="HOST", help="claude-code, cursor or codex."),
    project: bool = ScopeProjectOpt,
    user: bool = ScopeUserOpt,
    dry_run: bool = DryRunOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Remove what `memcli install HOST` added (and nothing else)."""
    _install(host, project, user, dry_run, json_out, remove=True)


@app.command(name="trust")
def trust_(
    path: str | None = typer.Argument(
        None, metavar="PATH", help="The workspace (default: the current one)."
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Withdraw the approval."),
    json_out: bool = JsonOpt,
) -> None:
    """Approve this workspace's memcli.toml as it is now: its [llm] endpoint, API key
    variable and [index] model apply (until the file changes)."""
    from memcli.store import trust
    from memcli.store.workspace import resolve_workspace

    root = resolve_workspace(path or state.workspace)
    config = root / "memcli.toml"
    if revoke:
        done = trust.revoke(root)
        if json_out:
            render.emit_json({"workspace": str(root), "trusted": False, "revoked": done})
        else:
            render.info(f"{root}: " + ("approval withdrawn" if done else "was not trusted"))
        return
    if not root.is_dir():
        render.error(f"{root}: no such directory")
        raise typer.Exit(ExitCode.ERROR)
    digest = trust.trust(root)
    if json_out:
        render.emit_json({"workspace": str(root), "trusted": True, "sha256": digest})
        return
    what = f"{config} (sha256 {digest[:12]})" if config.is_file() else f"{root} (no memcli.toml)"
    render.info(f"trusted {what}; a changed memcli.toml needs `memcli trust` again")


def main() -> None:
    """Console entry point."""
    app()
