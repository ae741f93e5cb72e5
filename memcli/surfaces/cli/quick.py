"""`memcli search`, `inject` and `get` in-process without Typer, for when no watch
daemon answers.

Building Typer's parameters and importing every command module costs ≈ 100 ms per
process (its value coercion imports pydantic), half of a cold read's budget. This module
reads the command's options with memcli.surfaces.cli.env.served_call and runs the very
same `served.answer` and `served.show` as the Typer commands (memcli.surfaces.cli.
commands.search, .entries), with the errors mapped by memcli.surfaces.guard, so output
and exit codes are identical (tests compare them). Anything served_call does not
recognise gives None and the Typer app handles the call as usual. Standard library only
at import time.
"""

from __future__ import annotations

from typing import Any

from memcli.surfaces.cli.env import Env, served_call


def run(
    env: Env | list[str],
    call: tuple[str, dict[str, Any], dict[str, bool]] | None = None,
) -> int | None:
    """Exit code of `memcli search|inject|get ...` (its Env, or its arguments) run here,
    or None to let the Typer app run it. `call`: env.served_call of the command, when
    read."""
    env = Env(env) if isinstance(env, list) else env
    if env.environ.get("MEMCLI_NO_QUICK"):
        return None
    call = served_call(env) if call is None else call
    if call is None:
        return None
    return _answer(env, call[0], call[1], call[2])


def _request(env: Env, kind: str, fields: dict[str, Any]) -> tuple[Any, Any]:
    """(the Memory, the request) as the Typer command builds them, in its order: inject
    reads its context before the workspace is opened, search after."""
    from memcli.core import requests

    values = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    if kind == "InjectRequest":  # memcli.surfaces.cli.commands.search.inject
        from memcli.surfaces.cli.env import read_context

        sources = {k: values.pop(k, None) for k in ("query", "context_file", "messages")}
        context = read_context(values.pop("stdin", False), **sources)
        return env.memory(), requests.InjectRequest(context, **values)
    mem = env.memory()
    if kind == "GetRequest":
        return mem, requests.GetRequest(**values)
    if values["query"] == "-":
        from memcli.core.validate import read_stdin

        values["query"] = read_stdin()
    return mem, requests.SearchQuery(**values)


def _answer(env: Env, kind: str, fields: dict[str, Any], view: dict[str, bool]) -> int:
    """The Typer command without Typer: the request's fields as served_call read them."""
    try:
        from memcli.surfaces.cli import served

        mem, request = _request(env, kind, fields)
        data = served.answer(mem, request, progress=_progress, now=env.now())
    except BaseException as exc:  # noqa: BLE001 - the guard decides, as in the Typer app
        from memcli.surfaces import guard

        report = guard.describe(exc)
        if report is None:
            raise
        data = report
    from memcli.surfaces.cli import served

    try:
        return served.show(data, view, env)
    except (BrokenPipeError, KeyboardInterrupt) as exc:
        from memcli.surfaces import guard

        return int(guard.outcome(exc)[0])  # type: ignore[index]


_bar: list[Any] = []


def _progress(done: int, total: int) -> None:
    """progress.progress_callback, created only when the index needs (re)building."""
    if not _bar:
        from memcli.surfaces.cli import progress

        _bar.append(progress.progress_callback("embedding"))
    _bar[0](done, total)
