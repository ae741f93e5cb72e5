"""The arguments of the served commands (`search`, `inject`, `get`) read without Typer,
into the fields of their request (memcli.core.requests) and the view options (--json,
--explain), for the quick path and the daemon's client; the global options and the
command were read once before (memcli.surfaces.cli.env.Env).

Anything unusual — --help, --traceback, an unknown or malformed option, an option given
twice, a missing value, a value Typer would refuse — gives None, and the Typer app
handles the call as usual (including its usage errors). Builtin modules only: every
served command imports this.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from memcli.surfaces.cli.env import Env

SERVED = ("search", "inject", "get")
#: memcli.core.requests.MODES and FORMATS (a test keeps them equal; importing that
#: module costs dataclasses, re and inspect)
MODES = ("hybrid", "semantic", "keyword")
FORMATS = ("markdown", "xml", "json")

#: per command: option -> (field, kind); kind: "str", "int" (at least 1), "float",
#: "many" (repeatable), "mode", "format", "file", or "flag" / "view" (no value; a view
#: option is how the answer is printed, not part of the request)
_SEARCH = {
    "--mode": ("mode", "mode"),
    "-m": ("mode", "mode"),
    "--type": ("types", "many"),
    "-t": ("types", "many"),
    "--keyword": ("keywords", "many"),
    "-k": ("keywords", "many"),
    "--since": ("since", "str"),
    "--until": ("until", "str"),
    "--limit": ("limit", "int"),
    "-n": ("limit", "int"),
    "--min-score": ("min_score", "float"),
    "--include-archived": ("include_archived", "flag"),
    "--no-touch": ("touch", "flag"),
    "--explain": ("explain", "view"),
    "--json": ("json", "view"),
    "--no-pager": ("no_pager", "view"),
}
_INJECT = {
    "--query": ("query", "str"),
    "-q": ("query", "str"),
    "--context-file": ("context_file", "file"),
    "--messages": ("messages", "file"),
    "--max-tokens": ("max_tokens", "int"),
    "--encoding": ("encoding", "str"),
    "--format": ("fmt", "format"),
    "-f": ("fmt", "format"),
    "--types": ("types", "many"),
    "--type": ("types", "many"),
    "-t": ("types", "many"),
    "--no-touch": ("touch", "flag"),
    "--json": ("json", "view"),
}
_GET = {"--json": ("json", "view"), "--no-pager": ("no_pager", "view")}
SPECS = {"search": _SEARCH, "inject": _INJECT, "get": _GET}


def _digits(text: str) -> bool:
    body = text[1:] if text.startswith("-") else text
    return body.isascii() and body.isdigit()


def _decimal(text: str) -> bool:
    """-?(\\d+\\.?\\d*|\\.\\d+): what both float() and click read alike."""
    body = text[1:] if text.startswith("-") else text
    whole, dot, part = body.partition(".")
    if not (whole + part).isascii() or not (whole + part).isdigit():
        return False
    return bool(whole) or (bool(dot) and bool(part))


def _value(kind: str, raw: str) -> Any:
    """An option's value as the request holds it; ValueError when Typer should judge."""
    if kind == "int":
        if not _digits(raw) or int(raw) < 1:
            raise ValueError(raw)
        return int(raw)
    if kind == "float":
        if not _decimal(raw):
            raise ValueError(raw)
        return float(raw)
    if (kind == "mode" and raw not in MODES) or (kind == "format" and raw not in FORMATS):
        raise ValueError(raw)
    return raw


def parse_options(
    spec: dict[str, tuple[str, str]], rest: list[str]
) -> tuple[dict[str, Any], dict[str, bool], list[str]] | None:
    """(request fields, view options, positional arguments) of a command's arguments,
    or None when anything is unusual."""
    fields: dict[str, Any] = {}
    view: dict[str, bool] = {}
    positional: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            i += 1
            continue
        if name not in spec:
            return None
        field, kind = spec[name]
        if kind in ("flag", "view"):
            if eq:
                return None
            if kind == "view":
                view[field] = True
            else:
                fields[field] = field != "touch"  # --no-touch: touch=False
            i += 1
            continue
        if eq:
            raw = inline
            i += 1
        elif i + 1 < len(rest):
            raw = rest[i + 1]
            i += 2
        else:
            return None
        if kind == "many":
            fields.setdefault(field, []).append(raw)
            continue
        if field in fields:
            return None  # given twice: leave the rule to Typer
        try:
            fields[field] = _value(kind, raw)
        except ValueError:
            return None
    return fields, view, positional


def served_call(env: Env) -> tuple[str, dict[str, Any], dict[str, bool]] | None:
    """(request kind, its fields, view options) of a served command, or None (another
    command, or anything unusual). Inject's context sources stay as given (`query`,
    `context_file`, `messages`, `-`): reading them is the caller's job (only it can
    read its stdin)."""
    command, rest = env.command, env.rest
    if not env.plain or command not in SERVED or "--help" in rest:
        return None
    parsed = parse_options(SPECS[command], rest)
    if parsed is None:
        return None
    fields, view, positional = parsed
    if command == "search":
        if len(positional) != 1:
            return None
        fields["query"] = positional[0]
        return "SearchQuery", fields, view
    if command == "get":
        if len(positional) != 1:
            return None
        fields["entry_id"] = positional[0]
        return "GetRequest", fields, view
    sources = [k for k in ("query", "context_file", "messages") if k in fields]
    if len(positional) > 1 or len(sources) + len(positional) > 1:
        return None  # Typer's usage errors
    if positional == ["-"]:
        fields["stdin"] = True
    elif positional:
        fields["query"] = positional[0]  # the context given as text, as --query
    return "InjectRequest", fields, view


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
