"""An index other clones of the workspace write too (Milvus): the writer lease around a
sync, and the ids this clone's files have held.

memcli.services.indexing syncs inside `writing(backend, wait)`: a backend with a writer
lease (memcli.index.lease.LeasedWrites) takes it at the sync's first write and gives it
back when the sync ends; the local backend needs none (the index lock serializes the
writers of one clone). A sync of a shared index never deletes an entry this clone's
files never held (another clone's, not pulled yet): `SeenIds` is what they held at
some sync (`.memcli/index/seen-ids`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

from memcli.index.lease import LeasedWrites, WriterConflict
from memcli.store.files import atomic_write

SEEN_FILE = "seen-ids"
#: how long a command that writes the index (`index`, the watcher) waits for another
#: live writer of the workspace (another clone's sync) before it gives up
WRITE_WAIT_SECONDS = 15.0

__all__ = ["SEEN_FILE", "WRITE_WAIT_SECONDS", "SeenIds", "WriterConflict", "behind", "writing"]


def is_shared(backend: object) -> bool:
    """Other clones write this backend too."""
    return isinstance(backend, LeasedWrites) and bool(backend.shared)


def writing(backend: object, wait: float) -> contextlib.AbstractContextManager[None]:
    """The block that writes `backend` in one sync (its lease, if it has one)."""
    if isinstance(backend, LeasedWrites):
        return backend.writing(wait)
    return contextlib.nullcontext()


def behind(conflict: WriterConflict) -> str:
    """The notice of a read that could not bring the index up to date."""
    return (
        f"{conflict.where}: searched the index as it is, behind the files: "
        f"{conflict.holder} is writing it (one writer per workspace); the next command "
        "catches up once it is done"
    )


class SeenIds:
    """Ids this clone's files have held at some sync of a shared index."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / SEEN_FILE

    def read(self) -> set[str]:
        try:
            return set(self.path.read_text(encoding="utf-8").split())
        except OSError:
            return set()

    def remember(self, ids: Iterable[str]) -> None:
        seen = self.read()
        fresh = set(ids) - seen
        if fresh:
            atomic_write(self.path, "\n".join(sorted(seen | fresh)) + "\n")
