"""Finding and creating workspaces (docs/getting-started.md, Workspaces).

The walk up from the current directory takes the nearest directory holding memory.md or
memcli.toml, but never one the user does not own or that others can write (git's
safe.directory rule): it stops at the first such directory, says once on stderr which
workspace it did not take and why, and the per-user default is used. A workspace named
with --workspace or MEMCLI_WORKSPACE is taken as given.

This is the one resolver: the CLI's environment (memcli.surfaces.cli.env) resolves a
command's workspace with it once and passes the answer down as `Resolved`, which it
then takes as is; the hooks use `existing_root`. Builtin modules only up to the answer
(`find_root`, `existing_root`): the hooks resolve the workspace with it on every
prompt before handing the prompt to the daemon, and a served command before asking the
daemon. A workspace named by --workspace or MEMCLI_WORKSPACE imports nothing more (the
file names, memcli.core.names, only where a directory is examined).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "Resolved",
    "default_workspace",
    "existing_root",
    "find_root",
    "resolve_workspace",
]

#: directories already named in a notice by this process (one notice each)
_told: set[str] = set()


class Resolved(str):
    """A workspace directory `find_root` already gave for this command: taken as is
    (resolved once per command, then passed down)."""

    __slots__ = ()

    def path(self) -> Path:
        from pathlib import Path

        return Path(self)


def default_workspace(env: Mapping[str, str]) -> Path:
    """The per-user workspace (memcli.core.paths: the XDG data home on Linux)."""
    from memcli.core.paths import data_dir

    return data_dir(env)


def resolve_workspace(
    flag: str | Path | None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path:
    """First match wins: the flag, MEMCLI_WORKSPACE, the nearest safe ancestor of `cwd`
    with memory.md or memcli.toml, then the per-user default."""
    from pathlib import Path

    return Path(find_root(flag, os.environ if env is None else env, cwd))


def find_root(
    flag: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None = None,
) -> str:
    """resolve_workspace's answer as a resolved path string (os.path only). A relative
    flag is taken relative to `cwd`. WorkspaceError when the given path is a file."""
    if isinstance(flag, Resolved):
        return str(flag)
    start = os.fspath(cwd) if cwd is not None else os.getcwd()
    for given, origin in ((flag, "--workspace"), (env.get("MEMCLI_WORKSPACE"), "MEMCLI_WORKSPACE")):
        if given:
            path = os.path.realpath(os.path.join(start, os.path.expanduser(os.fspath(given))))
            if os.path.exists(path) and not os.path.isdir(path):
                from memcli.core.errors import WorkspaceError

                raise WorkspaceError(
                    f"{path}: the workspace given by {origin} is a file, not a directory",
                    hint="point it at a directory, or run `memcli init PATH` to create one",
                )
            return path
    found, refused = discover(start)
    if found is not None:
        return found
    fallback = str(default_workspace(env))
    if refused is not None:
        _tell(refused, fallback)
    return fallback


def is_workspace(root: str | os.PathLike[str]) -> bool:
    """Whether the directory holds a workspace (a built-in curated file is there:
    memory.md or learnings.md)."""
    from memcli.core.names import CURATED_BUILTIN

    return any(os.path.exists(os.path.join(root, name)) for name in CURATED_BUILTIN)


def existing_root(
    flag: str | None, env: Mapping[str, str], cwd: str | None = None
) -> tuple[str, str | None]:
    """(`find_root`'s answer, None), or (it, what is wrong) when no workspace is there:
    the hooks' resolution, which never raises for a missing workspace."""
    root = find_root(flag, env, cwd)
    if is_workspace(root):
        return root, None
    return root, f"no memcli workspace at {root} ({init_hint(root)})"


def discover(start: str) -> tuple[str | None, tuple[str, str, str] | None]:
    """Walk up from `start`: (the nearest workspace directory the walk may take, None),
    or (None, (a workspace directory it did not take, the directory it stopped at, why))
    when the walk stopped at a directory that is not the user's alone before reaching
    it, or (None, None) when there is no workspace above `start`."""
    from memcli.core.names import MARKERS

    here = os.path.realpath(start)
    stop: tuple[str, str] | None = None
    while True:
        if stop is None:
            problem = unsafe_dir_problem(here)
            if problem is not None:
                stop = (here, problem)
        if any(os.path.isfile(os.path.join(here, name)) for name in MARKERS):
            return (here, None) if stop is None else (None, (here, *stop))
        parent = os.path.dirname(here)
        if parent == here:
            return None, None
        here = parent


def unsafe_dir_problem(path: str) -> str | None:
    """Why the walk up must not take `path` or go past it, or None: it must belong to
    the user (even root: another uid's directory is refused) and no one else may write
    in it (no group or world write bit; a group that is the user's own private group,
    named as the user, may). None on Windows (no such bits)."""
    if os.name == "nt":
        return None
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror})"
    uid = os.geteuid()
    if st.st_uid != uid:
        return f"it belongs to {_user(st.st_uid)}, not to you ({_user(uid)})"
    if st.st_mode & 0o002:
        return f"anyone can write in it (mode {st.st_mode & 0o7777:04o})"
    if st.st_mode & 0o020 and not _own_group(st.st_gid):
        return f"its group can write in it (mode {st.st_mode & 0o7777:04o})"
    return None


