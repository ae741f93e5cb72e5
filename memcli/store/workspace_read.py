"""Reading a workspace file from outside the Store (the MCP resources, the hooks' check
of the curated files): under the rule for links and owners (memcli.store.links), the
names the workspace's registry keeps, and the size limit."""

from __future__ import annotations

import os
from pathlib import Path

from memcli.store.links import LinkRefused, follow, kept_by, owner_problem

__all__ = ["kept_names", "read_workspace_file"]


def kept_names(root: Path | str) -> frozenset[str]:
    """The names memcli keeps in the workspace at `root` (its registry's files, the
    archive, memcli.toml, the log folders, the state folder): a link inside the
    workspace leads to none of them but its own (`follow`'s `keeps`). A memcli.toml that
    cannot be read gives the built-in names (the command reading it says what is wrong)."""
    from memcli.core.errors import ConfigError
    from memcli.core.registry import BUILTIN
    from memcli.store.config_files import load_registry

    try:
        return kept_by(load_registry(Path(root)))
    except ConfigError:
        return kept_by(BUILTIN)


def read_workspace_file(root: Path | str, name: str) -> str:
    """The text of workspace file `name` for a reader outside the Store (the MCP
    resources): the link rule, the owner rule, a regular file, the size limit
    (memcli.store.atomic.read_bounded) and UTF-8; "" when it does not exist yet."""
    from memcli.store.atomic import decode_text, read_bounded

    path = follow(root, name, keeps=lambda: kept_names(root))
    try:
        data = read_bounded(path)
        uid = os.stat(path).st_uid
    except FileNotFoundError:
        return ""
    problem = owner_problem(root, uid)
    if problem:
        raise LinkRefused(
            f"{path}: {problem}; memcli does not read it as your memory; nothing was read",
            hint="if it is yours, `chown` it; otherwise move it out of the workspace",
        )
    return decode_text(data, path)
