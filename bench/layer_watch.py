"""The first search after a hand edit in the person's own layer, with a project's watcher
running: the watcher indexed the edit itself (it observes every layer it reads) or, as
before, the search finds the layer's index behind and syncs it first.

    python bench/layer_watch.py [--entries 2000] [--edits 15] [--served]

Two generated workspaces, a project and the per-user one (in a temporary XDG data
home), indexed with the bundled model; one WatchService on the project in this process
(real watchdog observers, the ONNX query path). Each round appends an entry to the user
layer's memory.md, waits 1.5 s, then times a search of its words (through
memcli.services.layers under the service's lock, as a served search runs) and a second
search of other words. "layers not watched" replaces the watcher's layer tick with
nothing (the code before it observed the layers). `--served`: the searches are
`memcli search` processes the service answers (wall time of the process, and the
service's time answering it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support.generate import generate  # noqa: E402


def rounds(
    tmp: str, entries: int, edits: int, watched: bool, served: bool
) -> tuple[list[Any], list[Any]]:
    """(first search after each edit, the search after it) in ms; served: each a
    (process wall, service) pair summed into one figure per column (see main)."""
    from memcli.services import layers
    from memcli.services.memory import Memory
    from memcli.surfaces.daemon.service import WatchService

    user, project = Path(tmp) / "data" / "memcli", Path(tmp) / "project"
    for seed, root in enumerate((user, project)):
        generate(root, entries, seed=seed)
        Memory(root, notify=lambda m: None).index()
    service = WatchService(project, log=lambda message: None)
    service.server.detach_stdin = False
    if not watched:
        service.layers.tick = lambda: None
    answering: list[float] = []
    handler = service.server.handler

    def timed(request: dict) -> dict:
        start = time.perf_counter()
        try:
            return handler(request)
        finally:
            answering.append((time.perf_counter() - start) * 1000)

    service.server.handler = timed
    service.start()

    def search(query: str) -> Any:
        if served:
            answering.clear()
            start = time.perf_counter()
            cli = [sys.executable, "-m", "memcli", "-w", str(project), "search", query]
            subprocess.run([*cli, "--no-touch"], capture_output=True, check=True)
            return (time.perf_counter() - start) * 1000, sum(answering)
        with service.lock:
            start = time.perf_counter()
            layers.search(layers.open_layers(service.current()), query, touch=False)
            return (time.perf_counter() - start) * 1000

    search("warm up")
    first, then = [], []
    try:
        for i in range(edits):
            with (user / "memory.md").open("a", encoding="utf-8") as out:
                out.write(f"- Keeps quartz zebracorns number {i} in a drawer\n")
            time.sleep(1.5)
            first.append(search(f"zebracorns number {i}"))
            then.append(search(f"drawer of quartz {i}"))
    finally:
        service.stop()
    return first, then


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=15)
    parser.add_argument("--served", action="store_true")
    args = parser.parse_args()
    for watched in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["XDG_DATA_HOME"] = f"{tmp}/data"
            first, then = rounds(tmp, args.entries, args.edits, watched, args.served)
        label = "layers watched" if watched else "layers not watched"
        if args.served:
            print(
                f"{label:>18}: first search after an edit: wall {_median(first, 0)}, "
                f"answering {_median(first, 1)}; the next: wall {_median(then, 0)}, "
                f"answering {_median(then, 1)}"
            )
            continue
        print(
            f"{label:>18}: first search after an edit median {statistics.median(first):.1f} ms "
            f"(min {min(first):.1f}), the next {statistics.median(then):.1f} ms"
        )


def _median(pairs: list[Any], side: int) -> str:
    return f"{statistics.median(p[side] for p in pairs):.1f} ms"


if __name__ == "__main__":
    main()