def _own_group(gid: int) -> bool:
    """`gid` is the user's private group: their primary group, named as they are, with
    no other members listed (user-private-group systems, umask 002)."""
    import grp
    import pwd

    try:
        group = grp.getgrgid(gid)
        me = pwd.getpwuid(os.geteuid())
    except KeyError:
        return False
    return gid == me.pw_gid and group.gr_name == me.pw_name and not set(group.gr_mem) - {me.pw_name}


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _tell(refused: tuple[str, str, str], fallback: str) -> None:
    """One notice per directory and process: which workspace was not taken, and why."""
    found, stop, problem = refused
    if found in _told:
        return
    _told.add(found)
    why = problem if stop == found else f"the walk up stopped at {stop}: {problem}"
    sys.stderr.write(
        f"notice: not using {found} as the workspace: {why} (someone else could have put "
        f"its files there); using {fallback}. If it is yours to use, name it: "
        f"`memcli -w {found} ...` or MEMCLI_WORKSPACE={found}\n"
    )


def init_hint(path: Path | str) -> str:
    """What to tell a user whose `path` holds no workspace: `memcli init PATH`, except
    where the walk would never take it (another user's, or writable by others)."""
    text = os.fspath(path)
    probe = text
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    problem = unsafe_dir_problem(probe)
    if problem is None:
        return f"run `memcli init {text}` to create it, or pass --workspace PATH"
    return (
        f"{probe} is not yours alone ({problem}): keep your memory in a workspace of your "
        f"own, `memcli init` with no path creates the per-user one, or pass --workspace PATH"
    )


def require_workspace(path: Path) -> Path:
    """Fail with a hint when `path` is not an initialised workspace."""
    from memcli.core.errors import WorkspaceError
    from memcli.core.names import CURATED_BUILTIN

    if not path.is_dir():
        raise WorkspaceError(
            f"{path}: no memcli workspace here (the directory does not exist)",
            hint=init_hint(path),
        )
    if not is_workspace(path):
        raise WorkspaceError(
            f"{path}: no memcli workspace here (no {' or '.join(CURATED_BUILTIN)})",
            hint=init_hint(path),
        )
    return path


def init_workspace(path: Path) -> list[Path]:
    """Create a workspace (idempotent): the built-in curated files and a .gitignore;
    returns the files it created."""
    from memcli.core.errors import WorkspaceError
    from memcli.core.names import STATE_DIR
    from memcli.core.registry import BUILTIN

    if path.exists() and not path.is_dir():
        raise WorkspaceError(f"{path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        created = []
        for name, template in (
            *((spec.name, spec.template()) for spec in BUILTIN.curated),
            (".gitignore", f"{STATE_DIR}/\n"),
        ):
            target = path / name
            if not os.path.lexists(target):  # a link, even one leading nowhere, is kept
                with open(target, "x", encoding="utf-8") as handle:  # never through a link
                    handle.write(template)
                created.append(target)
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot create the workspace ({exc.strerror})") from None
    return created
