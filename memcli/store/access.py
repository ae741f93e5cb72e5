"""Access statistics per entry id (`.memcli/access.json`).

They are the one piece of `.memcli/` that is not derived from the Markdown: an index
rebuild keeps them. A corrupt file is set aside (not deleted) and counting restarts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memcli.core.errors import MemcliError
from memcli.core.models import format_time, utc_now
from memcli.store.files import atomic_write, file_lock

ACCESS_FILE = "access.json"


@dataclass(frozen=True)
class Access:
    count: int = 0
    last: str | None = None  # ISO time of the last access


class AccessStats:
    """Read and bump access counts, locked against concurrent memcli processes."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / ACCESS_FILE
        self.lock = state_dir / "locks" / "access.lock"
        #: a long-lived process (the watch daemon) sets this: touches are kept in memory
        #: (and counted by load) until flush(), which it calls once requests pause
        self.defer = False
        #: touches not yet written, per id: how many, and the time of the last one (a
        #: watcher's load adds one per touched id, not one per touch since the last flush)
        self._pending: dict[str, Access] = {}
        #: time.monotonic() of the oldest touch not yet written (None: nothing pending)
        self.pending_since: float | None = None
        self._parsed: tuple[tuple[int, int, int], dict[str, Access]] | None = None
        #: why the layer may not be written (set by services.layers): touches are not
        #: counted then, the counts on disk are only read
        self.read_only: str | None = None

    def load(self) -> dict[str, Access]:
        """Counts on disk plus touches not yet flushed."""
        data = self._read()
        _add(data, self._pending)
        return data

    def _read(self) -> dict[str, Access]:
        try:
            stat = self.path.stat()
            stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            if self._parsed is not None and self._parsed[0] == stamp:
                return dict(self._parsed[1])  # unchanged since the last read
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            data = {
                k: Access(int(v.get("count", 0)), v.get("last"))
                for k, v in raw.items()
                if isinstance(v, dict)
            }
            self._parsed = (stamp, data)
            return dict(data)
        except FileNotFoundError:
            return {}
        except (ValueError, OSError, AttributeError):
            aside = self.path.with_suffix(".corrupt")
            try:
                os.replace(self.path, aside)
                print(f"warning: {self.path} was unreadable; kept as {aside}", file=sys.stderr)
            except OSError:
                pass
            return {}

    def get(self, entry_id: str) -> Access:
        return self.load().get(entry_id, Access())

    def touch(self, ids: Iterable[str]) -> None:
        """Count one access for each id, now."""
        ids = list(ids)
        if not ids or self.read_only:
            return
        pending = self._pending
        if not pending:
            self.pending_since = time.monotonic()
        when = format_time(utc_now())
        for entry_id in ids:
            old = pending.get(entry_id)
            pending[entry_id] = Access(1 if old is None else old.count + 1, when)
        if not self.defer:
            self.flush()

    def flush(self) -> None:
        """Write the touches kept in memory."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        self.pending_since = None
        try:
            with file_lock(self.lock):
                data = self._read()
                _add(data, pending)
                self._save(data)
        except (OSError, MemcliError):
            pass  # statistics are best effort (read-only workspace, full disk)

    def merge(self, target: str, sources: Iterable[str]) -> None:
        """Add the counts of `sources` to `target` (used when entries merge)."""
        self.flush()
        with file_lock(self.lock):
            data = self._read()
            total = data.get(target, Access())
            count, last = total.count, total.last
            for source in sources:
                other = data.pop(source, None)
                if other:
                    count += other.count
                    last = max(filter(None, [last, other.last]), default=None)
            data[target] = Access(count, last)
            self._save(data)

    def _save(self, data: dict[str, Access]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {k: {"count": v.count, "last": v.last} for k, v in sorted(data.items())}
        atomic_write(self.path, json.dumps(payload, ensure_ascii=False, indent=0))


def _add(data: dict[str, Access], pending: dict[str, Access]) -> None:
    """Count the touches `pending` holds into `data` (each id's last access: its last
    touch)."""
    for entry_id, touched in pending.items():
        old = data.get(entry_id)
        data[entry_id] = touched if old is None else Access(old.count + touched.count, touched.last)
