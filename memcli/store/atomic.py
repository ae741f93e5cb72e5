"""Strict reads and atomic writes of one file: UTF-8 text without newline translation
(binary or undecodable content refused with the line it is on), a reader that waits out
the instant a swap leaves a name missing, and a write that replaces a file in one rename
(or, on Linux, exchanges the two names with renameat2, keeping the replaced file's inode
for memcli.store.files to watch for late bytes)."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memcli.core.errors import ConfigError, MemcliError, UnreadableFileError
from memcli.store.modes import file_mode


def read_text(path: Path) -> str:
    """Read a UTF-8 text file without newline translation ("" when it does not exist)."""
    try:
        data = _read_through_swap(path)
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


MAX_FILE_MB = 32  # a 100k-entry workspace is ~9 MB of memory.md


def max_file_bytes() -> int:
    """The largest Markdown file memcli reads (MEMCLI_MAX_FILE_MB overrides)."""
    try:
        return int(float(os.environ.get("MEMCLI_MAX_FILE_MB", MAX_FILE_MB)) * 10**6)
    except ValueError:
        return MAX_FILE_MB * 10**6


SETTINGS_LIMIT = 10**6  # the most bytes of a settings file (memcli.toml, config.toml) read


def read_settings(path: Path, target: Path | None = None) -> bytes:
    """The bytes of settings file `path` (read at `target` when the link rule already
    resolved it, else where its links lead): a regular file of at most SETTINGS_LIMIT
    bytes, opened without blocking, so a memcli.toml linked to /dev/zero or a FIFO is a
    ConfigError naming it, never a hang. FileNotFoundError when there is none (or a
    folder by that name). memcli.store.trust hashes memcli.toml through this (the link
    rule asks trust, so trust cannot ask it); every other reader of memcli.toml goes
    through memcli.store.links.read_settings."""
    real = Path(os.path.realpath(path)) if target is None else target
    if os.path.isdir(real) or not os.path.isdir(real.parent):
        raise FileNotFoundError(real)
    try:
        return read_bounded(real, SETTINGS_LIMIT)
    except MemcliError as exc:
        linked = real != path and os.path.islink(path)
        raise ConfigError(
            exc.message.replace(str(real), f"{path} (a link to {real})", 1)
            if linked else exc.message,
            hint="memcli reads its settings only from a regular file of at most "
            f"{SETTINGS_LIMIT // 10**6} MB; replace it with one, or remove it",
        ) from None


def read_bounded(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file `path`, refused (MemcliError naming it) when it is
    a link, not a regular file (a FIFO, /dev/zero, a directory) or above `limit`
    (max_file_bytes()): opened without following a link or blocking, and never read
    past the limit. FileNotFoundError when it does not exist."""
    limit = max_file_bytes() if limit is None else limit
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        why = "it is a link" if exc.errno == errno.ELOOP else exc.strerror
        raise MemcliError(f"{path}: cannot be read ({why}); nothing was read") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MemcliError(
                f"{path}: not a regular file (a device, FIFO or directory); nothing was read"
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(fd)
    if st.st_size > limit or len(data) > limit:
        raise MemcliError(
            f"{path}: above the {limit // 10**6} MB memcli reads from one file; nothing "
            "was read",
            hint="split it, or set MEMCLI_MAX_FILE_MB higher",
        )
    return data


SWAP_GAP = 0.05  # seconds a reader waits for a file that is missing during a swap


def _read_through_swap(path: Path) -> bytes:
    """The file's bytes. Where writes cannot exchange names atomically (not Linux), a
    file is missing for an instant while memcli swaps it: a reader waits that out
    instead of seeing an empty memory."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        if not _swaps_leave_gap():
            raise
    deadline = time.monotonic() + SWAP_GAP
    while True:
        time.sleep(0.002)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            if time.monotonic() > deadline:
                raise


def _swaps_leave_gap() -> bool:
    """Whether this platform's writes leave the gap (cheap: no ctypes lookup)."""
    return not sys.platform.startswith("linux") or bool(os.environ.get("MEMCLI_NO_EXCHANGE"))


def decode_text(data: bytes, path: Path) -> str:
    """Decode file bytes as UTF-8, refusing binary content with a message naming the spot."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise UnreadableFileError(
            str(path),
            line,
            "the file holds binary data (a NUL byte), not Markdown text",
            hint="restore the file from a backup or git, or move it out of the workspace",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UnreadableFileError(
            str(path),
            line,
            f"the file is not valid UTF-8 (byte {exc.start})",
            hint="re-save the file as UTF-8 in your editor",
        ) from None


def atomic_write(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename; readers see the old or the new file."""
    tmp = _prepare(path, text)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        _discard(tmp)
        raise MemcliError(
            f"{path}: the write failed ({exc.strerror}); the file is unchanged"
        ) from None
    _sync_dir(path.parent)


def _prepare(path: Path, text: str) -> str:
    """Write `text` to a synced temp file beside `path`; returns the temp file's path."""
    data = text.encode("utf-8")
    directory = path.parent
    try:
        existing: int | None = path.stat().st_mode & 0o777
    except FileNotFoundError:
        existing = None
    mode = file_mode(path, existing)  # never more readable than the workspace's memory.md
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


def _sync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _swap_in(tmp: str, path: Path) -> str | None:
    """Put the temp file at `path`. Returns where the file it replaced now is (the
    same inode, so bytes still being written into it are not lost), or None when
    `path` did not exist. Linux exchanges the two names atomically (renameat2).
    Elsewhere the current file is renamed aside (we get exactly the file that was
    there) and ours is linked in without replacing anything: an editor that renamed
    its save in between keeps it, and we get our own file back to start over on
    theirs. For those microseconds the name is missing; `read_text` waits them out."""
    if _exchange(tmp, path):
        return tmp
    aside = tmp + ".old"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        aside = ""
    except OSError as exc:
        _discard(tmp)
        raise MemcliError(
            f"{path}: the write failed ({exc.strerror}); the file is unchanged"
        ) from None
    try:
        os.link(tmp, path)
    except FileExistsError:  # someone saved in between: theirs stays, ours is dropped
        _discard(tmp)
        return aside or None
    except OSError:  # no hard links here (some file systems): a plain rename
        try:
            os.rename(tmp, path) if sys.platform == "win32" else os.replace(tmp, path)
        except OSError as exc:
            _discard(tmp)
            if aside:
                with contextlib.suppress(OSError):
                    os.rename(aside, path)
            raise MemcliError(
                f"{path}: the write failed ({exc.strerror}); the file is unchanged"
            ) from None
        return aside or None
    _discard(tmp)
    return aside or None


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's renameat2, looked up on the first write (ctypes and its library search
    cost ≈ 25 ms: too much for every process, most of which only read)."""
    if not sys.platform.startswith("linux") or os.environ.get("MEMCLI_NO_EXCHANGE"):
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


STALE_TEMP = 600.0  # seconds: a temp file this old belongs to a write that was killed


def sweep_temps(path: Path) -> None:
    """Remove the temp files of writes to `path` that were killed before their rename
    (`.memory.md.*.tmp` older than STALE_TEMP; a younger one may be another writer's)."""
    prefix, now = f".{path.name}.", time.time()
    with contextlib.suppress(OSError):
        for name in os.listdir(path.parent):
            if name.startswith(prefix) and name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if now - (path.parent / name).stat().st_mtime > STALE_TEMP:
                        os.unlink(path.parent / name)


def _discard(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
