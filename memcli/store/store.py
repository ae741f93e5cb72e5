"""The Markdown store of one workspace: which files hold entries, loading them, and
changing them through guarded atomic updates."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from memcli.errors import ParseError
from memcli.models import ARCHIVE_FILE, EPISODES_DIR, LEARNINGS_FILE, MEMORY_FILE, Entry
from memcli.store.files import guarded_update, read_text
from memcli.store.markdown import Document, parse
from memcli.store.workspace import STATE_DIR

T = TypeVar("T")


@dataclass
class Store:
    """Reads and writes the Markdown files of a workspace."""

    root: Path
    _parsed: dict[str, tuple[tuple[int, ...], Document]] = field(default_factory=dict, repr=False)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def entry_files(self, include_archived: bool = False) -> list[str]:
        """Workspace-relative names of the files that hold searchable entries."""
        names = [MEMORY_FILE, LEARNINGS_FILE]
        episodes = self.root / EPISODES_DIR
        if episodes.is_dir():
            names += sorted(f"{EPISODES_DIR}/{p.name}" for p in episodes.glob("*.md"))
        if include_archived:
            names.append(ARCHIVE_FILE)
        return [n for n in names if (self.root / n).is_file()]

    def load(self, name: str, strict: bool = False) -> Document:
        """Parse one file (memoized while its size, mtime and inode stay the same; treat
        the result as read-only). strict: raise its first problem instead of skipping it."""
        path = self.root / name
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
        cached = self._parsed.get(name)
        if signature is not None and cached is not None and cached[0] == signature:
            doc = cached[1]
        else:
            doc = parse(read_text(path), name)
            if signature is not None:
                self._parsed[name] = (signature, doc)
        if strict and doc.problems:
            raise doc.problems[0]
        return doc

    def entries(
        self, include_archived: bool = False, warn: Callable[[ParseError], None] | None = None
    ) -> list[Entry]:
        """Every entry of the workspace, in file order. Malformed entries are skipped
        and reported through `warn` (stderr by default)."""
        result: list[Entry] = []
        for name in self.entry_files(include_archived):
            doc = self.load(name)
            for problem in doc.problems:
                (warn or _warn_stderr)(problem)
            result.extend(doc.entries())
        return result

    def update(self, name: str, change: Callable[[Document], T]) -> T:
        """Apply `change` to file `name` under the guarded-update protocol.

        The file must parse cleanly (a malformed entry stops the write with file:line).
        `change` mutates the document and returns a result; the file is written only if
        its text changed.
        """

        def on_text(text: str) -> tuple[str | None, T]:
            doc = parse(text, name)
            if doc.problems:
                raise doc.problems[0]
            before = doc.serialize()
            result = change(doc)
            after = doc.serialize()
            return (after if after != before else None), result

        lock = self.state_dir / "locks" / (name.replace("/", "__") + ".lock")
        return guarded_update(self.root / name, lock, on_text)


def _warn_stderr(problem: ParseError) -> None:
    print(f"warning: {problem.message} (entry skipped)", file=sys.stderr)
