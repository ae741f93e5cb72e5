"""History of the Markdown files: every version memcli replaced or saw, kept so that no
state the files were ever in is lost (the guarantee git gives, without git).

`.memcli/history/` holds
- `objects/ab/cdef…`: file contents, zlib-compressed, named by their sha256 (each
  distinct content once);
- `log.jsonl`: one line per version (time, file, sha, the sha it replaced, source —
  `memcli` for memcli's own writes, `external` for a change someone else made, seen by a
  write or the watcher —, the operation and its id), and one per entry that an external
  save removed right after memcli wrote it (a stale editor buffer);
- `detached/`: the files memcli replaced, kept for a while as they are (same inode): an
  editor that was still writing into one when memcli swapped its own version in has
  its bytes merged back by the next write (`late_writes`).

Old versions are pruned by age and total size, never the newest ones of a file.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import hashlib
import json
import os
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memcli.core.errors import MemcliError

KEEP_DAYS = 30
KEEP_MB = 100
KEEP_PER_FILE = 20  # the newest versions of each file survive any pruning
MAX_RECORDS = 20_000  # log lines (≈ 4 MB): beyond these the oldest go, whatever their age
DETACHED_GRACE = 120.0  # seconds a replaced file is watched for late writes
MAX_DETACHED = 8  # per file: the oldest beyond these is dropped (its content stays in objects/)
PRUNE_EVERY = 64  # records between two prunes

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


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
    _heads: dict[str, str] | None = field(default=None, repr=False)
    _head_sources: dict[str, str] = field(default_factory=dict, repr=False)
    _log_stamp: tuple[int, int] | None = field(default=None, repr=False)
    _since_prune: int = field(default=0, repr=False)

    @property
    def dir(self) -> Path:
        return self.state_dir / "history"

    @property
    def log_path(self) -> Path:
        return self.dir / "log.jsonl"

    @property
    def detached_dir(self) -> Path:
        return self.dir / "detached"

    # ----------------------------------------------------------------- objects

    def put(self, data: bytes) -> str:
        """Store `data` once; returns its sha256."""
        try:
            return self._put(data)
        except OSError as exc:
            raise _unwritable(self.dir, exc) from None

    def _put(self, data: bytes) -> str:
        digest = sha256(data)
        path = self._object_path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(zlib.compress(data, 1))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        return digest

    def get(self, digest: str) -> bytes:
        """The content stored under `digest` (KeyError when it was pruned or never kept)."""
        try:
            return zlib.decompress(self._object_path(digest).read_bytes())
        except (FileNotFoundError, zlib.error):
            raise KeyError(digest) from None

    def _object_path(self, digest: str) -> Path:
        return self.dir / "objects" / digest[:2] / digest[2:]

    # --------------------------------------------------------------------- log

    def records(self) -> list[dict]:
        """Every record of the log, oldest first (unreadable lines skipped)."""
        try:
            raw = self.log_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in raw.splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    out.append(record)
        return out

    def head(self, file: str) -> str | None:
        """The sha of the newest version of `file` the history knows."""
        return self._load_heads().get(file)

    def _load_heads(self) -> dict[str, str]:
        try:
            st = self.log_path.stat()
            stamp = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            stamp = (0, 0)
        if self._heads is None or self._log_stamp != stamp:
            heads: dict[str, str] = {}
            sources: dict[str, str] = {}
            for record in self.records():
                if "sha" in record and record.get("event", "version") == "version":
                    heads[record["file"]] = record["sha"]
                    sources[record["file"]] = record.get("source", "")
            self._heads, self._head_sources, self._log_stamp = heads, sources, stamp
        return self._heads

    def _append(self, record: dict) -> None:
        from memcli.store.files import file_lock

        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with file_lock(self.state_dir / "locks" / "history.lock"):
            try:
                fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, line.encode("utf-8"))
                finally:
                    os.close(fd)
            except OSError as exc:
                raise _unwritable(self.dir, exc) from None
        if record.get("event", "version") == "version":
            heads = self._load_heads()
            heads[record["file"]] = record["sha"]
            with contextlib.suppress(OSError):
                st = self.log_path.stat()
                self._log_stamp = (st.st_size, st.st_mtime_ns)
        self._since_prune += 1
        if self._since_prune >= PRUNE_EVERY:
            self._since_prune = 0
            self.prune()

    def record(
        self, file: str, data: bytes, *, source: str, prev: str | None = None, **extra: object
    ) -> str:
        """Keep `data` as the newest version of `file`; returns its sha."""
        digest = self.put(data)
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
        self._append(record)
        return digest

    def observe(self, file: str, data: bytes) -> list[dict]:
        """Note the current content of `file`. A content the history has not seen as the
        file's newest version is an external change: it is kept, and entries it removed
        that memcli had just written (a stale editor buffer saved over them) are recorded
        and returned as lost."""
        digest = sha256(data)
        previous = self.head(file)
        if previous == digest:
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
        from memcli.store.markdown import parse

        if self.head(file) == previous and self._head_sources.get(file) == "external":
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
        """The newest version of `file` up to `head` that memcli did not write."""
        chain = [r for r in self.records() if r.get("file") == file and "source" in r]
        for record in reversed(chain):
            if record.get("source") == "external":
                return record["sha"]
        return chain[0].get("prev") if chain else None

    def lost_entries(self) -> list[dict]:
        """Every entry an external save removed right after memcli wrote it, with when."""
        out = []
        for record in self.records():
            if record.get("event") == "removed":
                for entry in record.get("entries", []):
                    out.append({"t": record["t"], "file": record["file"], **entry})
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
        """memcli's own writes grouped by operation, oldest first: each with `op`,
        `opid`, `t` (its first write) and `writes` (file, prev, sha; in order)."""
        grouped: dict[str, dict] = {}
        for record in self.versions():
            if record.get("source") != "memcli" or not record.get("opid"):
                continue
            group = grouped.setdefault(
                record["opid"],
                {"op": record.get("op", "write"), "opid": record["opid"], "t": record["t"],
                 "undoes": record.get("undoes"), "writes": []},
            )
            group["writes"].append(
                {"file": record["file"], "prev": record.get("prev"), "sha": record["sha"]}
            )
        return list(grouped.values())

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
             "event": "late-write", "op": current_operation()[0]}
        )
        target = self.detached_dir / f"{_escape(item.file)}.{time.time_ns()}.{digest}"
        with contextlib.suppress(OSError):
            os.rename(item.path, target)

    # ------------------------------------------------------------------ prune

    def prune(self) -> None:
        """Drop versions older than `keep_days`, the oldest beyond MAX_RECORDS, and then
        the oldest until the objects fit in `keep_mb`, keeping each file's newest
        KEEP_PER_FILE versions."""
        from memcli.store.files import file_lock

        with file_lock(self.state_dir / "locks" / "history.lock"):
            records = self.records()
            if not records:
                return
            cutoff = (dt.datetime.now(dt.UTC) - dt.timedelta(days=self.keep_days)).strftime(
                "%Y-%m-%dT%H:%M:%S"
            )
            protected: set[int] = set()
            per_file: dict[str, int] = {}
            for index in range(len(records) - 1, -1, -1):
                file = records[index].get("file", "")
                per_file[file] = per_file.get(file, 0) + 1
                if per_file[file] <= KEEP_PER_FILE:
                    protected.add(index)
            kept = [
                (i, r) for i, r in enumerate(records) if i in protected or r.get("t", "") >= cutoff
            ]
            excess = len(kept) - MAX_RECORDS  # a log every process reads stays small
            if excess > 0:
                oldest = [i for i, _ in kept if i not in protected][:excess]
                gone = set(oldest)
                kept = [(i, r) for i, r in kept if i not in gone]
            sizes = self._object_sizes()
            refs: dict[str, int] = {}
            for _, r in kept:
                refs[r.get("sha", "")] = refs.get(r.get("sha", ""), 0) + 1
            total = sum(sizes.get(digest, 0) for digest in refs)
            limit = self.keep_mb * 1e6
            dropped: set[int] = set()
            for i, r in kept:  # oldest first
                if total <= limit:
                    break
                if i in protected:
                    continue
                dropped.add(i)
                digest = r.get("sha", "")
                refs[digest] -= 1
                if refs[digest] == 0:
                    total -= sizes.get(digest, 0)
            keep = [r for i, r in kept if i not in dropped]
            if len(keep) != len(records):
                from memcli.store.files import atomic_write

                text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep)
                atomic_write(self.log_path, text)
                self._heads = None
            wanted = {r.get("sha") for r in keep} | {r.get("prev") for r in keep}
            wanted |= {d.sha for d in self.detached()}
            for digest in self._object_sizes():
                if digest not in wanted:
                    with contextlib.suppress(OSError):
                        self._object_path(digest).unlink()

    def _object_sizes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        root = self.dir / "objects"
        with contextlib.suppress(FileNotFoundError):
            for sub in os.scandir(root):
                if sub.is_dir():
                    for item in os.scandir(sub.path):
                        if not item.name.startswith("."):
                            out[sub.name + item.name] = item.stat().st_size
        return out


def _unwritable(directory: Path, exc: OSError) -> MemcliError:
    return MemcliError(
        f"{directory}: the write failed: cannot keep the history of the files "
        f"({exc.strerror}); "
        "nothing was changed",
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
