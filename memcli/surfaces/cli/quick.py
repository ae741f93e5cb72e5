"""`memcli search` in-process without Typer, for when no watch daemon answers.

Building Typer's parameters costs ≈ 100 ms per process (its value coercion imports
pydantic), a quarter of the no-daemon budget. This module reads the search command's
options with a small parser and calls the very same Memory.search and render functions
as memcli.surfaces.cli.app.search, so output and exit codes are identical (a test compares them).
Anything it does not recognise — --help, --traceback, an unknown or malformed option, a
missing value — returns None and the Typer app handles the call as usual (including its
usage errors). Standard library only at import time.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from memcli.surfaces.cli.fastpath import parse_argv

_VALUE = {
    "--mode": "mode",
    "-m": "mode",
    "--type": "types",
    "-t": "types",
    "--keyword": "keywords",
    "-k": "keywords",
    "--since": "since",
    "--until": "until",
    "--limit": "limit",
    "-n": "limit",
    "--min-score": "min_score",
}
_FLAG = {
    "--explain": "explain",
    "--include-archived": "include_archived",
    "--no-touch": "no_touch",
    "--json": "json_out",
}
_MULTIPLE = ("types", "keywords")
_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?(\d+\.?\d*|\.\d+)$")


def parse_search(rest: list[str]) -> dict[str, Any] | None:
    """The search command's options from the arguments after `search`, or None when
    anything is unusual (Typer then parses, and reports errors its way)."""
    options: dict[str, Any] = {"types": [], "keywords": []}
    query: str | None = None
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, _, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FLAG and not inline and "=" not in arg:
            options[_FLAG[name]] = True
            i += 1
        elif name in _VALUE:
            if "=" in arg:
                value = inline
                i += 1
            elif i + 1 < len(rest):
                value = rest[i + 1]
                i += 2
            else:
                return None
            key = _VALUE[name]
            if key in _MULTIPLE:
                options[key].append(value)
            elif key in options:
                return None  # given twice: leave the rule to Typer
            else:
                options[key] = value
        elif arg == "-" or not arg.startswith("-"):
            if query is not None:
                return None
            query = arg
            i += 1
        else:
            return None
    if query is None:
        return None
    if "limit" in options:
        if not _INT.match(options["limit"]) or int(options["limit"]) < 1:
            return None  # Typer reports it (exit code 2)
        options["limit"] = int(options["limit"])
    if options.get("mode", "hybrid") not in ("hybrid", "semantic", "keyword"):  # cliargs.MODES
        return None
    if "min_score" in options:
        if not _FLOAT.match(options["min_score"]):
            return None
        options["min_score"] = float(options["min_score"])
    options["query"] = query
    return options


def run(argv: list[str]) -> int | None:
    """Exit code of `memcli search ...` run here, or None to let the Typer app run it."""
    if os.environ.get("MEMCLI_NO_QUICK"):
        return None
    parsed = parse_argv(argv)
    if parsed is None or parsed[1] != "search":
        return None
    options = parse_search(parsed[2])
    if options is None:
        return None
    import gc

    gc.disable()  # a one-off process: its few cycles die with it, its pauses would not
    return _search(parsed[0], options)


def _search(workspace: str | None, o: dict[str, Any]) -> int:
    """`app.search` and the error mapping of `app._Group`, without Typer (keep the two
    in step)."""
    from memcli.core.errors import MemcliError, UsageError

    try:
        from memcli.core.validate import read_stdin
        from memcli.services.memory import shared_memory
        from memcli.surfaces.cli.args import check_types, when

        mem = shared_memory(workspace)
        query = read_stdin() if o["query"] == "-" else o["query"]
        types = check_types(o["types"], mem)
        since = when(o["since"], "--since") if o.get("since") else None
        until = when(o["until"], "--until", end=True) if o.get("until") else None
        hits = mem.search(
            query,
            mode=o.get("mode"),
            types=types,
            keywords=o["keywords"] or None,
            since=since,
            until=until,
            limit=o.get("limit"),
            min_score=o.get("min_score"),
            include_archived=o.get("include_archived", False),
            touch=not o.get("no_touch", False),
            progress=_progress,
        )
        explain = o.get("explain", False)
        if o.get("json_out"):
            from memcli.core.validate import dumps_json

            sys.stdout.write(dumps_json([h.to_dict(explain) for h in hits]) + "\n")
        else:
            from memcli.surfaces.cli import render

            render.hits_table(hits, explain)
    except UsageError as exc:  # as memcli.surfaces.cli.app._Group
        from memcli.surfaces.cli import render

        render.error(str(exc))
        return 2
    except MemcliError as exc:
        from memcli.surfaces.cli import render

        render.error(str(exc))
        return 1
    except UnicodeError as exc:  # as memcli.surfaces.cli.app._Group
        from memcli.surfaces.cli import render

        render.error(f"the input is not valid UTF-8 text ({exc.reason}); nothing was written")
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 0


_bar: list[Any] = []


def _progress(done: int, total: int) -> None:
    """render.progress_callback, created only when the index needs (re)building."""
    if not _bar:
        from memcli.surfaces.cli import render

        _bar.append(render.progress_callback("embedding"))
    _bar[0](done, total)
