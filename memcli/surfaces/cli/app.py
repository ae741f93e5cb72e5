"""The Typer app: parse options into a request, make one library call, render the result.

The app, its global options and its error handling are in memcli.surfaces.cli.base; the
commands, one module per group, in memcli.surfaces.cli.commands (importing them here
registers them, in the order `memcli --help` lists them). The commands a watch daemon
serves (search, inject, get) run through memcli.surfaces.cli.served, as the quick path
and the daemon do.
"""

from __future__ import annotations

from memcli.core.errors import ExitCode
from memcli.surfaces.cli.base import Format, Mode, app

# isort: off
# in the order `memcli --help` lists them
from memcli.surfaces.cli.commands import entries  # noqa: F401 - registers its commands
from memcli.surfaces.cli.commands import search  # noqa: F401
from memcli.surfaces.cli.commands import watch  # noqa: F401
from memcli.surfaces.cli.commands import maintain  # noqa: F401
from memcli.surfaces.cli.commands import review  # noqa: F401
from memcli.surfaces.cli.commands import files  # noqa: F401
from memcli.surfaces.cli.commands import portability  # noqa: F401
from memcli.surfaces.cli.commands import setup  # noqa: F401
# isort: on

__all__ = ["ExitCode", "Format", "Mode", "app", "main"]


def main() -> None:
    """Console entry point."""
    app()
