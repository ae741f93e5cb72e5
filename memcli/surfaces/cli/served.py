"""The commands a `memcli watch` daemon answers (search, inject, get), in two halves:
`answer` computes the result data from a request (in-process, or in the daemon), and
`show` prints it (in-process, or in the daemon's client). The in-process CLI, the
Typer-free quick path and the daemon with its client all run these two, so their
output, exit codes and messages are the same by construction.

`show` and the view options are builtin-only at import time (the daemon client imports
this); `answer` imports the library when called.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from pathlib import Path
    from typing import Any

    from memcli.surfaces.cli.env import Env

#: how an answer is printed (not part of the request: the daemon never sees it)
VIEW_OPTIONS = ("json", "explain", "no_pager")


def answer(
    mem: Any,
    request: Any,
    progress: Callable[[int, int], None] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The result data of a served request, JSON-ready: `{"hits": [...]}`,
    `{"inject": {...}}` or `{"entry": {...}}`. The command line's forms (relative dates
    from `now`, plural types) are resolved here, as the options' names appear in their
    errors."""
    from memcli.core.requests import GetRequest, InjectRequest, SearchQuery
    from memcli.store.store import new_command
    from memcli.surfaces import operations
    from memcli.surfaces.cli import args
    from memcli.surfaces.cli.render import hit_row

    new_command()  # a watcher answers many: each says its warnings once
    if isinstance(request, SearchQuery):
        hits = operations.search(mem, args.resolve_search(request, mem, now), progress)
        return {"hits": [hit_row(h) for h in hits]}
    if isinstance(request, InjectRequest):
        packed = operations.inject(mem, args.resolve_inject(request, mem))
        return {"inject": packed.to_dict()}
    if isinstance(request, GetRequest):
        return {"entry": operations.get(mem, request).to_dict()}
    raise TypeError(f"not a served request: {type(request).__name__}")


def read_context(
    stdin: bool = False,
    query: str | None = None,
    context_file: str | Path | None = None,
    messages: str | Path | None = None,
) -> str | None:
    """Inject's context from the one source given: stdin (`-`), --query, --context-file
    or --messages (a transcript: its recent turns); None for none."""
    if stdin:
        from memcli.core.validate import read_stdin

        return read_stdin()
    if query is not None:
        return query
    from pathlib import Path

    if context_file is not None:
        from memcli.core.validate import read_input_file

        return read_input_file(Path(context_file), "the context file")
    if messages is not None:
        from memcli.adapters.messages import conversation_context, load_messages

        return conversation_context(load_messages(Path(messages)))
    return None


def show(data: dict[str, Any], view: dict[str, bool], env: Env | str) -> int:
    """Print an `answer` of a command (its Env, or its name) or an error answer
    (memcli.surfaces.guard.describe's form) as the command does, --json as the one
    envelope; its exit code."""
    from memcli.surfaces.cli import render
    from memcli.surfaces.cli.env import Env

    json_out = view.get("json", False)
    env = Env([env]) if isinstance(env, str) else env
    env.json = json_out
    with render.using(env):
        return _show(data, view, env)


def _show(data: dict[str, Any], view: dict[str, bool], env: Env) -> int:
    from memcli.surfaces.cli import render

    json_out = env.json
    if data.get("notices"):  # what the library said on stderr while answering
        env.stderr.write(data["notices"])
    if "error" in data:
        render.fail(data)
        return int(data["exit"])
    if "hits" in data:
        if json_out:
            render.emit_json({"hits": render.hits_json(data["hits"], view.get("explain", False))})
        else:
            with render.paged(not view.get("no_pager")):
                render.hits_table(data["hits"], view.get("explain", False))
    elif "inject" in data:
        packed = data["inject"]
        if not packed["exact"]:
            render.note("tiktoken is not installed: token counts are estimates")
        if json_out:
            render.emit_json(packed)
        else:
            render.write(packed["block"] + "\n")
    elif "entry" in data:
        if json_out:
            render.emit_json({"entry": data["entry"]})
        else:
            with render.paged(not view.get("no_pager")):
                render.entry_detail(data["entry"])
    return 0
