"""The Markdown store of one workspace: which files hold entries, loading them, and
changing them through guarded atomic updates."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from memcli.core.errors import MemcliError, ParseError, UnreadableFileError, WorkspaceError
from memcli.core.models import ARCHIVE_FILE, CONFIG_FILE, Entry
from memcli.core.names import STATE_DIR
from memcli.core.records import record
from memcli.core.registry import BUILTIN, Registry
from memcli.store.atomic import MAX_FILE_MB as MAX_FILE_MB
from memcli.store.atomic import max_file_bytes as max_file_bytes
from memcli.store.files import file_lock, guarded_update, read_text
from memcli.store.links import check_state, follow, kept_by, owner_problem

if TYPE_CHECKING:
    from memcli.store.history import History
    from memcli.store.markdown import Document, Parsed

    #: the merged id counts of the files besides the biggest, by how many they are: the
    #: last (files, counts, ids repeated among them) for each
    _Merged = dict[int, tuple[tuple[Parsed, ...], dict[str, int], set[str]]]

T = TypeVar("T")
#: a stat failing with these finds no file there (pathlib's exists() and is_file() say so)
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


@record
class Store:
    """Reads and writes the Markdown files of a workspace."""

    root: Path
    #: name -> (the stat it was read under, None once invalidated; its parse)
    _parsed: dict[str, tuple[tuple[int, ...] | None, Parsed]] = field(
        default_factory=dict, repr=False
    )
    _history: History | None = field(default=None, repr=False)
    _merged: _Merged = field(default_factory=dict, repr=False)  # see repeated_ids
    #: files not UTF-8 (their problem) already reported by this store
    _unreadable: set[str] = field(default_factory=set, repr=False)
    #: (memcli.toml's stat when read, the registry read from it)
    _files: tuple[tuple[int, ...] | None, Registry] | None = field(default=None, repr=False)
    #: `.memcli/` as the link rule resolved it (memcli.store.links), once
    _state: Path | None = field(default=None, repr=False)
    #: the workspace owner's uid once a file of theirs was read (None: not yet)
    _owner: int | None = field(default=None, repr=False)
    #: why no file here may be written (a layer the person made read-only, opened from
    #: another workspace: memcli.services.readonly_index.obey_mode), or None
    read_only: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from memcli.store.modes import protect

        protect(self.root)  # what memcli creates here: no more readable than memory.md

    @property
    def state_dir(self) -> Path:
        """`.memcli/`, or where an allowed link of that name leads (LinkRefused for a
        link memcli.store.links does not follow: nothing is written through it)."""
        if self._state is None:
            self._state = check_state(self.root, follow(self.root, STATE_DIR, folder=True))
        return self._state

    def path(self, name: str) -> Path:
        """Where workspace file `name` is read and written: itself, or the target of a
        link the rule follows (memcli.store.links; LinkRefused otherwise, and for a link
        to another file memcli keeps here)."""
        return follow(self.root, name, keeps=self._keeps)

    def folder(self, name: str) -> Path:
        """Where folder `name` (episodes/, conversations/) is: itself, or the target of
        a link the rule follows (LinkRefused otherwise)."""
        return follow(self.root, name, folder=True, keeps=self._keeps)

    def _keeps(self) -> frozenset[str]:
        """The names memcli keeps in this workspace (a link inside it may lead to none
        of them but its own: memcli.store.links.follow)."""
        return kept_by(self.files)

    def make_folder(self, name: str) -> Path:
        """Folder `name` (an episode file's episodes/) made when it is missing, where
        `folder` says it is (a dangling link inside the workspace: its target); a link
        the rule refuses is LinkRefused naming it, something else by that name a
        WorkspaceError naming it. Nothing is made then."""
        path = self.folder(name)
        try:
            path.mkdir(exist_ok=True)
        except FileExistsError:  # a file (or a link to one) by that name
            raise WorkspaceError(
                f"{self.root / name}: not a folder, so nothing can be put in it; nothing "
                "was changed",
                hint=f"move {self.root / name} aside, then try again",
            ) from None
        except FileNotFoundError:  # a link inside the workspace into a folder not there
            raise WorkspaceError(
                f"{self.root / name}: a link to {path}, whose folder does not exist; "
                "nothing was changed",
                hint=f"make {path.parent}, or replace the link with a folder",
            ) from None
        return path

    def _owned(self, path: Path, uid: int) -> None:
        """Refuse file `path` (owned by `uid`) when another user than the workspace's
        owner owns it: it is never read as the person's memory, nor written."""
        if uid == self._owner:
            return
        problem = owner_problem(self.root, uid)
        if problem is None:
            self._owner = uid  # the workspace's owner: its files need no stat of the root
        else:
            from memcli.store.links import LinkRefused

            raise LinkRefused(
                f"{path}: {problem}; memcli does not read it as your memory; nothing was "
                "read or written",
                hint="if it is yours, `chown` it; otherwise move it out of the workspace",
            )

    @property
    def files(self) -> Registry:
        """The registry of the workspace's files (memcli.core.registry): the built-in
        ones and `[files]` of memcli.toml, read again when memcli.toml changes;
        ConfigError (memcli.toml:line) when `[files]` is bad."""
        try:
            st = os.stat(os.path.join(self.root, CONFIG_FILE))
            stamp: tuple[int, ...] | None = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            stamp = None
        if self._files is None or self._files[0] != stamp:
            from memcli.store.config_files import load_registry

            self._files = (stamp, load_registry(self.root))
            self._parsed.clear()  # default types and headings may differ now
        return self._files[1]

    def entry_files(self, include_archived: bool = False) -> list[str]:
        """Workspace-relative names of the files that hold searchable entries."""
        files = self.files
        names = list(files.names)
        root = str(self.root)
        for folder in files.log_dirs:  # episodes/, conversations/
            if os.path.isdir(os.path.join(root, folder)):
                logs = self.folder(folder)
                names += sorted(f"{folder}/{p.name}" for p in logs.glob("*.md"))
        if include_archived:
            names.append(files.archive)
        found = []
        for name in names:  # one stat each: a watcher's every search asks
            path = os.fspath(self.path(name))  # an lstat each: a link may be refused
            try:
                mode = os.stat(path).st_mode
            except OSError as exc:
                if exc.errno in _ABSENT:  # what Path.exists() takes for "not there"
                    continue
                raise
            if not stat.S_ISREG(mode):
                raise MemcliError(
                    f"{path}: is a directory (or not a regular file), expected a Markdown file",
                    hint="rename it out of the way; memcli creates the file when needed",
                )
            found.append(name)
        return found

    def load(self, name: str, strict: bool = False) -> Document:
        """Parse one file (memoized while its size, mtime and inode stay the same; treat
        the result as read-only). strict: raise its first problem instead of skipping it."""
        doc = self.parsed(name).doc
        blocking = [p for p in doc.problems if p.blocks_writes] if strict else []
        if blocking:
            raise blocking[0]
        return doc

    def parsed(self, name: str) -> Parsed:
        """The parse of one file with its entries (memoized like `load`). A file that
        changed is re-read from its previous parse (memcli.store.reparse): only the
        lines around the change are parsed again."""
        files = self.files  # first: a changed registry drops the parses made with the old
        path = self.path(name)
        try:
            st = path.stat()
            signature: tuple[int, ...] | None = (
                st.st_size,
                st.st_mtime_ns,
                st.st_ctime_ns,
                st.st_ino,
            )
        except OSError:
            signature = None
        else:
            self._owned(path, st.st_uid)
        if signature is not None and signature[0] > max_file_bytes():
            raise MemcliError(
                f"{path}: {signature[0] / 1e6:.0f} MB, above the {max_file_bytes() // 10**6} MB "
                "memcli reads from one file; nothing was read or changed",
                hint="split it (into the curated files or episodes/), or set "
                "MEMCLI_MAX_FILE_MB higher",
            )
        cached = self._parsed.get(name)
        if signature is not None and cached is not None and cached[0] == signature:
            return cached[1]
        text = self._read(path, name)
        # the parser is imported when a file is first parsed: a search answered from the
        # index's entry snapshot parses none (≈ 10 ms of imports and dataclasses)
        if cached is not None:
            from memcli.store.reparse import reparse

            parsed = reparse(cached[1], text)
        else:
            from memcli.store.markdown import parse_file

            parsed = parse_file(text, name, files)
        if signature is not None:
            self._parsed[name] = (signature, parsed)
        else:
            self._parsed.pop(name, None)
        return parsed

    def left_out(self, problem: ParseError) -> None:
        """A `warn` for reads that report only what they leave out whole: a file that is
        not UTF-8 text, said on stderr once per store (a long-lived process, a search
        that reads the index's snapshot afterwards)."""
        if problem.whole_file and str(problem) not in self._unreadable:
            self._unreadable.add(str(problem))
            _warn_stderr(problem)

    def invalidate(self, name: str) -> None:
        """Read file `name` again at its next load, even if its stat is unchanged (a
        write within one timestamp tick keeps it); its parse stays the base to re-read
        it from."""
        cached = self._parsed.get(name)
        if cached is not None:
            self._parsed[name] = (None, cached[1])

    def _read(self, path: Path, name: str) -> str:
        """The file's text; one that fails to decode while it was just written (an
        editor's save in progress, cut inside a character) is read again once quiet."""
        try:
            return read_text(path)
        except MemcliError:
            from memcli.store.files import SETTLE_MAX, SETTLE_WINDOW, decode_text, settled_read

            try:
                recent = time.time() - path.stat().st_mtime < SETTLE_WINDOW
            except OSError:
                recent = False
            if not recent:
                raise
            deadline = time.monotonic() + SETTLE_MAX
            while True:
                data, _, _ = settled_read(path, self.history, name)
                try:
                    return decode_text(data, path)
                except MemcliError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)

    def entries(
        self, include_archived: bool = False, warn: Callable[[ParseError], None] | None = None
    ) -> list[Entry]:
        """Every entry of the workspace, in file order. Malformed entries are skipped
        and reported through `warn` (stderr by default)."""
        result: list[Entry] = []
        parses = []
        for name in self.entry_files(include_archived):
            try:
                parsed = self.parsed(name)
            except UnreadableFileError as exc:  # say where (once), go on with the others
                problem = ParseError(
                    name, exc.line, f"{exc.reason}; its entries are left out of reads and "
                    "writes to it are refused until it is re-saved as UTF-8",
                    hint=exc.hint,
                )
                problem.skipped, problem.whole_file = False, True
                (warn or self.left_out)(problem)
                continue
            for problem in parsed.doc.problems:
                (warn or _warn_stderr)(problem)
            result.extend(parsed.entries)
            if name != ARCHIVE_FILE:
                parses.append(parsed)
        repeated = repeated_ids(parses, self._merged)
        if not repeated:
            return result
        for entry_id, places in duplicate_ids([e for e in result if e.id in repeated]).items():
            first = places[0]
            problem = ParseError(
                first.file,
                first.line,
                f"id {entry_id} is also used at "
                + ", ".join(f"{e.file}:{e.line}" for e in places[1:])
                + "; give one of them another id",
            )
            problem.skipped = False
            (warn or _warn_stderr)(problem)
        return result

    def ids_distinct(self, include_archived: bool = False) -> bool:
        """No two entries of the files (archive.md too, with include_archived) share an
        id: their entries are then already unique (memcli.index.sync.unique_entries)."""
        names = self.entry_files(include_archived)
        return not repeated_ids([self.parsed(name) for name in names], self._merged)

    def update(self, name: str, change: Callable[[Document], T]) -> T:
        """Apply `change` to file `name` under the guarded-update protocol.

        The file must parse cleanly (a malformed entry stops the write with file:line).
        `change` mutates the document and returns a result; the file is written only if
        its text changed. A curated file `[files]` declares starts from its template
        (front matter, title, a section per type) when it does not exist yet.
        """
        if self.read_only:
            raise WorkspaceError(
                f"{self.root / name}: not written: the layer {self.root} is read-only "
                f"({self.read_only}); nothing was changed",
                hint="make the change in that workspace itself, or give it back its write bit",
            )
        files = self.files
        path = self.path(name)
        with contextlib.suppress(FileNotFoundError):
            self._owned(path, path.stat().st_uid)
        spec = files.spec(name)
        start = ""
        if spec is not None and not BUILTIN.is_curated(name) and not (self.root / name).exists():
            start = spec.template()

        def on_text(text: str) -> tuple[str | None, T]:
            text = text or start
            if len(text) > max_file_bytes():
                raise MemcliError(
                    f"{self.root / name}: above the {max_file_bytes() // 10**6} MB memcli "
                    "writes to one file; nothing was changed",
                    hint="split it, or set MEMCLI_MAX_FILE_MB higher",
                )
            doc = self._document(name, text)
            blocking = [p for p in doc.problems if p.blocks_writes]
            if blocking:  # a value read as its default (imp=high) does not stop writes
                raise blocking[0]
            before = doc.serialize()
            result = change(doc)
            after = doc.serialize()
            return (after if after != before else None), result

        return guarded_update(path, self._lock_path(name), on_text, self.history, name)

    def _document(self, name: str, text: str) -> Document:
        """The document of file `name`'s `text` to change: a copy of the memoized parse
        when it is of this very text (an add read the file just before), else a parse."""
        cached = self._parsed.get(name)
        if cached is not None and cached[1].text == text:
            return cached[1].doc.copy()
        from memcli.store.markdown import parse

        return parse(text, name, self.files)

    def observe(self, name: str) -> list[dict]:
        """Show the history the current content of file `name` (under the file's write
        lock, so a memcli write is never mistaken for someone else's). Returns the
        entries an external save removed right after memcli wrote them."""
        path = self.path(name)
        if not path.is_file():
            return []
        from memcli.store.files import settled_read

        with file_lock(self._lock_path(name)):
            data, _, settled = settled_read(path, self.history, name)
            if not settled:  # an editor's save in progress: its next event comes
                return []
            return self.history.observe(name, data)

    def settle(self) -> bool:
        """Wait until the entry files written in the last moments are quiet (an editor's
        save in progress), at most a few seconds; True when there was one to wait for."""
        from memcli.store.files import SETTLE_WINDOW, settled_read

        waited = False
        for name in self.entry_files(include_archived=True):
            path = self.path(name)
            try:
                recent = time.time() - path.stat().st_mtime < SETTLE_WINDOW
            except OSError:
                continue
            if recent:
                settled_read(path, self.history, name)
                waited = True
        return waited

    def _lock_path(self, name: str) -> Path:
        return self.state_dir / "locks" / (name.replace("/", "__") + ".lock")

    @property
    def history(self) -> History:
        """Every version of the files memcli replaced or saw (`.memcli/history`)."""
        if self._history is None:
            from memcli.store.history import History

            self._history = History(self.state_dir, files=lambda: self.files)
        return self._history


