"""The history's log (`.memcli/history/log.jsonl`) read back: its records, each with the
line it is on; which file names a record may carry; and the heads index
(`heads.json`), so a command learns each file's newest version from the index and the
lines written after it instead of reading the whole log.

A name in the log is only trusted when it is one of the workspace's own entry files
(its registry's curated files, archive.md, episodes/*.md, conversations/*.md:
memcli.core.registry.Registry.is_entry_file): anything else (`../outside.txt`,
`episodes/../../x`) is
refused where it would be used, naming the log line.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from memcli.core.errors import MemcliError
from memcli.core.registry import BUILTIN, Registry

INDEX_AFTER = 64 * 1024  # log bytes past the index before a reader writes a new one


def own_file(name: object, files: Registry = BUILTIN) -> bool:
    """Whether `name` (read from the log or a file) is one of the entry files of a
    workspace with registry `files`: never absolute, never `..`, never a hidden or
    control-character name."""
    if not isinstance(name, str) or "\\" in name or not files.is_entry_file(name):
        return False
    last = name.rsplit("/", 1)[-1]
    return not last.startswith(".") and all(c >= " " and c != "\x7f" for c in name)


def refuse(log_path: Path, record: dict, what: str) -> MemcliError:
    """The error for a record naming a file that is not the workspace's own."""
    return MemcliError(
        f"{log_path}:{record.get('_line', '?')}: names the file {record.get('file')!r}, "
        f"which is not one of this workspace's entry files; {what} refused, nothing "
        "was changed",
        hint="that line was not written by memcli: remove it from the log",
    )


def read(path: Path, offset: int = 0, first_line: int = 1) -> tuple[list[dict], int, int]:
    """The records from byte `offset` (line `first_line`) on, each with `_line`; returns
    them, the offset after the last complete line and the next line number."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            raw = handle.read()
    except FileNotFoundError:
        return [], 0, 1
    end = raw.rfind(b"\n") + 1  # a line still being appended is read next time
    out = []
    line_no = first_line
    for line in raw[:end].split(b"\n")[:-1] if end else []:
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict):
                record["_line"] = line_no
                out.append(record)
        line_no += 1
    return out, offset + end, line_no


def dump(record: dict) -> str:
    """One log line (without the `_` keys reading added)."""
    clean = {k: v for k, v in record.items() if not k.startswith("_")}
    return json.dumps(clean, ensure_ascii=False) + "\n"


class Heads:
    """Each file's newest version (sha, source), kept current from the log's tail."""

    def __init__(self, directory: Path) -> None:
        self.log_path = directory / "log.jsonl"
        self.index_path = directory / "heads.json"
        self.heads: dict[str, tuple[str, str]] = {}
        #: file -> its newest version memcli did not write (or what its first record
        #: replaced): what a stale editor buffer is compared against
        self.baseline: dict[str, str | None] = {}
        self._at: tuple[int, int, int] | None = None  # (inode, offset, next line)
        self._indexed = 0  # the offset the index on disk was written at

    def current(self) -> dict[str, tuple[str, str]]:
        try:
            st = self.log_path.stat()
        except FileNotFoundError:
            self.heads, self.baseline, self._at = {}, {}, None
            return self.heads
        if self._at is None or self._at[0] != st.st_ino or self._at[1] > st.st_size:
            self._load_index(st.st_ino, st.st_size)
        assert self._at is not None
        if self._at[1] < st.st_size:
            ino, offset, line = self._at
            records, end, line = read(self.log_path, offset, line)
            self.apply(records)
            self._at = (ino, end, line)
            if end - self._indexed > INDEX_AFTER:
                self._save_index()
        return self.heads

    def apply(self, records: list[dict]) -> None:
        for record in records:
            if "sha" in record and record.get("event", "version") == "version":
                file = str(record.get("file"))
                self.heads[file] = (record["sha"], record.get("source", ""))
                if record.get("source") == "external":
                    self.baseline[file] = record["sha"]
                elif file not in self.baseline:
                    self.baseline[file] = record.get("prev")

    def _load_index(self, ino: int, size: int) -> None:
        self.heads, self.baseline, self._at, self._indexed = {}, {}, (ino, 0, 1), 0
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
            if data["ino"] == ino and data["offset"] <= size:
                self.heads = {f: (h[0], h[1]) for f, h in data["heads"].items()}
                self.baseline = dict(data["baseline"])
                self._at = (ino, int(data["offset"]), int(data["line"]))
                self._indexed = int(data["offset"])

    def _save_index(self) -> None:
        """Write the index (a cache: no fsync; a torn or stale one is read past)."""
        assert self._at is not None
        ino, offset, line = self._at
        data = {"ino": ino, "offset": offset, "line": line, "heads": self.heads,
                "baseline": self.baseline}
        tmp = self.index_path.with_name(f".heads.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
            os.replace(tmp, self.index_path)
            self._indexed = offset
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def forget(self) -> None:
        """The log was rewritten (a prune): read it again next time."""
        self._at = None
