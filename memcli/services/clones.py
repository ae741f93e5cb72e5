"""An index other clones of the workspace write too (Milvus): the writer lease around
a sync, and a read that finds another writer at work.

memcli.services.indexing syncs inside `writing(backend, wait)`: a backend with a writer
lease (memcli.index.lease.LeasedWrites) takes it at the sync's first write and gives it
back when the sync ends; the local backend needs none (the index lock serializes the
writers of one clone). A read syncs inside `reading(manager)`: another live writer
leaves the index as it is, with a notice. (What this clone's files held, so a sync never
deletes another clone's entry: memcli.services.seen.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a backend has a lease: a local read needs none of it
    from memcli.index.lease import WriterConflict

#: how long a command that writes the index (`index`, the watcher) waits for another
#: live writer of the workspace (another clone's sync) before it gives up
WRITE_WAIT_SECONDS = 15.0

__all__ = ["WRITE_WAIT_SECONDS", "behind", "is_shared", "reading", "writing"]


def _leased(backend: object) -> bool:
    """Whether `backend` has a writer lease (memcli.index.lease.LeasedWrites)."""
    if not hasattr(backend, "writing"):
        return False  # no lease without its `writing`: lease.py stays unimported
    from memcli.index.lease import LeasedWrites

    return isinstance(backend, LeasedWrites)


def is_shared(backend: object) -> bool:
    """Other clones write this backend too."""
    return _leased(backend) and bool(backend.shared)  # type: ignore[attr-defined]


def writing(backend: object, wait: float) -> contextlib.AbstractContextManager[None]:
    """The block that writes `backend` in one sync (its lease, if it has one)."""
    if _leased(backend):
        return backend.writing(wait)  # type: ignore[attr-defined]
    return contextlib.nullcontext()


def behind(conflict: WriterConflict) -> str:
    """The notice of a read that could not bring the index up to date."""
    return (
        f"{conflict.where}: searched the index as it is, behind the files: "
        f"{conflict.holder} is writing it (one writer per workspace); the next command "
        "catches up once it is done"
    )


@contextlib.contextmanager
def reading(manager: Any) -> Iterator[None]:
    """A read's sync (memcli.services.indexing.IndexManager.ensure): when another live
    process writes the shared index, the index is searched as it is; `manager.behind`
    names that writer, and `manager.notify` says so once per writer."""
    try:
        yield
    except Exception as exc:
        from memcli.index.lease import WriterConflict

        if not isinstance(exc, WriterConflict):
            raise
        if manager.behind != exc.holder:
            manager.notify(behind(exc))
        manager.behind = exc.holder or "another writer"
    else:
        manager.behind = None
