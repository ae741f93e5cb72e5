"""The watcher's other layers (docs/layers.md): `memcli watch` in a project observes the
files of every layer the project reads (the per-user workspace, the paths `[layers]
read` names) and indexes each one's edits as it does its own, so a served search finds
a hand edit in the person's own memory.md without syncing it first.

Which layers those are is decided again once a second (memcli.services.layers.
open_layers: a changed `[layers]`, a `memcli trust`, a per-user workspace that
appears): a layer no longer read stops being observed. Into another layer the watcher
writes only its index, the derived state a search of that layer writes anyway; never
its Markdown, its history or its access statistics (the layer's own watcher, or a
command run there, does that), and nothing into a layer the person made read-only
(memcli.store.readonly.read_only): such a layer is not observed, and `watch --status` says why.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcli.core.errors import MemcliError
from memcli.core.registry import BUILTIN, Registry
from memcli.store.readonly import read_only
from memcli.surfaces.daemon.watch import Watcher

#: seconds between two tries of a layer whose sync failed (a lock held elsewhere)
RETRY_S = 30.0


@dataclass
class Observed:
    """A layer the watcher follows: its watcher, or why it does not index it."""

    name: str
    root: Path
    files: Registry = BUILTIN
    watcher: Watcher | None = None
    blocked: str | None = None
    batches: int = 0
    last_batch: dict[str, Any] | None = None
    entries: int = 0
    retry_at: float = 0.0

    def status(self) -> dict[str, Any]:
        if self.blocked:
            return {"workspace": str(self.root), "not_indexed": self.blocked}
        return {
            "workspace": str(self.root),
            "entries": self.entries,
            "batches": self.batches,
            "last_batch": self.last_batch,
        }


class LayerWatch:
    """The other layers of a WatchService's workspace: `tick()` (once a second) follows
    the layer list and catches up an index the files moved past; `on_batch` indexes a
    layer's edits under the service's lock."""

    def __init__(self, service: Any, log: Callable[[str], None]) -> None:
        self.service = service
        self.log = log
        self.observed: dict[Path, Observed] = {}
        self._ticking = threading.Lock()
        self._failed = ""

    def _layers(self) -> dict[Path, Any]:
        """The layers read now besides the workspace itself (root -> Layer), of the
        Memory the served requests use (the service's `current`); under the service's
        lock (open_layers keeps their Memory objects on the workspace's)."""
        from memcli.services.layers import open_layers

        return {Path(layer.memory.root): layer for layer in open_layers(self.service.current())[1:]}

    def tick(self) -> None:
        """Observe the layers read now, stop observing those no longer read, and index a
        layer whose files moved past its index (a new layer, a missed event)."""
        with self._ticking:
            with self.service.lock:
                try:
                    layers = self._layers()
                except (MemcliError, OSError) as exc:  # a bad setting: said once
                    if str(exc) != self._failed:
                        self.log(f"warning: cannot decide the layers to watch: {exc}")
                    self._failed = str(exc)
                    return
                self._failed = ""
                gone = [self.observed.pop(r) for r in list(self.observed) if r not in layers]
                for root, layer in layers.items():
                    if root not in self.observed:
                        self.observed[root] = Observed(layer.name, root, blocked="")
                stale, start, stop = [], [], []
                for root, item in self.observed.items():
                    item.name = layers[root].name
                    with contextlib.suppress(MemcliError, OSError):
                        item.files = layers[root].memory.store.files
                    was, item.blocked = item.blocked, read_only(root)  # "": not decided yet
                    if item.blocked and was != item.blocked:
                        stop.append(item)
                    elif not item.blocked and item.watcher is None:
                        start.append(item)
                    if not item.blocked and time.monotonic() >= item.retry_at:
                        manager = layers[root].memory.index_manager
                        with contextlib.suppress(MemcliError, OSError):
                            if not manager.is_current(manager.read_manifest()):
                                stale.append(item)
            for item in gone:
                self._stop(item)
                self.log(f"no longer watching the {item.name} layer ({item.root})")
            for item in stop:
                self._stop(item)
                self.log(f"not indexing the {item.name} layer: {item.blocked}")
            for item in start:
                item.watcher = Watcher(
                    item.root,
                    lambda paths, root=item.root: self.on_batch(root, paths),
                    files=lambda item=item: item.files,
                )
                item.watcher.start()
                self.log(f"watching the {item.name} layer ({item.root})")
            for item in stale:
                names = [n for n in item.files.names if (item.root / n).is_file()]
                self.on_batch(item.root, names)

    @staticmethod
    def _stop(item: Observed) -> None:
        if item.watcher is not None:
            item.watcher.stop()
            item.watcher = None

    def on_batch(self, root: Path, paths: list[str]) -> bool:
        """Index what changed in the layer at `root` (`paths` relative to it) into the
        Memory the served searches read; False when the sync failed (tried again after
        RETRY_S)."""
        started = time.perf_counter()
        with self.service.lock:
            layer = self._layers().get(root)
            item = self.observed.get(root)
            if layer is None or item is None or item.blocked:
                return True  # no longer read, or not to be written
            manager = layer.memory.index_manager
            if manager.is_current(manager.read_manifest()):
                item.entries = manager.count()
                return True  # a search indexed it already, or a repeated event
            try:
                for name in paths:
                    if name.endswith(".md") and (root / name).is_file():
                        for problem in layer.memory.store.load(name).problems:
                            self.log(f"warning: {layer.name} layer: {problem} (the rest indexed)")
                report = manager.sync()
            except MemcliError as exc:
                self.log(f"error: {layer.name} layer ({root}): {exc}")
                item.retry_at = time.monotonic() + RETRY_S
                return False
            item.entries = manager.count()
        elapsed = (time.perf_counter() - started) * 1000
        item.batches += 1
        item.last_batch = {"paths": paths, "ms": round(elapsed, 1), **report.to_dict()}
        self.log(
            f"{time.strftime('%H:%M:%S')} {layer.name} layer: {', '.join(paths)}: "
            f"{report.summary(elapsed)}"
        )
        return True

    def status(self) -> dict[str, Any]:
        """`{"layers": {name: its status}}` while another layer is read, else nothing
        (a single workspace's status stays as it was)."""
        items = list(self.observed.values())
        if not items:
            return {}
        with self.service.lock, contextlib.suppress(MemcliError, OSError):
            layers = self._layers()
            for item in items:  # counted now: a layer a search indexed had no batch here
                layer = layers.get(item.root)
                if layer is not None and not item.blocked:
                    with contextlib.suppress(MemcliError, OSError):
                        item.entries = layer.memory.index_manager.count()
        return {"layers": {item.name: item.status() for item in items}}

    def stop(self) -> None:
        with self._ticking:
            for item in self.observed.values():
                self._stop(item)
            self.observed.clear()
