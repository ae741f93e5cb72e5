"""`memcli search` in-process without Typer, for when no watch daemon answers.

Building Typer's parameters costs ≈ 100 ms per process (its value coercion imports
pydantic), a quarter of the no-daemon budget. This module reads the search command's
options with memcli.surfaces.cli.env.served_call and runs the very same `served.answer` and
`served.show` as memcli.surfaces.cli.commands.search, with the errors mapped by
memcli.surfaces.guard, so output and exit codes are identical (a test compares them).
Anything served_call does not recognise gives None and the Typer app handles the call as
usual. Standard library only at import time.
"""

from __future__ import annotations

from typing import Any

from memcli.surfaces.cli.env import Env, served_call


def run(
    env: Env | list[str],
    call: tuple[str, dict[str, Any], dict[str, bool]] | None = None,
) -> int | None:
    """Exit code of `memcli search ...` (its Env, or its arguments) run here, or None to
    let the Typer app run it. `call`: env.served_call of the command, when read."""
    env = Env(env) if isinstance(env, list) else env
    if env.environ.get("MEMCLI_NO_QUICK") or env.command != "search":
        return None
    call = served_call(env) if call is None else call
    if call is None:
        return None
    return _search(env, call[1], call[2])


def _search(env: Env, fields: dict[str, Any], view: dict[str, bool]) -> int:
    """`app.search` without Typer: the request's fields as served_call read them."""
    try:
        from memcli.core.requests import SearchQuery
        from memcli.core.validate import read_stdin
        from memcli.surfaces.cli import served

        mem = env.memory()
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
        if values["query"] == "-":
            values["query"] = read_stdin()
        data = served.answer(mem, SearchQuery(**values), progress=_progress, now=env.now())
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
