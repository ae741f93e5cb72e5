"""What every command module of the Typer app shares: the app itself with its global
options, the error handling of its group, the options several commands take, and the
small helpers of a command (the workspace's Memory, stdin for `-`, a served answer
printed, a confirmation).

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
from memcli.surfaces.cli import render, served


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


def memory() -> Any:
    from memcli.services.memory import shared_memory

    return shared_memory(state.workspace)


def usage_error(message: str) -> None:
    """Report a usage mistake the option parser cannot see; exit code 2."""
    render.error(message)
    raise typer.Exit(ExitCode.USAGE)


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


def show(data: dict[str, Any], json_out: bool, explain: bool = False) -> None:
    """Print a served command's answer (memcli.surfaces.cli.served.show)."""
    code = served.show(data, {"json": json_out, "explain": explain})
    if code:
        raise typer.Exit(code)


def confirmed(yes: bool, json_out: bool, what: str, question: str) -> bool:
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
