"""Safe file I/O: strict UTF-8 reads, atomic writes, advisory locks, guarded updates.

A guarded update reads a file, applies a change to its text, and replaces the file
atomically under a lock, but only if the file still holds what was read; otherwise it
re-reads and re-applies the change to the fresh content. A person's edit made between
two memcli reads is therefore never overwritten.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from memcli.errors import ConflictError, MemcliError, WorkspaceError

T = TypeVar("T")
MAX_ATTEMPTS = 50


def read_text(path: Path) -> str:
    """Read a UTF-8 text file without newline translation ("" when it does not exist)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    except IsADirectoryError:
        raise MemcliError(f"{path}: is a directory, expected a Markdown file") from None
    except PermissionError:
        raise MemcliError(
            f"{path}: cannot read the file (permission denied)",
            hint="check the file's permissions",
        ) from None
    return decode_text(data, path)


def decode_text(data: bytes, path: Path) -> str:
    """Decode file bytes as UTF-8, refusing binary content with a message naming the spot."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise MemcliError(
            f"{path}:{line}: the file holds binary data (a NUL byte), not Markdown text",
            hint="restore the file from a backup or git, or move it out of the workspace",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise MemcliError(
            f"{path}:{line}: the file is not valid UTF-8 (byte {exc.start})",
            hint="re-save the file as UTF-8 in your editor",
        ) from None


def atomic_write(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename; readers see the old or the new file."""
    data = text.encode("utf-8")
    directory = path.parent
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise MemcliError(f"{path}: cannot write in {directory} ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise MemcliError(
            f"{path}: the write failed ({exc.strerror}); the file is unchanged",
            hint="free disk space or fix permissions, then run the command again",
        ) from None
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


@contextlib.contextmanager
def file_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock (flock) on `lock_path` for the block."""
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a+b")  # noqa: SIM115 - closed in finally
    except OSError as exc:
        raise WorkspaceError(
            f"{lock_path.parent}: cannot create the lock file ({exc.strerror})",
            hint="is the workspace read-only? memcli needs to write in it",
        ) from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


def guarded_update(
    path: Path, lock_path: Path, change: Callable[[str], tuple[str | None, T]]
) -> T:
    """Apply `change` to the current text of `path` and write the result atomically.

    `change(text)` returns (new_text or None for "no write", result). It is called
    again on the fresh content whenever the file changed between read and write, so it
    must be a pure function of the text. Returns the result of the applied call.
    """
    with file_lock(lock_path):
        for _ in range(MAX_ATTEMPTS):
            before = _read_raw(path)
            new_text, result = change(decode_text(before, path) if before else "")
            if new_text is None:
                return result
            if _read_raw(path) != before:
                continue  # someone (a person's editor) wrote meanwhile: re-apply
            atomic_write(path, new_text)
            return result
    raise ConflictError(
        f"{path}: the file kept changing while memcli tried to write it; nothing was written",
        hint="save and close the file in your editor, then run the command again",
    )


def _read_raw(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
