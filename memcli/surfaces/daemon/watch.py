"""Watching a workspace: watchdog events → relevant paths → debounced batches → a callback.

The batching (`Debouncer`) and the path filter (`is_relevant`) are pure and tested on
their own; `Watcher` wires them to a real watchdog observer and a worker thread. This
module knows nothing about indexing: the caller passes `on_batch`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memcli.core.names import STATE_DIR
from memcli.core.registry import BUILTIN, Registry

EDITOR_JUNK_SUFFIXES = (".swp", ".swx", ".swo", "~", ".tmp", ".bak", ".part", ".crswap")


def is_relevant(path: str | Path, root: Path, files: Registry = BUILTIN) -> bool:
    """True for the workspace's entry files (its registry's curated files, archive.md,
    episodes, conversations) and settings; False for derived state, editor temp/swap
    files and anything else."""
    try:
        rel = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return False
    parts = rel.parts
    if not parts or parts[0] == STATE_DIR or any(p.startswith(".") for p in parts):
        return False
    name = parts[-1]
    if name.endswith(EDITOR_JUNK_SUFFIXES) or name.startswith((".#", "#")) or name == "4913":
        return False
    return files.watched("/".join(parts))


@dataclass
class Debouncer:
    """Collects paths; a batch is ready once nothing arrived for `quiet` seconds, or the
    oldest pending path waited `max_wait` seconds."""

    quiet: float = 0.15
    max_wait: float = 1.0
    pending: dict[str, float] = field(default_factory=dict)
    first: float | None = None
    last: float | None = None

    def add(self, path: str, now: float) -> None:
        self.pending[path] = now
        self.first = now if self.first is None else self.first
        self.last = now

    def due(self, now: float) -> float | None:
        """Seconds until the pending batch is ready (0 when it is), None when empty."""
        if not self.pending or self.first is None or self.last is None:
            return None
        return max(0.0, min(self.last + self.quiet, self.first + self.max_wait) - now)

    def ready(self, now: float) -> list[str] | None:
        if not self.pending or self.first is None or self.last is None:
            return None
        if now - self.last >= self.quiet or now - self.first >= self.max_wait:
            batch = sorted(self.pending)
            self.pending.clear()
            self.first = self.last = None
            return batch
        return None


class Watcher:
    """A watchdog observer on `root` feeding `on_batch(relative paths)` from one thread;
    `files` gives the workspace's registry (asked at each event: memcli.toml may change
    which files there are)."""

    def __init__(
        self,
        root: Path,
        on_batch: Callable[[list[str]], None],
        quiet: float = 0.02,
        max_wait: float = 0.5,
        files: Callable[[], Registry] = lambda: BUILTIN,
    ) -> None:
        self.root = root.resolve()
        self.on_batch = on_batch
        self.files = files
        self.debouncer = Debouncer(quiet, max_wait)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._observer = None
        self._worker: threading.Thread | None = None

    def _event(self, event) -> None:  # noqa: ANN001 - watchdog FileSystemEvent
        for raw in (getattr(event, "src_path", None), getattr(event, "dest_path", None)):
            if not raw:
                continue
            path = raw.decode() if isinstance(raw, bytes) else raw
            if is_relevant(path, self.root, self.files()):
                rel = str(Path(path).resolve().relative_to(self.root))
                with self._lock:
                    self.debouncer.add(rel, time.monotonic())
                self._wake.set()

    def start(self) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:  # noqa: ANN001
                if event.event_type in ("opened", "closed_no_write"):
                    return
                watcher._event(event)

        observer = Observer()
        observer.schedule(Handler(), str(self.root), recursive=True)
        observer.start()
        self._observer = observer
        self._worker = threading.Thread(target=self._run, name="memcli-watch", daemon=True)
        self._worker.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                due = self.debouncer.due(time.monotonic())
            # sleep until the pending batch is due, or an event or stop() wakes us
            self._wake.wait(0.5 if due is None else due)
            self._wake.clear()
            with self._lock:
                batch = self.debouncer.ready(time.monotonic())
            if batch:
                self.on_batch(batch)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._worker is not None:
            self._worker.join(timeout=30)
