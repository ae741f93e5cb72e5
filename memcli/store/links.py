"""The one rule for links in a workspace (docs/security.md, Links).

A curated file, archive.md, `episodes/`, `conversations/` (and the notes in them) or
`.memcli/` may be a symlink: a cloned repository can commit one. memcli follows it only
when its target is a regular file (a directory, for the folders)

- inside the workspace (not in its `.git/`) and owned by the workspace's owner, or
- outside it, when the person trusted the workspace (`memcli trust`) and owns the target
  (memory.md kept in a dotfiles repository).

Anything else is refused with one error naming the link and its target; nothing is read
or written. A file of the workspace that another user owns (a link's target or the file
itself) is never read as the person's memory either, and memcli makes no link inside
`.memcli/`, so one there is refused (`check_state`). Every reader and writer asks here:
`Store` (its reads, its guarded writes, its `.memcli/`), the hooks and the watcher (their
files in `.memcli/`), the MCP resources (`read_workspace_file`, which adds the regular
file check and the size limit of memcli.store.atomic.read_bounded) and the git merge
driver (read_bounded). Writes go to the target `follow` returns, by temp file and rename
beside it, never through an open of the link.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from memcli.core.errors import WorkspaceError

if TYPE_CHECKING:
    from memcli.core.registry import Registry

__all__ = [
    "LinkRefused",
    "check_state",
    "follow",
    "kept_by",
    "owner_problem",
    "read_settings",
]



class LinkRefused(WorkspaceError):
    """A link (or a file another user owns) memcli will not follow or read."""


def follow(
    root: Path | str,
    name: str,
    *,
    folder: bool = False,
    keeps: Collection[str] | Callable[[], Collection[str]] = (),
) -> Path:
    """Where workspace file `name` (a folder with `folder`) is read and written: `root /
    name` when no part of that path is a link (one lstat per part), else the target the
    rule allows. LinkRefused names the link, its target and why. A link whose target
    does not exist is followed only inside the workspace (reads find nothing there).
    `keeps`: the other names memcli keeps in the workspace (the Store's registry, the
    archive, the folders, `.memcli/`): a link inside the workspace to one of them (or
    into one) is refused, two names for one file would lose entries (`memory.md ->
    archive.md`: a forget's archive write overwrites the file its removal wrote)."""
    path = os.path.join(root, name)
    here = os.fspath(root)
    for part in name.split("/"):
        here = os.path.join(here, part)
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            return Path(path)  # missing: nothing below it is a link
        if stat.S_ISLNK(mode):
            return Path(_judge(os.fspath(root), path, here, folder, (name, keeps)))
    return Path(path)


def _judge(
    root: str,
    path: str,
    link: str,
    folder: bool,
    kept: tuple[str, Collection[str] | Callable[[], Collection[str]]],
) -> str:
    """The real target of `path` (which passes through the link `link`), if allowed."""
    real_root = os.path.realpath(root)
    target = os.path.realpath(path)
    shown = link if link == path else f"{link} (on the way to {path})"
    try:
        st = os.stat(target)
    except OSError:
        st = None
    inside = _within(target, real_root)
    if inside and _within(target, os.path.join(real_root, ".git")):
        raise _refused(shown, target, "it points into the workspace's .git folder")
    if inside:
        name, keeps = kept
        keeps = keeps() if callable(keeps) else keeps  # asked only when a link is found
        rel = os.path.relpath(target, real_root).replace(os.sep, "/")
        if rel != name and (rel in keeps or rel.split("/")[0] in keeps):
            raise _refused(
                shown,
                target,
                f"its target is {rel}, which memcli keeps under its own name (two names for "
                "one file lose entries)",
            )
    if st is None:
        if inside:
            return target
        raise _refused(shown, target, "its target outside the workspace does not exist")
    wanted = stat.S_ISDIR if folder else stat.S_ISREG
    if not wanted(st.st_mode):
        kind = "a directory" if folder else "a regular file"
        raise _refused(shown, target, f"its target is not {kind}")
    if inside:
        problem = owner_problem(real_root, st.st_uid)
        if problem:
            raise _refused(shown, target, f"its target {problem}")
        return target
    from memcli.store.trust import approved_link

    if st.st_uid != os.geteuid():
        raise _refused(
            shown, target, f"its target outside the workspace belongs to {_user(st.st_uid)}"
        )
    if not approved_link(Path(root), link):
        raise _refused(
            shown,
            target,
            "it leads outside the workspace, which you have not trusted with this link (one "
            "made or changed after `memcli trust`, by a `git pull` say, needs approving again)",
            hint=f"a link you made yourself (memory.md kept in a dotfiles repository): "
            f"`memcli trust {root}` lets memcli follow it; one you did not make (a cloned "
            "repository's): remove it",
        )
    return target


STATE_DEPTH = 3  # .memcli/history/objects/ab: the deepest folder memcli writes into


def state_link(state: Path | str, depth: int = STATE_DEPTH) -> str | None:
    """The first link inside `.memcli/` (at `state`), looking `depth` folders down
    without following any, or None. memcli makes no links there: one is a cloned
    repository's (`.memcli/history/log.jsonl -> ~/.bashrc`), and memcli's opens of
    logs and locks would follow it. A scandir per folder (a few, and the ≤ 256 object
    folders of the history)."""
    try:
        entries = list(os.scandir(state))
    except OSError:
        return None
    for entry in entries:
        if entry.is_symlink():
            return entry.path
    if depth > 1:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                found = state_link(entry.path, depth - 1)
                if found:
                    return found
    return None


def check_state(root: Path | str, state: Path) -> Path:
    """`state` (`.memcli/`, as `follow` resolved it), or LinkRefused naming a link
    inside it."""
    found = state_link(state)
    if found is not None:
        raise _refused(
            found,
            os.path.realpath(found),
            "memcli makes no links inside .memcli/ (derived state it rebuilds)",
            hint=f"remove {found}: memcli makes what it needs there again",
        )
    return state


def kept_by(files: Registry) -> frozenset[str]:
    """The names a registry's workspace keeps (`kept_names`)."""
    from memcli.core.names import STATE_DIR

    return frozenset((*files.names, files.archive, files.config, *files.log_dirs, STATE_DIR))


def read_settings(path: Path, root: Path | str | None = None) -> bytes:
    """The bytes of a settings file (memcli.store.atomic.read_settings: a regular file,
    bounded, never blocking; FileNotFoundError when there is none). With `root`, `path`
    is that workspace's memcli.toml and its link is judged by the rule (`follow`);
    without, a link is followed as it is (the person's own config.toml)."""
    from memcli.store.atomic import read_settings as read_file

    return read_file(path, follow(root, path.name) if root is not None else None)


def owner_problem(root: str | os.PathLike[str], uid: int) -> str | None:
    """Why a file owned by `uid` is not the memory of the workspace at `root` (owned by
    someone else than the workspace directory), or None."""
    if os.name == "nt":
        return None
    try:
        owner = os.stat(root).st_uid
    except OSError:
        return None
    if uid == owner:
        return None
    return f"belongs to {_user(uid)}, not to the workspace's owner {_user(owner)}"


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _refused(shown: str, target: str, why: str, hint: str | None = None) -> LinkRefused:
    return LinkRefused(
        f"{shown}: a link to {target}; memcli does not follow it: {why}; nothing was read "
        "or written",
        hint=hint
        or "replace the link with the file itself, or remove it (a cloned repository can "
        "commit links; memcli never reads or writes outside the workspace through one)",
    )


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"
