"""Advisory locks between memcli processes: one exclusive lock file per guarded thing
(a Markdown file, the index, the history), with a notice while waiting and a clear
error after MEMCLI_LOCK_TIMEOUT."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from memcli.core.errors import ConflictError, WorkspaceError

LOCK_NOTICE_AFTER = 1.0  # seconds before a waiting command says what it waits for


class LockUnavailable(WorkspaceError):
    """The lock file cannot be created or opened (a read-only workspace, another user's):
    nothing that needs it can be done here. `reason` says why (the OS's words)."""

    def __init__(self, lock_path: Path, exc: OSError) -> None:
        self.reason = exc.strerror or str(exc)
        self.read_only = exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
        super().__init__(
            f"{lock_path.parent}: cannot create the lock file ({self.reason})",
            hint="is the workspace read-only? memcli needs to write in it",
        )

    def stale(self, what: str) -> WorkspaceError:
        """The error of a command that found `what` out of date and cannot update it
        here (the index of a read-only workspace)."""
        return WorkspaceError(
            f"{what} is out of date (the Markdown changed since it was built) and cannot "
            f"be updated here: {self.reason}" + (" (read-only)" if self.read_only else ""),
            hint="run `memcli index` where the workspace can be written, or use a writable "
            "copy; `memcli list` and `memcli get` read the files directly",
        )


def lock_timeout() -> float:
    """Seconds a command waits for another memcli process's lock (MEMCLI_LOCK_TIMEOUT)."""
    try:
        return float(os.environ.get("MEMCLI_LOCK_TIMEOUT", "60"))
    except ValueError:
        return 60.0


@contextlib.contextmanager
def file_lock(lock_path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `lock_path` for the block. Says on stderr what it waits
    for after a second, and gives up with a ConflictError naming the lock after `timeout`
    seconds (MEMCLI_LOCK_TIMEOUT, default 60). POSIX: flock, polled without blocking (by
    hand: the filelock package costs ≈ 30 ms of imports, too much for a search that
    refreshes its index); elsewhere the filelock package."""
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a+b")  # noqa: SIM115 - closed in finally
    except OSError as exc:
        raise LockUnavailable(lock_path, exc) from None
    limit = lock_timeout() if timeout is None else timeout
    try:
        try:
            import fcntl
        except ImportError:  # Windows
            with _portable_lock(lock_path, limit):
                yield
            return
        started = time.monotonic()
        told = False
        delay = 0.001
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited >= limit:
                    raise _lock_timeout_error(lock_path, limit) from None
                if not told and waited >= LOCK_NOTICE_AFTER:
                    told = True
                    sys.stderr.write(
                        f"memcli: waiting for another memcli process to finish ({lock_path})\n"
                    )
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


@contextlib.contextmanager
def _portable_lock(lock_path: Path, limit: float) -> Iterator[None]:
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_path) + ".portable")
    try:
        lock.acquire(timeout=limit)
    except Timeout:
        raise _lock_timeout_error(lock_path, limit) from None
    try:
        yield
    finally:
        lock.release()


def _lock_timeout_error(lock_path: Path, limit: float) -> ConflictError:
    return ConflictError(
        f"{lock_path}: still held by another process after {limit:.0f} s; nothing was changed",
        hint="is another memcli command stuck? stop it, or raise MEMCLI_LOCK_TIMEOUT",
    )
