"""Access statistics per entry id (`.memcli/access.json`).

They are the one piece of `.memcli/` that is not derived from the Markdown: an index
rebuild keeps them. A corrupt file is set aside (not deleted) and counting restarts.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import MemcliError
from memcli.models import format_time, utc_now
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

    def load(self) -> dict[str, Access]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {
                k: Access(int(v.get("count", 0)), v.get("last"))
                for k, v in raw.items()
                if isinstance(v, dict)
            }
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
        if not ids:
            return
        now = format_time(utc_now())
        try:
            with file_lock(self.lock):
                data = self.load()
                for entry_id in ids:
                    old = data.get(entry_id, Access())
                    data[entry_id] = Access(old.count + 1, now)
                self._save(data)
        except (OSError, MemcliError):
            pass  # statistics are best effort (read-only workspace, full disk)

    def merge(self, target: str, sources: Iterable[str]) -> None:
        """Add the counts of `sources` to `target` (used when entries merge)."""
        with file_lock(self.lock):
            data = self.load()
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
