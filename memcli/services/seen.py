"""Shared index backends (Milvus): the ids this clone's files have held at some sync
(`.memcli/index/seen-ids`), so an entry another machine indexed and this clone has not
pulled yet is never taken for a deletion of ours (memcli.services.indexing)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memcli.store.files import atomic_write

SEEN_FILE = "seen-ids"


def seen_ids(directory: Path) -> set[str]:
    """The ids recorded in `directory` (none when the file is missing or unreadable)."""
    try:
        return set((directory / SEEN_FILE).read_text(encoding="utf-8").split())
    except OSError:
        return set()


def remember_seen(directory: Path, ids: Iterable[str]) -> None:
    """Add `ids` to those recorded (written only when one is new)."""
    seen = seen_ids(directory)
    fresh = set(ids) - seen
    if fresh:
        atomic_write(directory / SEEN_FILE, "\n".join(sorted(seen | fresh)) + "\n")
