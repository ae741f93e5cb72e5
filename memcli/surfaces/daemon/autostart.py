"""A watcher for the agents' path when none runs (DESIGN §9): what the prompt hooks and
`memcli mcp` call so that the prompts after the first are served in tens of
milliseconds, with no manual `memcli watch`.

`ensure` starts `memcli watch --idle-exit MINUTES` for a workspace when no watcher
answers on its socket: detached (a session of its own, its output appended to
`.memcli/watch.log`), once (a marker, `.memcli/watch-autostart`, created exclusively and
taken as "being started" for STARTING_FOR seconds; the watcher's own lease refuses a
second one anyway), never waited for (the caller answers its prompt in-process
meanwhile), and off with `[watch] autostart = false` (MEMCLI_WATCH_AUTOSTART=0). A
watcher started this way leaves after `[watch] idle_exit_minutes` without a request or a
change. The workspaces it started one for are listed in the user's config folder
(`autostarted`, beside the approvals), so that `memcli uninstall` stops them
(`stop_started`).

Builtin modules only at import time: the hook imports this on every prompt.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping

#: seconds a start is taken to be under way (the model's load and a first indexing)
STARTING_FOR = 120.0
MARKER = "watch-autostart"
LOG = "watch.log"
#: the file (in the user's config folder) listing the workspaces a watcher was started for
STARTED_LIST = "autostarted"


def ensure(root: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> str:
    """Start a watcher for the workspace at `root` unless one answers, is being started,
    or the settings say not to: "running", "starting", "started", "off", "no workspace",
    or "failed: WHY". Never raises, never waits for the watcher."""
    try:
        return _ensure(os.fspath(root), os.environ if env is None else env)
    except Exception as exc:  # noqa: BLE001 - only an attempt: the caller's answer matters
        return f"failed: {exc}"


def _ensure(root: str, env: Mapping[str, str]) -> str:
    from memcli.core.names import MARKERS

    if env.get("MEMCLI_NO_DAEMON"):
        return "off"  # no watcher would be asked anyway
    if not any(os.path.isfile(os.path.join(root, name)) for name in MARKERS):
        return "no workspace"
    if answers(root):
        return "running"
    state = os.path.join(root, ".memcli")
    marker = os.path.join(state, MARKER)
    if _young(marker):
        return "starting"  # before the settings are read: each prompt meanwhile asks
    from pathlib import Path

    from memcli.store.config import load_settings

    settings = load_settings(Path(root), env).watch
    if not settings.autostart:
        return "off"
    os.makedirs(state, exist_ok=True)
    if not _claim(marker):
        return "starting"
    spawn(root, settings.idle_exit_minutes, env)
    _remember(root, env)
    return "started"


def answers(root: str) -> bool:
    """Whether a process listens on the workspace's watcher socket (a stale socket, one
    a crashed watcher left, refuses the connection)."""
    import _socket

    from memcli.surfaces.protocol import socket_file

    path = socket_file(root)
    if not os.path.exists(path):
        return False
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(1.0)
        sock.connect(path)
        return True
    except OSError:
        return False
    finally:
        sock.close()


def _young(marker: str) -> bool:
    """Whether the marker was made less than STARTING_FOR seconds ago."""
    import time

    try:
        return time.time() - os.stat(marker).st_mtime < STARTING_FOR
    except OSError:
        return False


def _claim(marker: str) -> bool:
    """Whether this process may start the watcher: it created the marker, or replaced
    one older than STARTING_FOR (a start that failed, or a watcher that left since)."""
    import time

    for _ in range(2):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            try:
                if time.time() - os.stat(marker).st_mtime < STARTING_FOR:
                    return False
                os.unlink(marker)
            except FileNotFoundError:
                pass
            continue
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return True
    return False


def spawn(root: str, idle_minutes: float, env: Mapping[str, str]) -> int:
    """Start `memcli watch --idle-exit MINUTES` for `root`, detached, its output appended
    to `.memcli/watch.log`; its pid (not waited for)."""
    import subprocess
    import sys
    import time

    from memcli.surfaces.blas import for_children

    log = os.path.join(root, ".memcli", LOG)
    with open(log, "ab") as handle:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        handle.write(f"{stamp} started for an agent (pid {os.getpid()})\n".encode())
        handle.flush()
        proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", root, "watch"]
            + ["--idle-exit", f"{idle_minutes:g}"],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=for_children(env),  # its own BLAS threads (memcli.surfaces.blas)
            start_new_session=True,  # outlives the hook; the host's signals do not reach it
            close_fds=True,
        )
    return proc.pid


def _started_list(env: Mapping[str, str]) -> str:
    from memcli.core.paths import config_dir

    return os.path.join(config_dir(env), STARTED_LIST)


def _remember(root: str, env: Mapping[str, str]) -> None:
    """Add `root` to the user's list of workspaces a watcher was started for."""
    path = _started_list(env)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if root in started(env):
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(root + "\n")


def started(env: Mapping[str, str] | None = None) -> list[str]:
    """The workspaces a watcher was started for (the user's list)."""
    try:
        with open(_started_list(os.environ if env is None else env), encoding="utf-8") as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        return []


def stop_started(env: Mapping[str, str] | None = None) -> list[tuple[str, int]]:
    """Stop the watchers started for agents (`memcli uninstall`): (workspace, pid) of
    each that was running; the list is emptied."""
    import contextlib
    from pathlib import Path

    from memcli.surfaces.daemon.service import stop_running

    env = os.environ if env is None else env
    stopped = []
    for root in started(env):
        try:
            pid = stop_running(Path(root))
        except (OSError, RuntimeError):
            continue
        if pid is not None:
            stopped.append((root, pid))
    with contextlib.suppress(OSError):
        os.unlink(_started_list(env))
    return stopped
