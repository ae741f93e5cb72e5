"""Safe file I/O: strict UTF-8 reads, atomic writes, advisory locks, guarded updates.

A guarded update reads a file, applies a change to its text, and replaces the file
atomically under a lock, but only if the file still holds what was read; otherwise it
re-reads and re-applies the change to the fresh content. A person's edit made between
two memcli reads is therefore never overwritten.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from memcli.core.errors import ConflictError, MemcliError, WorkspaceError

T = TypeVar("T")
MAX_ATTEMPTS = 50


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
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
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


@functools.cache
def _umask() -> int:
    """This process's umask (read once: setting it to read it is not thread-safe, so
    the brief window uses the strictest mask)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


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


def _discard(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


LOCK_NOTICE_AFTER = 1.0  # seconds before a waiting command says what it waits for


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
        raise WorkspaceError(
            f"{lock_path.parent}: cannot create the lock file ({exc.strerror})",
            hint="is the workspace read-only? memcli needs to write in it",
        ) from None
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


class Keeper(Protocol):
    """What a guarded update tells the file history (memcli.store.history.History)."""

    def head(self, file: str) -> str | None: ...
    def observe(self, file: str, data: bytes) -> list[dict]: ...
    def record(
        self, file: str, data: bytes, *, source: str, prev: str | None = None
    ) -> str: ...
    def detach(self, file: str, replaced: Path, content: bytes) -> None: ...
    def late_writes(self, file: str) -> list[tuple[Any, bytes]]: ...
    def settle(self, item: Any, content: bytes) -> None: ...
    def get(self, digest: str) -> bytes: ...


SETTLE_WINDOW = 2.0  # seconds: a file written this recently may still be being written
SETTLE_QUIET = 0.02  # …so it must stay unchanged this long before a write builds on it
SETTLE_MAX = 2.0  # a read waits at most this long for that quiet, then tries again…
BUSY_LIMIT = 10.0  # …until this long has passed: then nothing is written (ConflictError)
POLL = 0.01


def guarded_update(
    path: Path,
    lock_path: Path,
    change: Callable[[str], tuple[str | None, T]],
    keeper: Keeper | None = None,
    name: str | None = None,
) -> T:
    """Apply `change` to the current text of `path` and write the result atomically.

    `change(text)` returns (new_text or None for "no write", result). It must be a pure,
    idempotent function of the text (applying it to its own output changes nothing),
    because it is applied again whenever another writer got in the way. Safe against
    editors that save in place (truncate, then write), by temp file and rename, or by
    copying a backup first; memcli never builds on a file that is being written:
    - a file written in the last moments is read only once it has been quiet a while
      (a file that never gets quiet is not written at all: ConflictError);
    - the file changed between our read and our swap: re-read, re-apply;
    - a writer got in between our last check and our swap (the swap hands us the file
      we replaced, same inode), or went on writing into the file we replaced: their
      file is put back where it was (their open handle writes to the right file again)
      and we start over on what they wrote;
    - bytes written into a replaced file even later: the file is kept in the history
      (`keeper`) and merged back by the next write (or `memcli doctor`);
    - a writer renamed its file in just after ours: re-apply on what is there now.
    Every version read or written is kept in the history. Returns the last result.
    """
    path = _resolve_link(path)
    file = name or path.name
    deadline = time.monotonic() + BUSY_LIMIT
    with file_lock(lock_path):
        late = keeper.late_writes(file) if keeper is not None else []
        retained: list[_Replaced] = []
        try:
            for _ in range(MAX_ATTEMPTS):
                on_disk, busy, settled = settled_read(path, keeper, file)
                if not settled:
                    if time.monotonic() > deadline:
                        break
                    continue
                if keeper is not None:
                    keeper.observe(file, on_disk)
                text = decode_text(on_disk, path) if on_disk else ""
                for item, content in late:
                    text = _merge_late(keeper, item, content, text, path)
                new_text, result = change(text)
                if new_text is None:
                    new_text = text
                new_bytes = new_text.encode("utf-8")
                if new_bytes == on_disk:
                    _settle_late(keeper, late)
                    return result
                tmp = _prepare(path, new_text)
                if _read_raw(path) != on_disk:  # someone wrote meanwhile: start again
                    _discard(tmp)
                    continue
                aside = _swap_in(tmp, path)
                if aside is not None:
                    replaced = _Replaced(aside, _read_raw(Path(aside)))
                    theirs = replaced.content != on_disk or _written_late(replaced, busy)
                    if theirs and _put_back(replaced, path, new_bytes):
                        continue  # theirs is back in place: start over on it
                    retained.append(replaced)  # kept: a late write into it is merged later
                _sync_dir(path.parent)
                if _read_raw(path) == new_bytes:
                    try:
                        if keeper is not None:
                            keeper.record(file, new_bytes, source="memcli", prev=_sha(on_disk))
                        _settle_late(keeper, late)
                    except MemcliError as exc:  # written: the history is what is missing
                        sys.stderr.write(f"memcli: warning: {exc.message}\n")
                    return result
        finally:
            for item in retained:  # an editor may still hold it open: keep it a while
                if keeper is not None:
                    keeper.detach(file, Path(item.path), item.content)
                else:
                    _discard(item.path)
    raise ConflictError(
        f"{path}: the file kept changing while memcli tried to write it; nothing was written",
        hint="save and close the file in your editor, then run the command again",
    )


@dataclass
class _Replaced:
    path: str  # where the replaced file (its inode) is now
    content: bytes  # its content when we took it


def _resolve_link(path: Path) -> Path:
    """Write through a symlinked memory.md to the file it points at."""
    try:
        if path.is_symlink():
            return Path(os.path.realpath(path))
    except OSError:
        pass
    return path


def settled_read(path: Path, keeper: Keeper | None, file: str) -> tuple[bytes, bool, bool]:
    """(bytes, busy, settled): the file's bytes once it has been quiet for SETTLE_QUIET.
    Only a file modified in the last SETTLE_WINDOW waits (busy), at most SETTLE_MAX;
    settled is False when it did not get quiet in that time. An empty file that the
    history knew with content waits the longest: that is an editor's save between its
    truncate and its write, more often than a person emptying it."""
    started = time.monotonic()
    data, stamp = _read_with_stamp(path)
    if stamp is None or time.time() - stamp[1] / 1e9 >= SETTLE_WINDOW:
        return data, False, True
    if data and keeper is not None and keeper.head(file) == _sha(data):
        return data, False, True  # as memcli last wrote or saw it settled: nobody since
    suspicious = not data and keeper is not None and keeper.head(file) not in (None, _sha(b""))
    changed_at = time.monotonic()
    settled = False
    while time.monotonic() - started < SETTLE_MAX:
        time.sleep(POLL)
        again = _stamp(path)
        if again != stamp:
            stamp, changed_at = again, time.monotonic()
            suspicious = False
            continue
        if time.monotonic() - changed_at >= SETTLE_QUIET and not suspicious:
            settled = True
            break
    else:
        settled = suspicious  # empty and untouched all along: emptied on purpose
    data, again = _read_with_stamp(path)
    return data, True, settled and again == stamp


def _written_late(replaced: _Replaced, busy: bool) -> bool:
    """After a swap of a busy file: whether someone went on writing into the file we
    replaced (an in-place save we overlapped), waiting until it has been quiet."""
    if not busy:
        return False
    aside = Path(replaced.path)
    last = _stamp(aside)
    quiet_since = time.monotonic()
    deadline = quiet_since + SETTLE_MAX
    while time.monotonic() < deadline:
        time.sleep(POLL)
        now = _stamp(aside)
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= SETTLE_QUIET:
            break
    return _read_raw(aside) != replaced.content


def _put_back(replaced: _Replaced, path: Path, ours: bytes) -> bool:
    """Rename the file we replaced back to `path` (the same inode: an editor's open
    handle writes to the right file again) if `path` still holds our version."""
    if _read_raw(path) != ours:
        return False
    try:
        os.replace(replaced.path, path)
    except OSError:
        return False
    _sync_dir(path.parent)
    return True


def _merge_late(keeper: Keeper | None, item: Any, content: bytes, text: str, path: Path) -> str:
    """Merge what an editor wrote into a replaced file after memcli replaced it."""
    from memcli.store.merge import merge_text

    try:
        base = keeper.get(item.sha).decode("utf-8") if keeper is not None else ""
    except (KeyError, UnicodeDecodeError):
        base = ""
    late = decode_text(content, path) if content else ""
    return merge_text(base, text, late).text


def _settle_late(keeper: Keeper | None, late: list[tuple[Any, bytes]]) -> None:
    if keeper is not None:
        for item, content in late:
            keeper.settle(item, content)


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _read_with_stamp(path: Path) -> tuple[bytes, tuple[int, int, int] | None]:
    return _read_raw(path), _stamp(path)


def _read_raw(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
