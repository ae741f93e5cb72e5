"""Safe file I/O: strict UTF-8 reads, atomic writes, advisory locks, guarded updates.

A guarded update reads a file, applies a change to its text, and replaces the file
atomically under a lock, but only if the file still holds what was read; otherwise it
re-reads and re-applies the change to the fresh content. A person's edit made between
two memcli reads is therefore never overwritten.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from memcli.errors import ConflictError, MemcliError, WorkspaceError

T = TypeVar("T")
MAX_ATTEMPTS = 50
BUSY_WINDOW = 2.0  # seconds: a file written this recently may be written again now
VERIFY_PAUSE = 0.02  # seconds to wait before checking a busy file kept our write


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
    _commit(_prepare(path, text), path)


def _prepare(path: Path, text: str) -> str:
    """Write `text` to a synced temp file beside `path`; returns the temp file's path."""
    data = text.encode("utf-8")
    directory = path.parent
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    try:
        import tempfile  # ≈ 4 ms (shutil, random): only processes that write pay it

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise MemcliError(
            f"{path}: cannot write in {directory} ({exc.strerror})",
            hint="is the workspace read-only or the disk full?",
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
    except OSError as exc:
        _discard(tmp)
        raise MemcliError(
            f"{path}: the write failed ({exc.strerror}); the file is unchanged",
            hint="free disk space or fix permissions, then run the command again",
        ) from None
    return tmp


def _commit(tmp: str, path: Path) -> bytes | None:
    """Move the temp file over `path`. Where the kernel can exchange the two names
    atomically, returns the bytes of the file that was replaced (None otherwise)."""
    replaced: bytes | None = None
    try:
        if _exchange(tmp, path):
            with contextlib.suppress(OSError):
                replaced = Path(tmp).read_bytes()
            _discard(tmp)
        else:
            os.replace(tmp, path)
    except OSError as exc:
        _discard(tmp)
        raise MemcliError(
            f"{path}: the write failed ({exc.strerror}); the file is unchanged"
        ) from None
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return replaced


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's renameat2, looked up on the first write (ctypes and its library search
    cost ≈ 25 ms: too much for every process, most of which only read)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2  # the libc this process uses
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    return func


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(tmp: str, path: Path) -> bool:
    """Atomically swap `tmp` and `path` (Linux renameat2). False when unsupported or
    when `path` does not exist yet."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    rc = renameat2(
        _AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(str(path)), _RENAME_EXCHANGE
    )
    return rc == 0


def _discard(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


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


def guarded_update(path: Path, lock_path: Path, change: Callable[[str], tuple[str | None, T]]) -> T:
    """Apply `change` to the current text of `path` and write the result atomically.

    `change(text)` returns (new_text or None for "no write", result). It must be a pure,
    idempotent function of the text (applying it to its own output changes nothing),
    because it is applied again whenever another writer got in the way:
    - the file changed between our read and our write: re-read, re-apply;
    - a writer renamed its file in just before our rename: the atomic exchange hands us
      what we replaced, and we write our change on top of it;
    - an editor renamed its file in just after ours (checked after a short pause when the
      file was being written by others): re-apply on what is there now.
    Returns the last result.
    """
    with file_lock(lock_path):
        base: bytes | None = None  # content to build on instead of the file's own
        for _ in range(MAX_ATTEMPTS):
            on_disk = _read_raw(path)
            source = on_disk if base is None else base
            new_text, result = change(decode_text(source, path) if source else "")
            if new_text is None:
                if base is None:
                    return result
                new_text = base.decode("utf-8")  # our change is in `base`; bring it back
            busy = base is not None or _recently_modified(path)
            tmp = _prepare(path, new_text)
            if _read_raw(path) != on_disk:  # someone wrote meanwhile: start again
                _discard(tmp)
                base = None
                continue
            replaced = _commit(tmp, path)
            if replaced is not None and replaced != on_disk:
                base = replaced  # lost their write for an instant: merge and write again
                continue
            base = None
            if busy:
                time.sleep(VERIFY_PAUSE)
            if _read_raw(path) == new_text.encode("utf-8"):
                return result
    raise ConflictError(
        f"{path}: the file kept changing while memcli tried to write it; nothing was written",
        hint="save and close the file in your editor, then run the command again",
    )


def _recently_modified(path: Path) -> bool:
    try:
        return time.time() - path.stat().st_mtime < BUSY_WINDOW
    except OSError:
        return False


def _read_raw(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
