"""Shell completion of option values: entry types for `--type`, entry ids for `ID`.

A completion runs at every Tab, so it reads the workspace's files as they are (no
index, no model) and never fails: any error completes nothing.
"""

from __future__ import annotations

from typing import Any


def _memory(ctx: Any) -> Any:
    from memcli.services.memory import Memory

    root = ctx.find_root() if ctx is not None else None
    workspace = root.params.get("workspace") if root is not None else None
    return Memory(workspace)


def types(ctx: Any, incomplete: str) -> list[str]:
    """The types this workspace knows (built-in ones and its sections') starting with
    `incomplete`."""
    from memcli.core.models import KNOWN_TYPES

    try:
        from memcli.surfaces.cli.args import workspace_types

        known = workspace_types(_memory(ctx))
    except Exception:  # noqa: BLE001 - a completion never fails; built-in types then
        known = set(KNOWN_TYPES)
    prefix = incomplete.rsplit(",", 1)
    head = prefix[0] + "," if len(prefix) == 2 else ""
    tail = prefix[-1].casefold()
    return [head + t for t in sorted(known) if t.startswith(tail)]


def _ids(ctx: Any, incomplete: str, archived: bool) -> list[tuple[str, str]]:
    try:
        entries = _memory(ctx).entries(include_archived=archived)
    except Exception:  # noqa: BLE001 - a completion never fails
        return []
    from memcli.core.models import ARCHIVE_FILE

    rows = []
    for entry in entries:
        if archived and entry.file != ARCHIVE_FILE:
            continue
        if entry.id.startswith(incomplete):
            rows.append((entry.id, " ".join(entry.text.split())[:60]))
    return rows


def ids(ctx: Any, incomplete: str) -> list[tuple[str, str]]:
    """(id, the start of its text) of the live entries whose id starts with `incomplete`."""
    return _ids(ctx, incomplete, archived=False)


def archived_ids(ctx: Any, incomplete: str) -> list[tuple[str, str]]:
    """(id, text start) of archived entries, for `restore`."""
    return _ids(ctx, incomplete, archived=True)
