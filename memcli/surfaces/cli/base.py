"""What every command module of the Typer app shares: the app itself with its global
options, the error handling of its group, the options several commands take, and the
small helpers of a command (its Env, the workspace's Memory, stdin for `-`, a served
answer printed, a confirmation).

The command's environment (memcli.surfaces.cli.env.Env: the command line as read once,
the streams, the workspace resolved once) comes from the entry point as Click's context
object, or is made here when the app is called directly; `env()` gives it to a command.

Errors become exit codes and messages in memcli.surfaces.guard (`_Group.invoke` asks
it). Command modules (memcli.surfaces.cli.commands.*) register on `app`;
memcli.surfaces.cli.app imports them all.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Any

import typer
from typer.core import TyperGroup

from memcli.core.errors import ExitCode, MemcliError
from memcli.core.requests import (
    FORMATS,
    MODES,
)
from memcli.surfaces import guard
from memcli.surfaces.cli import complete, render, served
from memcli.surfaces.cli.env import Env

try:  # Typer ≥ 0.25 carries its own Click
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - older Typer on Click itself
    from click import get_current_context  # type: ignore[no-redef]


class Mode(StrEnum):  # core.requests.MODES: choices in --help, exit code 2 for others
    hybrid = "hybrid"
    semantic = "semantic"
    keyword = "keyword"


class Format(StrEnum):  # core.requests.FORMATS
    markdown = "markdown"
    xml = "xml"
    json = "json"


assert tuple(Mode) == MODES and tuple(Format) == FORMATS


class HelpGroup(TyperGroup):
    """A command group whose --help lists its commands in panels (memcli.surfaces.cli.
    helptext) with their whole first sentence, and whose unknown-command error suggests
    the command a person meant (`delete` → forget) and what to run."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        from memcli.surfaces.cli import helptext

        prefix = " ".join(ctx.command_path.split()[1:])
        rows: dict[str | None, list[tuple[str, str]]] = {}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            where = helptext.panel(f"{prefix} {name}".strip())
            rows.setdefault(where, []).append((name, command.get_short_help_str(10**6)))
        for title in (*helptext.PANELS, None):
            if rows.get(title):
                with formatter.section(title or "Commands"):
                    formatter.write_dl(rows[title])

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        from memcli.surfaces.cli import helptext

        if args and self.get_command(ctx, args[0]) is None and not args[0].startswith("-"):
            meant = helptext.suggest(args[0], list(self.commands))
            where = ctx.command_path
            message = f"no such command {args[0]!r}"
            if meant:
                message += f" (did you mean `{where} {meant}`?)"
            from memcli.core.errors import UsageError

            raise UsageError(message, hint=f"`{where} --help` lists the commands")
        return super().resolve_command(ctx, args)


class _Group(HelpGroup):
    """Every error becomes one message and exit code (memcli.surfaces.guard): domain
    errors and Ctrl-C in `invoke`, Click's usage errors in `main` (in memcli's words,
    memcli.surfaces.cli.usage); with --json, also the envelope's error on stdout."""

    def main(self, args: Any = None, *pos: Any, standalone_mode: bool = True, **kw: Any) -> Any:
        from memcli.surfaces.cli import helptext, usage
        from memcli.surfaces.cli.usage import click

        args = list(sys.argv[1:] if args is None else args)
        env = kw.pop("obj", None)
        if not isinstance(env, Env):  # the app called directly (tests): its own Env
            env = Env(args)
        helptext.attach(self)
        env.name = env.full_command(_groups(self))
        with render.using(env):
            try:
                result = super().main(args, *pos, standalone_mode=False, obj=env, **kw)
                code = result if isinstance(result, int) else 0
            except click.NoArgsIsHelpError as exc:  # `memcli`, `memcli config`
                exc.show()
                code = exc.exit_code
            except click.ClickException as exc:
                code = _report(usage.from_click(exc, env.name))
            except typer.Abort:  # Ctrl-D at a prompt
                render.error("aborted; nothing was changed")
                code = ExitCode.ERROR
        if standalone_mode:
            sys.exit(code)
        return code

    def invoke(self, ctx: typer.Context) -> Any:
        if getattr(ctx, "_protected_args", None):  # a command follows (not bare options)
            from memcli.store.store import new_command

            new_command()  # each warning once per command (CliRunner runs many in one process)
        try:
            return super().invoke(ctx)
        except (MemcliError, KeyboardInterrupt, BrokenPipeError, UnicodeError) as exc:
            if ctx.find_object(Env).traceback and guard.shown(exc):
                raise
            raise typer.Exit(_report(exc)) from None


def _report(exc: BaseException) -> int:
    """Print a reported error (message; --json: the envelope too); its exit code."""
    report = guard.describe(exc) or {"error": str(exc), "exit": 1, "code": "error",
                                     "message": str(exc), "hint": None}  # fmt: skip
    render.fail(report)
    return int(report["exit"])  # type: ignore[call-overload]


def _groups(group: Any) -> dict[str, list[str]]:
    """The command groups of the app (config, git) with their subcommands' names."""
    return {
        name: list(sub.commands)
        for name, sub in group.commands.items()
        if isinstance(getattr(sub, "commands", None), dict)
    }


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


JsonOpt = typer.Option(
    False, "--json", help='One JSON document on stdout: {"ok": true, "command": …, "data": …}.'
)
NoPagerOpt = typer.Option(
    False,
    "--no-pager",
    help="Print long output straight to the terminal ($MEMCLI_PAGER / $PAGER / less -FRX).",
)


class ListSort(StrEnum):
    """Orders of `memcli list`."""

    file = "file"
    created = "created"
    updated = "updated"
    importance = "importance"


def env() -> Env:
    """The running command's Env."""
    found = get_current_context().find_object(Env)
    assert found is not None, "a command runs under _Group.main, which makes its Env"
    return found


def memory() -> Any:
    """The Memory of the command's workspace (resolved once per command)."""
    return env().memory()


def usage_error(message: str, hint: str | None = None) -> None:
    """Report a usage mistake the option parser cannot see (`OPTION: what is wrong`);
    exit code 2. The hint defaults to the command's --help."""
    from memcli.core.errors import UsageError

    raise UsageError(message, hint=hint or f"`memcli {render.command()} --help` lists the options")


def stdin_or(text: str) -> str:
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
    autocompletion=complete.types,
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
        render.write(f"memcli {number}\n")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def main_options(
    ctx: typer.Context,
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
    command = ctx.find_object(Env)
    assert command is not None
    command.use_workspace(workspace)  # as Click read it
    command.traceback = traceback


def show(data: dict[str, Any], json_out: bool, explain: bool = False, pager: bool = True) -> None:
    """Print a served command's answer (memcli.surfaces.cli.served.show)."""
    view = {"json": json_out, "explain": explain, "no_pager": not pager}
    code = served.show(data, view, env())
    if code:
        raise typer.Exit(code)


def confirmed(yes: bool, json_out: bool, what: str, question: str) -> bool:
    """Whether to apply: --yes, or a person said so on a terminal. Never silently in a
    pipe: there what was shown is a preview (a note says so, exit 0); for --json, whose
    reader sees no note, an error naming --yes."""
    if yes:
        return True
    if json_out:
        raise MemcliError(
            f"{what} was not applied: pass --yes to apply it (nothing was changed)",
            hint="--dry-run shows the plan without this message",
        )
    if not (sys.stdin.isatty() and env().stdout.isatty()):
        render.note(f"preview: nothing was changed (no terminal to ask); --yes applies the {what}")
        return False
    if typer.confirm(question, default=False):
        return True
    render.info("nothing was changed")
    return False
