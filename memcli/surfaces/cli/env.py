"""What one command runs with, made once by the entry point and passed down, and the
command line read without Typer.

An `Env` holds the command line as read once (the global options, the command, its
arguments), the output streams, the process environment, the clock, and the workspace
with its settings, resolved on first use and then kept. memcli.surfaces.cli.fastpath
makes one per process (the Typer app makes its own when called directly, as tests
do) and hands it to the hooks, the daemon's client, the quick path and the Typer app
(as Click's context object); memcli.surfaces.cli.render writes to its streams.

`served_call` reads the arguments of the served commands (`search`, `inject`, `get`)
into the fields of their request (memcli.core.requests' wire form) and the view options
(--json, --explain), for the quick path and the daemon's client. Anything unusual —
--help, --traceback, an unknown or malformed option, an option given twice, a missing
value, a value Typer would refuse — gives None, and the Typer app handles the call as
usual (including its usage errors).

Builtin modules only: every served command imports this (one module: each module on
that path costs a fresh process ≈ 0.1 ms).
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any, TextIO


class Env:
    """One command's environment (see the module's docstring)."""

    __slots__ = (
        "argv",
        "workspace",
        "plain",
        "traceback",
        "command",
        "name",
        "rest",
        "json",
        "stdout",
        "stderr",
        "environ",
        "clock",
        "_root",
    )

    def __init__(
        self,
        argv: list[str],
        *,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.argv = list(argv)
        #: --workspace as given; whether the global options were only that (the quick
        #: path's and the daemon's case: anything else is the Typer app's to read)
        self.workspace, self.traceback, self.plain, i = read_globals(self.argv)
        self.command = self.argv[i] if i < len(self.argv) else ""  # "" for none
        self.rest = self.argv[i + 1 :]
        #: the command as its messages name it (`config set`: see `full_command`)
        self.name = self.command
        head = self.rest[: self.rest.index("--")] if "--" in self.rest else self.rest
        self.json = "--json" in head
        self.stdout = sys.stdout if stdout is None else stdout
        self.stderr = sys.stderr if stderr is None else stderr
        self.environ = os.environ if environ is None else environ
        self.clock = time.time if clock is None else clock
        self._root: str | None = None

    def full_command(self, groups: Mapping[str, list[str]]) -> str:
        """The command as its messages name it: `search`, or `config set` for a group's
        subcommand (`groups`: each group's subcommands)."""
        if self.command in groups and self.rest and self.rest[0] in groups[self.command]:
            return f"{self.command} {self.rest[0]}"
        return self.command

    def writing_to(self, stdout: Any) -> Env:
        """This Env with another stdout (a pager's screen)."""
        other = Env.__new__(Env)
        for name in Env.__slots__:
            setattr(other, name, getattr(self, name))
        other.stdout = stdout
        return other

    def use_workspace(self, flag: str | None) -> None:
        """--workspace as the Typer app read it (the form the quick read may miss)."""
        if flag != self.workspace:
            self.workspace, self._root = flag, None

    def root(self, path: str | None = None) -> Path:
        """The workspace (memcli.store.workspace.find_root: --workspace,
        MEMCLI_WORKSPACE, the walk up, the per-user default), resolved once; `path`
        (a command's own PATH argument) is taken in the flag's place."""
        from memcli.store.workspace import Resolved, find_root

        if path:
            return Resolved(find_root(path, self.environ)).path()
        return Resolved(self.root_name()).path()

    def root_name(self) -> str:
        """`root()` as a string, without pathlib (the served path's client: pathlib
        brings re, fnmatch and enum, ≈ 5 ms)."""
        if self._root is None:
            from memcli.store.workspace import find_root

            self._root = find_root(self.workspace, self.environ)
        return self._root

    def memory(self) -> Any:
        """The workspace's Memory (one per workspace and settings in this process)."""
        from memcli.services.memory import shared_memory
        from memcli.store.workspace import Resolved

        self.root()
        return shared_memory(Resolved(self._root))

    @property
    def settings(self) -> Any:
        """The workspace's settings as they are now (memcli.toml, config.toml, the
        MEMCLI_* variables; read afresh, not a long-lived Memory's)."""
        from memcli.services.memory import Memory
        from memcli.store.workspace import Resolved

        self.root()
        return Memory(Resolved(self._root), env=self.environ).settings

    def now(self) -> dt.datetime:
        """The clock's time, local and aware (relative dates: `7d`, `today`)."""
        import datetime as dt

        return dt.datetime.fromtimestamp(self.clock()).astimezone()


def plain_stream(stream: Any) -> bool:
    """Whether Rich would write to `stream` as to a file (no colours, no cursor moves):
    not a terminal, and nothing in the environment says otherwise. When unsure, False
    (Rich decides). memcli.surfaces.cli.render asks this of the command's streams; the
    daemon's client asks it before letting the daemon print for it."""
    if os.environ.get("TTY_COMPATIBLE") or os.environ.get("FORCE_COLOR") is not None:
        return False
    if "idlelib" in sys.modules or "IPython" in sys.modules:
        return False
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return True


def read_globals(argv: list[str]) -> tuple[str | None, bool, bool, int]:
    """(--workspace, --traceback, whether --workspace was the only global option, index
    of the command) of a command line."""
    workspace = None
    traceback = False
    plain = True
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg in ("-w", "--workspace") and i + 1 < len(argv):
            workspace = argv[i + 1]
            i += 2
            continue
        if arg.startswith("--workspace="):
            workspace = arg.split("=", 1)[1]
        elif arg == "--traceback":
            traceback, plain = True, False
        else:
            plain = False
        i += 1
    return workspace, traceback, plain, i


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
