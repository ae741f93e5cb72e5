"""Whatever memcli creates in a workspace is no more readable than its memory.md.

A person who keeps memory.md at 0600 keeps their forgotten entries (archive.md), the
index with its snapshot of every entry, the history and the rest of `.memcli/` to
themselves too. The group and other permissions memory.md lacks (learnings.md's when
there is no memory.md) are taken from everything memcli creates there:

- files: no read or write bit a class lacks on memory.md;
- folders: a class that may not read memory.md gets no bit at all, one that may read
  but not write gets no write bit (so a group that shares memory.md can still use the
  index).

`protect(root)` (each Store that opens the workspace calls it) records those bits for
the workspace, adds them to the process's umask (every file and folder this process
creates from now on, whatever library writes it: NumPy, FAISS, sockets, logs), and
takes them from what memcli made there before (archive.md, learnings.md, episodes/,
conversations/, .gitignore, .gitattributes, and `.memcli/` with everything in it).
The umask only ever gets stricter; memcli.store.atomic gives a file it creates or
replaces the bits of its own workspace (`restricted`), so a workspace shared with a
group is not made private by a private one opened in the same process.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path

from memcli.core.names import ARCHIVE_FILE, CURATED_BUILTIN, SEQUENCE_DIRS, STATE_DIR

#: what memcli creates in a workspace besides memory.md (`memcli init`, forget, log,
#: import --conversation, git setup, every command's derived state)
CREATED = (
    STATE_DIR,
    ARCHIVE_FILE,
    *CURATED_BUILTIN[1:],
    *SEQUENCE_DIRS,
    ".gitignore",
    ".gitattributes",
)

_lock = threading.Lock()
_roots: dict[str, int] = {}  # resolved workspace -> file bits it takes away
_base: list[int] = []  # the umask this process started with (read once)


def lacking(mode: int) -> int:
    """The group/other bits a file with permission `mode` takes from what memcli
    creates: a class's read and write bits unless it may read, its write bit unless it
    may write, and every bit (execute too, for folders) of a class that may not read."""
    bits = 0
    for shift in (3, 0):  # group, other
        granted = (mode >> shift) & 0o7
        if not granted & 0o4:
            bits |= 0o7 << shift
        elif not granted & 0o2:
            bits |= 0o2 << shift
    return bits


def base_umask() -> int:
    """The umask this process had before any workspace tightened it."""
    with _lock:
        return _base_locked()


def _base_locked() -> int:
    if not _base:
        mask = os.umask(0o077)  # reading it means setting it: the strictest meanwhile
        os.umask(mask)
        _base.append(mask)
    return _base[0]


def protect(root: Path) -> int:
    """Record the bits memory.md of `root` lacks, tighten this process's umask by them
    and take them from what memcli made there; returns the bits (0: nothing to do)."""
    if os.name == "nt":
        return 0
    bits = 0
    for name in CURATED_BUILTIN:
        try:
            bits = lacking(os.stat(root / name).st_mode)
            break
        except OSError:
            continue
    else:
        return 0
    key = os.path.realpath(root)
    with _lock:
        _roots[key] = bits
        base = _base_locked()
        if bits & ~base:
            current = os.umask(0o077)
            os.umask(current | bits)
    if bits:
        _tighten_created(Path(key), bits)
    return bits


def restricted(path: Path | str) -> int:
    """The bits to take from a file memcli writes at `path`: those of the workspace
    holding it (the nearest recorded one), 0 outside any."""
    if not _roots:
        return 0
    here = os.path.realpath(os.path.dirname(os.fspath(path)))
    while True:
        bits = _roots.get(here)
        if bits is not None:
            return bits
        parent = os.path.dirname(here)
        if parent == here:
            return 0
        here = parent


def file_mode(path: Path | str, existing: int | None) -> int:
    """The permission bits for a file memcli writes at `path`: the replaced file's
    (`existing`) or a new file's (0666 less the umask), less what the workspace's
    memory.md lacks."""
    mode = existing if existing is not None else 0o666 & ~base_umask()
    return mode & ~restricted(path)


def _tighten_created(root: Path, bits: int) -> None:
    """Take `bits` from what memcli made in `root`; from everything in a folder of
    those (`.memcli/`, episodes/…) as well when the folder had them (once: later files
    get the umask)."""
    uid = os.geteuid()
    for name in CREATED:
        path = root / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if st.st_uid != uid or not st.st_mode & bits or _is_link(st.st_mode):
            continue
        try:
            os.chmod(path, st.st_mode & 0o7777 & ~bits)
        except OSError:  # a read-only workspace: nothing to take, and no walk each time
            continue
        if stat.S_ISDIR(st.st_mode):
            _tighten_tree(path, bits, uid)


def _tighten_tree(top: Path, bits: int, uid: int) -> None:
    for folder, dirs, files in os.walk(top):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if st.st_uid == uid and st.st_mode & bits and not _is_link(st.st_mode):
                    os.chmod(path, st.st_mode & 0o7777 & ~bits)


def _is_link(mode: int) -> bool:
    return mode & 0o170000 == 0o120000
