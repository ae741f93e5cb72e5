"""Index writes refused by the file system (full disk, quota, read-only, permissions):
one clear error instead of a traceback, and no temp files left behind.

The index is derived from the Markdown, so such a failure loses nothing: the message
says so and how to get the index back once the cause is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from memcli.core.errors import MemcliError

_SPACE = "free space"
_RIGHTS = "make the workspace's .memcli folder writable"
#: the errors a write meets when the file system refuses it (others are real bugs) and
#: what to do about each
REFUSED: dict[int, str] = {
    code: advice
    for code, advice in (
        (errno.ENOSPC, _SPACE),  # no space left on device
        (getattr(errno, "EDQUOT", None), _SPACE),  # disk quota exceeded (POSIX only)
        (errno.EFBIG, _SPACE),  # file too large
        (errno.EROFS, _RIGHTS),  # read-only file system
        (errno.EACCES, _RIGHTS),  # permission denied
        (errno.EPERM, _RIGHTS),  # operation not permitted
    )
    if code is not None
}


class IndexWriteError(MemcliError):
    """The index could not be written; the Markdown is unchanged."""


def refused(exc: BaseException) -> bool:
    """An OSError the file system gave for a write it refused."""
    return isinstance(exc, OSError) and exc.errno in REFUSED


def os_error_of(exc: RuntimeError) -> OSError | None:
    """The refused write a FAISS error reports (FAISS raises RuntimeError, its text
    ending in the system's reason: "write error in x.faiss: 983 != 5000 (No space left
    on device)"), as an OSError; None for any other error."""
    text = str(exc)
    for code in REFUSED:
        if f"({os.strerror(code)})" in text:
            return OSError(code, os.strerror(code))
    return None


def remove_temp_files(*folders: Path) -> None:
    """Remove the half-written temp files (`*.tmp*`) left in `folders` (the caller holds
    the index lock: no other writer is using them)."""
    for folder in folders:
        with contextlib.suppress(OSError):
            for path in folder.iterdir():
                if ".tmp" in path.name and path.is_file():
                    with contextlib.suppress(OSError):
                        path.unlink()


@contextlib.contextmanager
def index_writes(*folders: Path) -> Iterator[None]:
    """Turn a refused write inside the block into an IndexWriteError, after removing the
    temp files left in `folders`."""
    try:
        yield
    except OSError as exc:
        if not refused(exc):
            raise
        remove_temp_files(*folders)
        reason = exc.strerror or os.strerror(exc.errno or 0)
        raise IndexWriteError(
            f"the index could not be written: {reason}; the Markdown is unchanged; "
            f"{REFUSED[exc.errno]} and run `memcli index --rebuild`"  # type: ignore[index]
        ) from None