def repeated_ids(parses: list[Parsed], memo: _Merged | None = None) -> set[str]:
    """Ids more than one entry of these files carries, from each file's id counts: the
    files besides the biggest are merged (memoized while they stay the same parses) and
    looked up in its counts, so an edit of a big file costs what the edit changed and
    the size of the other files, not what the big file holds."""
    if not parses:
        return set()
    biggest = max(parses, key=lambda p: len(p.entries))
    others = tuple(p for p in parses if p is not biggest)
    memo = {} if memo is None else memo
    known = memo.get(len(others))
    if known is None or any(a is not b for a, b in zip(known[0], others, strict=True)):
        merged: dict[str, int] = {}
        for parsed in others:
            for entry_id, count in parsed.id_counts().items():
                merged[entry_id] = merged.get(entry_id, 0) + count
        known = memo[len(others)] = (others, merged, {i for i, n in merged.items() if n > 1})
    _, merged, repeated = known
    held = biggest.id_counts()
    return biggest.repeated_ids() | repeated | {i for i in merged if i in held}


def duplicate_ids(entries: list[Entry]) -> dict[str, list[Entry]]:
    """Ids used by more than one entry outside archive.md, with where they are."""
    places: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.file != ARCHIVE_FILE:
            places.setdefault(entry.id, []).append(entry)
    return {i: p for i, p in places.items() if len(p) > 1}


#: the warnings said on stderr since the command began: each is said once per command,
#: however many reads meet it (a long-lived process clears it per request: new_command)
_said: set[str] = set()


def new_command() -> None:
    """A new command begins in this process (a served request): its warnings are said
    again, once each."""
    _said.clear()


def _warn_stderr(problem: ParseError) -> None:
    skipped = " (entry skipped)" if getattr(problem, "skipped", True) else ""
    line = f"warning: {problem.message}{skipped}"
    if line not in _said:
        _said.add(line)
        print(line, file=sys.stderr)
