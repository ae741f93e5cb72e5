"""One BLAS thread for a one-off read: numpy's OpenBLAS starts a thread for each core
when it is imported, and a read then computes one matrix-vector product with them (on
the 2-core machine of docs/benchmarks.md, one thread took a cold search from 444 to 386
ms of CPU). The entry point sets OPENBLAS_NUM_THREADS=1 for the reads it
answers in-process (search, inject, get, the hooks: memcli.surfaces.cli.fastpath), only
when it is not set already; the processes those start (a watcher, an indexing) get the
environment without it. A served command (a watcher answers) never imports this."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping

VARIABLE = "OPENBLAS_NUM_THREADS"
#: commands that read once and end (memcli.surfaces.cli.fastpath)
ONE_OFF = frozenset({"search", "inject", "get", "hook"})
_set_here = False


def one_thread_for(command: str | None) -> None:
    """Set VARIABLE to 1 for `command` when it is a one-off read and VARIABLE is unset
    (before numpy is imported: OpenBLAS reads it when it loads)."""
    global _set_here
    if command in ONE_OFF and VARIABLE not in os.environ:
        os.environ[VARIABLE] = "1"
        _set_here = True


def for_children(env: Mapping[str, str]) -> dict[str, str]:
    """`env` for a process this one starts: without VARIABLE when this process set it."""
    child = dict(env)
    if _set_here:
        child.pop(VARIABLE, None)
    return child
