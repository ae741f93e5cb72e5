"""What one command runs with, made once by the entry point and passed down.

An `Env` holds the command line as read once (the global options, the command, its
arguments), the output streams, the process environment, the clock, and the workspace
with its settings, resolved on first use and then kept. memcli.surfaces.cli.fastpath
makes one per process (the Typer app makes its own when called directly, as tests
do) and hands it to the hooks, the daemon's client, the quick path and the Typer app
(as Click's context object); memcli.surfaces.cli.render writes to its streams.

Builtin modules only: the daemon fast path imports this.
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
