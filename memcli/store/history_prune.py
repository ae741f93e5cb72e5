"""Pruning the history by age and size, whatever process writes (a CLI command, a hook,
the watcher): each append adds what it stored to a small counter
(`.memcli/history/prune.json`), and a prune runs once enough bytes or lines were added
since the last one, or a day has passed.

A prune runs under the history lock and keeps every object a kept record needs (its
version, the one it replaced, the bases of deltas). An object a writer stored but has
not logged yet may go; the writer checks under the same lock, right before it logs,
that its object is still whole and stores it again if not (History._append), so a
logged version always has its content.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any

from memcli.store.history_log import dump, read

History = Any  # memcli.store.history.History (which imports this module)

KEEP_PER_FILE = 20  # the newest versions of each file survive any pruning
MAX_RECORDS = 20_000  # log lines (≈ 4 MB): beyond these the oldest go, whatever their age
PRUNE_BYTES = 8_000_000  # object bytes stored since the last prune
PRUNE_LINES = 2_000  # log lines written since the last prune
PRUNE_SECONDS = 24 * 3600  # …or this long since it
TEMP_GRACE = 600.0  # seconds before a temp file of a killed write is cleaned up


def note_append(history: History, stored: int, lines: int = 1) -> bool:
    """Count one append (under the history lock); True when a prune is due."""
    path = history.dir / "prune.json"
    now = time.time()
    state = {"t": now, "bytes": 0, "lines": 0}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            state.update({k: float(loaded[k]) for k in ("t", "bytes", "lines") if k in loaded})
    state["bytes"] += stored
    state["lines"] += lines
    due = (
        state["bytes"] >= min(PRUNE_BYTES, history.keep_mb * 1e6 / 4)
        or state["lines"] >= PRUNE_LINES
        or now - state["t"] >= PRUNE_SECONDS
    )
    if due:
        state = {"t": now, "bytes": 0, "lines": 0}
    _write_small(path, json.dumps(state))
    return due


def prune_locked(history: History) -> None:
    """Drop versions older than keep_days, the oldest beyond MAX_RECORDS, then the
    oldest until the objects fit in keep_mb, keeping each file's newest KEEP_PER_FILE
    versions (the caller holds the history lock)."""
    records, _, _ = read(history.log_path)
    cutoff = (dt.datetime.now(dt.UTC) - dt.timedelta(days=history.keep_days)).strftime(
        "%Y-%m-%dT%H:%M:%S"
    )
    protected: set[int] = set()
    per_file: dict[str, int] = {}
    for index in range(len(records) - 1, -1, -1):
        file = str(records[index].get("file", ""))
        per_file[file] = per_file.get(file, 0) + 1
        if per_file[file] <= KEEP_PER_FILE:
            protected.add(index)
    kept = [(i, r) for i, r in enumerate(records) if i in protected or r.get("t", "") >= cutoff]
    excess = len(kept) - MAX_RECORDS  # a log every history command reads stays small
    if excess > 0:
        gone = set([i for i, _ in kept if i not in protected][:excess])
        kept = [(i, r) for i, r in kept if i not in gone]
    objects = history.objects
    sizes = {digest: size for digest, (size, _) in objects.sizes().items()}
    refs: dict[str, int] = {}
    for _, r in kept:
        refs[str(r.get("sha", ""))] = refs.get(str(r.get("sha", "")), 0) + 1
    total = sum(sizes.get(digest, 0) for digest in refs)
    dropped: set[int] = set()
    for i, r in kept:  # oldest first
        if total <= history.keep_mb * 1e6:
            break
        if i in protected:
            continue
        dropped.add(i)
        digest = str(r.get("sha", ""))
        refs[digest] -= 1
        if refs[digest] == 0:
            total -= sizes.get(digest, 0)
    keep = [r for i, r in kept if i not in dropped]
    if len(keep) != len(records):
        from memcli.store.atomic import atomic_write

        atomic_write(history.log_path, "".join(dump(r) for r in keep))
        history.heads.forget()
    wanted = {r.get("sha") for r in keep} | {r.get("prev") for r in keep}
    wanted |= {d.sha for d in history.detached()}
    wanted.discard(None)
    for digest in list(wanted):  # the bases deltas are built on
        base = objects.base_of(str(digest))
        while base is not None and base not in wanted:
            wanted.add(base)
            base = objects.base_of(base)
    for digest in sizes:
        if digest not in wanted:
            with contextlib.suppress(OSError):
                objects.path(digest).unlink()
    now = time.time()
    for tmp in objects.temp_files():
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > TEMP_GRACE:
                tmp.unlink()


def _write_small(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
