"""Reading memory back: search, index, inject (search and inject as the daemon serves them)."""

from __future__ import annotations

from pathlib import Path

import typer

from memcli.core.requests import (
    InjectRequest,
    SearchQuery,
)
from memcli.surfaces.cli import complete, progress, render, served
from memcli.surfaces.cli.base import (
    Format,
    JsonOpt,
    KeywordFilterOpt,
    Mode,
    NoPagerOpt,
    SinceOpt,
    TypeFilterOpt,
    UntilOpt,
    app,
    env,
    memory,
    show,
    stdin_or,
    usage_error,
)
from memcli.surfaces.cli.env import read_context


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
        None,
        "--min-score",
        metavar="SCORE",
        help="Drop hits scoring less; given, it replaces search.relevance_floor.",
    ),
    explain: bool = typer.Option(False, "--explain", help="Show every score component."),
    include_archived: bool = typer.Option(False, "--include-archived", help="Also archive.md."),
    no_touch: bool = typer.Option(False, "--no-touch", help="Do not count this as an access."),
    no_pager: bool = NoPagerOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Search memories: semantic + keyword relevance, recency, importance."""
    mem = memory()
    request = SearchQuery(
        stdin_or(query),
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
    embedding = progress.progress_callback("embedding")
    data = served.answer(mem, request, progress=embedding, now=env().now())
    show(data, json_out, explain, pager=not no_pager)


@app.command()
def index(
    rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild from the Markdown alone."),
    json_out: bool = JsonOpt,
) -> None:
    """Bring the search index up to date (and the embedding model's one-time ONNX
    export); prints what changed."""
    mem = memory()
    report = mem.index(rebuild=rebuild, progress=progress.progress_callback("embedding"))
    with progress.model_steps() as steps:  # when indexing needed no model, it is made here
        mem.runtime.prepare_model(steps)
    if json_out:
        render.emit_json(report.to_dict())
    else:
        render.info(
            f"index: {report.added} added, {report.changed} changed, {report.removed} removed, "
            f"{report.total} entries ({report.embedded} embedded"
            + (", rebuilt" if report.rebuilt else "")
            + ")"
        )
    from memcli.services.health import language_notice

    said = language_notice(mem.runtime)  # a fifth of the entries in a script it cannot read
    if said:
        render.note(said)


@app.command()
def inject(
    source: str | None = typer.Argument(
        None, metavar="[CONTEXT|-]", help="Context text (as --query), or - to read it from stdin."
    ),
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
        autocompletion=complete.types,
    ),
    no_touch: bool = typer.Option(
        False, "--no-touch", help="Do not count the chosen entries as accessed."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Print a token-budgeted memory block to put into a prompt."""
    given = [x for x in (source, query, context_file, messages) if x is not None]
    if len(given) > 1:
        usage_error("CONTEXT, --query, --context-file, --messages, -: give one of them, not all")
    if source is not None and source != "-":
        query, source = source, None
    context = read_context(source == "-", query, context_file, messages)
    request = InjectRequest(
        context,
        max_tokens=max_tokens,
        encoding=encoding,
        fmt=fmt.value,
        types=tuple(types or ()),
        touch=not no_touch,
    )
    show(served.answer(memory(), request), json_out)
