"""Finding and creating workspaces (DESIGN §1)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memcli.core.errors import WorkspaceError
from memcli.core.models import CONFIG_FILE, LEARNINGS_FILE, MEMORY_FILE
from memcli.core.paths import data_dir

STATE_DIR = ".memcli"

MEMORY_TEMPLATE = """---
memcli: 1
---
# Memory

## Preferences

## Facts

## Patterns

## Reflections
"""

LEARNINGS_TEMPLATE = """---
memcli: 1
---
# Learnings

## Skills

## Lessons
"""


def default_workspace(env: Mapping[str, str]) -> Path:
    """The per-user workspace (memcli.core.paths: the XDG data home on Linux)."""
    return data_dir(env)


def resolve_workspace(
    flag: str | Path | None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path:
    """First match wins: the flag, MEMCLI_WORKSPACE, the nearest ancestor of `cwd` with
    memory.md or memcli.toml, then the per-user default."""
    env = os.environ if env is None else env
    if flag:
        return _checked(Path(flag).expanduser(), "--workspace")
    if env.get("MEMCLI_WORKSPACE"):
        return _checked(Path(env["MEMCLI_WORKSPACE"]).expanduser(), "MEMCLI_WORKSPACE")
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / MEMORY_FILE).is_file() or (candidate / CONFIG_FILE).is_file():
            return candidate
    return default_workspace(env)


def _checked(path: Path, origin: str) -> Path:
    if path.exists() and not path.is_dir():
        raise WorkspaceError(
            f"{path}: the workspace given by {origin} is a file, not a directory",
            hint="point it at a directory, or run `memcli init PATH` to create one",
        )
    return path.resolve()


def require_workspace(path: Path) -> Path:
    """Fail with a hint when `path` is not an initialised workspace."""
    if not path.is_dir():
        raise WorkspaceError(
            f"{path}: no memcli workspace here (the directory does not exist)",
            hint=f"run `memcli init {path}` to create it, or pass --workspace PATH",
        )
    if not (path / MEMORY_FILE).exists() and not (path / LEARNINGS_FILE).exists():
        raise WorkspaceError(
            f"{path}: no memcli workspace here (no memory.md or learnings.md)",
            hint=f"run `memcli init {path}` to create one, or pass --workspace PATH",
        )
    return path


def init_workspace(path: Path) -> list[Path]:
    """Create a workspace (idempotent); returns the files it created."""
    if path.exists() and not path.is_dir():
        raise WorkspaceError(f"{path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        created = []
        for name, template in (
            (MEMORY_FILE, MEMORY_TEMPLATE),
            (LEARNINGS_FILE, LEARNINGS_TEMPLATE),
            (".gitignore", f"{STATE_DIR}/\n"),
        ):
            target = path / name
            if not target.exists():
                target.write_text(template, encoding="utf-8")
                created.append(target)
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot create the workspace ({exc.strerror})") from None
    return created
