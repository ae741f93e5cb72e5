"""The commands a `memcli watch` daemon answers (search, inject, get), in two halves:
`answer` computes the result data from a request (in-process, or in the daemon), and
`show` prints it (in-process, or in the daemon's client). The in-process CLI, the
Typer-free quick path and the daemon with its client all run these two, so their
output, exit codes and messages are the same by construction.

A client whose streams are plain (not a terminal: an agent's pipe) has the daemon print
for it (`printed`) and imports neither module; on a terminal it prints the data itself
with `show`. `show` and the view options are builtin-only at import time; `answer`
imports the library when called.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
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


def printed(data: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
    """`show`'s output of `data` for a client whose stdout and stderr are plain
    (env.plain_stream), as `{"out", "err", "exit"}`: the daemon prints, the client
    writes the text and exits with the code. `view`: the view options and the
    command's name ("command"). `data` itself when this process's environment would not
    print plainly (it asks for colour): the client then prints it."""
    import io

    from memcli.surfaces.cli.env import Env, plain_stream

    out, err = io.StringIO(), io.StringIO()
    if not plain_stream(out):
        return data
    options = {k: view[k] is True for k in VIEW_OPTIONS if k in view}
    code = show(data, options, Env([view["command"]], stdout=out, stderr=err))
    return {"out": out.getvalue(), "err": err.getvalue(), "exit": code}


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
