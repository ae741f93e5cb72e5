"""History of the Markdown files: every version memcli replaced or saw, kept so that no
state the files were ever in is lost (the guarantee git gives, without git).

`.memcli/history/` holds
- `objects/ab/cdef…`: file contents named by their sha256, each distinct content once,
  whole or as a delta against the version it replaced (memcli.store.history_objects);
- `log.jsonl`: one line per version (time, file, sha, the sha it replaced, source —
  `memcli` for memcli's own writes, `external` for a change someone else made, seen by a
  write or the watcher —, the operation and its id), and one per entry that an external
  save removed right after memcli wrote it (a stale editor buffer); `heads.json` indexes
  it (memcli.store.history_log);
- `detached/`: the files memcli replaced, kept for a while as they are (same inode): an
  editor that was still writing into one when memcli swapped its own version in has
  its bytes merged back by the next write (`late_writes`).

Old versions are pruned by age and total size, never the newest ones of a file, by
whatever process writes (memcli.store.history_prune).
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memcli.core.errors import MemcliError
from memcli.core.registry import BUILTIN, Registry
from memcli.store.history_log import Heads, dump
from memcli.store.history_log import read as read_log
from memcli.store.history_objects import Objects, sha256
from memcli.store.history_prune import KEEP_PER_FILE as KEEP_PER_FILE
from memcli.store.history_prune import MAX_RECORDS as MAX_RECORDS
from memcli.store.history_prune import note_append, prune_locked

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memcli.store.document import Document

KEEP_DAYS = 30
KEEP_MB = 100
DETACHED_GRACE = 120.0  # seconds a replaced file is watched for late writes
MAX_DETACHED = 8  # per file: the oldest beyond these is dropped (its content stays in objects/)

_operation: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "memcli_operation", default=None
)


@contextlib.contextmanager
def operation(name: str) -> Iterator[str]:
    """Group the writes of one command (`add`, `compress`, …) for `history` and `undo`."""
    current = _operation.get()
    if current is not None:  # nested: the outer operation names it
        yield current[1]
        return
    opid = f"{time.time_ns():x}-{os.getpid()}"
    token = _operation.set((name, opid))
    try:
        yield opid
    finally:
        _operation.reset(token)


_undoing: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "memcli_undoing", default=None
)


@contextlib.contextmanager
def undoing(opid: str) -> Iterator[None]:
    """Mark the writes of the block as the undo of operation `opid`."""
    token = _undoing.set(opid)
    try:
        yield
    finally:
        _undoing.reset(token)


def current_operation() -> tuple[str, str]:
    found = _operation.get()
    return found if found is not None else ("write", f"{time.time_ns():x}-{os.getpid()}")


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Detached:
    """A replaced file kept under `detached/`, and whether someone wrote to it since."""

    path: Path
    file: str  # workspace-relative name of the file it was
    since_ns: int
    sha: str  # its content when it was detached

    def late_content(self) -> bytes | None:
        """Its content now, if that differs from when it was detached (else None)."""
        try:
            if self.path.stat().st_mtime_ns < self.since_ns - 50_000_000:
                return None  # last written well before it was detached: cheap, no read
            data = self.path.read_bytes()  # by content: a write in the same clock tick
        except OSError:  # keeps an mtime a little older than the detach
            return None
        return data if sha256(data) != self.sha else None


@dataclass
class History:
    """The version store of one workspace (`.memcli/history`)."""

    state_dir: Path
    keep_days: float = KEEP_DAYS
    keep_mb: float = KEEP_MB
    _objects: Objects | None = field(default=None, repr=False)
    _heads: Heads | None = field(default=None, repr=False)
    #: the workspace's registry, as its store reads it (the types of removed entries)
    files: Callable[[], Registry] = field(default=lambda: BUILTIN, repr=False)

    @property
    def dir(self) -> Path:
        return self.state_dir / "history"

    @property
    def log_path(self) -> Path:
        return self.dir / "log.jsonl"

    @property
    def detached_dir(self) -> Path:
        return self.dir / "detached"

    @property
    def objects(self) -> Objects:
        if self._objects is None:
            self._objects = Objects(self.dir / "objects")
        return self._objects

    @property
    def heads(self) -> Heads:
        if self._heads is None:
            self._heads = Heads(self.dir)
        return self._heads

    # ----------------------------------------------------------------- objects

    def put(self, data: bytes, base: str | None = None) -> str:
        """Store `data` once (a delta against `base` when cheap); returns its sha256."""
        return self._put(data, base)[0]

    def _put(self, data: bytes, base: str | None = None) -> tuple[str, int]:
        try:
            return self.objects.put(data, base)
        except OSError as exc:
            raise _unwritable(self.dir, exc) from None

    def get(self, digest: str) -> bytes:
        """The content stored under `digest` (KeyError when it was pruned or never kept)."""
        return self.objects.get(digest)

    # --------------------------------------------------------------------- log

    def records(self) -> list[dict]:
        """Every record of the log, oldest first, each with `_line` (its line number;
        unreadable lines skipped)."""
        return read_log(self.log_path)[0]

    def head(self, file: str) -> str | None:
        """The sha of the newest version of `file` the history knows."""
        found = self.heads.current().get(file)
        return found[0] if found else None

    def _append(self, record: dict, data: bytes | None = None, stored: int = 0) -> None:
        """Log one record; under the history lock its object is checked to be whole
        first (a prune may have taken an object not logged yet: it is stored again)."""
        from memcli.store.files import file_lock

        try:
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise _unwritable(self.dir, exc) from None
        with file_lock(self.state_dir / "locks" / "history.lock"):
            if data is not None and not self.objects.intact(record["sha"]):
                self.objects.forget(record["sha"])
                stored += self._put(data)[1]  # whole, no base to lose
            try:
                fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, dump(record).encode("utf-8"))
                finally:
                    os.close(fd)
            except OSError as exc:
                raise _unwritable(self.dir, exc) from None
            if note_append(self, stored):
                prune_locked(self)

    def record(
        self, file: str, data: bytes, *, source: str, prev: str | None = None, **extra: object
    ) -> str:
        """Keep `data` as the newest version of `file`; returns its sha."""
        digest, stored = self._put(data, prev)
        if source == "external" and self.head(file) == digest:
            return digest
        name, opid = current_operation()
        record = {"t": _now(), "file": file, "sha": digest, "prev": prev, "source": source}
        if source != "external":
            record.update(op=name, opid=opid)
            undoes = _undoing.get()
            if undoes:
                record["undoes"] = undoes
        record.update(extra)
        self._append(record, data, stored)
        return digest

    def observe(self, file: str, data: bytes) -> list[dict]:
        """Note the current content of `file`. A content the history has not seen as the
        file's newest version is an external change: it is kept (an operation `undo`
        can take back), and entries it removed that memcli had just written (a stale
        editor buffer saved over them) are recorded and returned as lost."""
        digest = sha256(data)
        previous = self.head(file)
        if previous == digest:
            self.objects.remember(digest, data)  # the base of the next write's delta
            return []
        lost = [] if previous is None else self._removed_memcli_entries(file, previous, data)
        self.record(file, data, source="external", prev=previous)
        if lost:
            self._append(
                {"t": _now(), "event": "removed", "file": file, "sha": digest, "entries": lost}
            )
        return lost

    def _removed_memcli_entries(self, file: str, previous: str, data: bytes) -> list[dict]:
        """Entries of `previous` that memcli wrote since the file's last external
        version and that `data` no longer has ("removed"), or has with another text
        ("reverted": a stale buffer saved over memcli's edit); id, text, type and
        metadata each."""
        from memcli.store.markdown import parse as parse_with

        files = self.files()

        def parse(text: str, name: str) -> Document:
            return parse_with(text, name, files)

        head = self.heads.current().get(file)
        if head is not None and head == (previous, "external"):
            return []  # memcli wrote nothing since the last external version: nothing lost
        try:
            before = self.get(previous)
        except KeyError:
            return []
        old = _entries(parse, before, file)
        new = _entries(parse, data, file)
        removed = {i: e for i, e in old.items() if i not in new or new[i].text != e.text}
        if not removed:
            return []
        baseline = self._last_external_before(file, previous)
        if baseline is None:
            return []
        try:
            kept_before = _entries(parse, self.get(baseline), file)
        except KeyError:
            return []
        return [
            {
                "id": i,
                "text": e.text,
                "type": e.type,
                "meta": dict(e.meta),
                "kind": "removed" if i not in new else "reverted",
            }
            for i, e in removed.items()
            if i not in kept_before or kept_before[i].text != e.text
        ]

    def _last_external_before(self, file: str, head: str) -> str | None:
        """The newest version of `file` up to `head` that memcli did not write (from the
        heads index: no read of the whole log)."""
        self.heads.current()
        return self.heads.baseline.get(file)

    def lost_entries(self) -> list[dict]:
        """Every entry an external save removed right after memcli wrote it, with when
        and the log line (`line`) that says so."""
        out = []
        for record in self.records():
            if record.get("event") == "removed":
                for entry in record.get("entries", []):
                    if isinstance(entry, dict):
                        out.append(
                            {"t": record["t"], "file": record.get("file"),
                             "line": record["_line"], **entry}
                        )
        return out

    def versions(self, file: str | None = None) -> list[dict]:
        """Version records (of `file`, or of every file), oldest first."""
        return [
            r
            for r in self.records()
            if "sha" in r
            and r.get("event", "version") == "version"
            and (file is None or r.get("file") == file)
        ]

    def operations(self) -> list[dict]:
        """The changes `undo` can take back, oldest first: memcli's writes grouped by
        operation, and each save someone else made (an editor, seen by memcli or the
        watcher: op `hand edit`). Each with `op`, `opid`, `t` (its first write), `line`
        and `writes` (file, prev, sha, line; in order)."""
        grouped: dict[str, dict] = {}
        for record in self.versions():
            source = record.get("source")
            if source == "memcli" and record.get("opid"):
                opid, op = str(record["opid"]), str(record.get("op", "write"))
            elif source == "external" and record.get("prev"):
                opid, op = f"hand-{record['t']}-{str(record['sha'])[:12]}", "hand edit"
            else:
                continue  # a file's first sighting, bytes merged back: no one's change
            group = grouped.setdefault(
                opid,
                {"op": op, "opid": opid, "t": record["t"], "line": record["_line"],
                 "undoes": record.get("undoes"), "writes": []},
            )
            group["writes"].append(
                {"file": record["file"], "prev": record.get("prev"), "sha": record["sha"],
                 "line": record["_line"]}
            )
        return list(grouped.values())

    def note_undo(self, opid: str, files: list[str], done: bool = False) -> None:
        """Log that an undo of `opid` sets out to write `files` (before it writes any),
        or, `done`, that it wrote them all: an undo cut short is finished by the next."""
        event = "undo-done" if done else "undo"
        self._append({"t": _now(), "event": event, "undoes": opid, "files": files})

    def undone(self) -> set[str]:
        """The operations an undo took back."""
        return {str(r["undoes"]) for r in self.records() if r.get("undoes")}

    # ---------------------------------------------------------------- detached

    def detach(self, file: str, replaced: Path, content: bytes) -> None:
        """Keep the file memcli just replaced (now at `replaced`) under `detached/`, so
        bytes an editor still writes into it are found by `late_writes`."""
        digest = self.put(content)
        self.detached_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = self.detached_dir / f"{_escape(file)}.{time.time_ns()}.{digest}"
        try:
            os.rename(replaced, target)
        except OSError:  # another file system: its content is kept in objects/
            with contextlib.suppress(OSError):
                os.unlink(replaced)
        if not self.objects.intact(digest):  # a prune took it before it was listed here
            self.objects.forget(digest)
            self._put(content)
        for old in self.detached(file)[:-MAX_DETACHED]:
            if old.late_content() is None:  # one with late bytes stays until merged
                with contextlib.suppress(OSError):
                    old.path.unlink()

    def detached(self, file: str | None = None) -> list[Detached]:
        try:
            names = os.listdir(self.detached_dir)
        except FileNotFoundError:
            return []
        out = []
        for name in names:
            escaped, _, rest = name.partition(".")
            since, _, digest = rest.partition(".")
            if not since.isdigit() or len(digest) != 64:
                continue
            owner = _unescape(escaped)
            if file is None or owner == file:
                out.append(Detached(self.detached_dir / name, owner, int(since), digest))
        return sorted(out, key=lambda d: d.since_ns)

    def late_writes(self, file: str) -> list[tuple[Detached, bytes]]:
        """Detached copies of `file` someone wrote into after memcli replaced them, with
        their content now; copies past their grace period and unchanged are dropped."""
        out = []
        now = time.time_ns()
        for item in self.detached(file):
            late = item.late_content()
            if late is not None:
                out.append((item, late))
            elif now - item.since_ns > DETACHED_GRACE * 1e9:
                with contextlib.suppress(OSError):
                    item.path.unlink()
        return out

    def settle(self, item: Detached, content: bytes) -> None:
        """The late content of a detached copy is merged: keep it, and keep watching the
        copy with that content as its new starting point."""
        digest = self.put(content)
        self._append(
            {"t": _now(), "file": item.file, "sha": digest, "source": "recovered",
             "event": "late-write", "op": current_operation()[0]},
            content,
        )
        target = self.detached_dir / f"{_escape(item.file)}.{time.time_ns()}.{digest}"
        with contextlib.suppress(OSError):
            os.rename(item.path, target)

    # ------------------------------------------------------------------ prune

    def prune(self) -> None:
        """Drop old versions by age and size (memcli.store.history_prune)."""
        from memcli.store.files import file_lock

        with file_lock(self.state_dir / "locks" / "history.lock"):
            prune_locked(self)


class HistoryUnwritable(MemcliError):
    """The history could not be written; what that left undone is said where it is
    caught (before a file's write: nothing changed; after it: only the history)."""


def _unwritable(directory: Path, exc: OSError) -> HistoryUnwritable:
    return HistoryUnwritable(
        f"{directory}: the write failed: cannot keep the history of the files "
        f"({exc.strerror})",
        hint="free disk space or fix permissions, then run the command again",
    )


def _entries(parse, data: bytes, file: str) -> dict:  # noqa: ANN001 - markdown.parse
    """id -> Entry of one version of a file ({} when it is not valid UTF-8)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return {}
    return {e.id: e for e in parse(text, file).entries()}


def _escape(file: str) -> str:
    return file.replace("%", "%25").replace("/", "%2F").replace(".", "%2E")


def _unescape(escaped: str) -> str:
    return escaped.replace("%2E", ".").replace("%2F", "/").replace("%25", "%")
