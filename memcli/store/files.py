"""Guarded updates of one file: strict UTF-8 reads, atomic writes, advisory locks.

A guarded update reads a file, applies a change to its text, and replaces the file
atomically under a lock, but only if the file still holds what was read; otherwise it
re-reads and re-applies the change to the fresh content. A person's edit made between
two memcli reads is therefore never overwritten.

The reads and atomic writes it builds on are memcli.store.atomic, the locks
memcli.store.locks; their public names are re-exported here, where callers import them.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from memcli.core.errors import ConflictError, MemcliError
from memcli.core.records import record
from memcli.store.atomic import _discard, _prepare, _swap_in, _sync_dir, sweep_temps
from memcli.store.atomic import atomic_write as atomic_write
from memcli.store.atomic import decode_text as decode_text
from memcli.store.atomic import read_text as read_text
from memcli.store.locks import file_lock as file_lock
from memcli.store.locks import lock_timeout as lock_timeout

T = TypeVar("T")
MAX_ATTEMPTS = 50


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
    `path` is the file itself: the caller applied the rule for links (a workspace's
    Store.path, memcli.store.links), so the temp file and the rename are beside it.
    """
    file = name or path.name
    deadline = time.monotonic() + BUSY_LIMIT
    with file_lock(lock_path):
        sweep_temps(path)  # left by a write that was killed
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
                    try:
                        keeper.observe(file, on_disk)
                    except MemcliError as exc:  # before our write: nothing written
                        raise MemcliError(f"{exc.message}; nothing was changed",
                                          hint=exc.hint) from None
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
                        sys.stderr.write(
                            f"memcli: warning: {path} was written, but {exc.message}: "
                            "`memcli undo` cannot take this write back\n"
                        )
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


@record
class _Replaced:
    """A file replaced under a reader: where its inode is now and what it held."""

    path: str  # where the replaced file (its inode) is now
    content: bytes  # its content when we took it


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
