"""The store's incremental reads (memcli.store.reparse through Store.parsed) against a
fresh store reading the same files: entries, problems and duplicate-id warnings."""

from __future__ import annotations

import os
import random
from pathlib import Path

from memcli.core.errors import ParseError
from memcli.store.store import Store


def _read(store: Store) -> tuple[list, list[str]]:
    warnings: list[str] = []

    def warn(problem: ParseError) -> None:
        warnings.append(problem.message)

    entries = store.entries(include_archived=True, warn=warn)
    return entries, warnings


def _write(path: Path, text: str, tick: int) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(tick, tick))  # a new stamp each time, as a real save would have


def test_incremental_store_reads_match_fresh_ones(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = ["# Memory", "", "## Facts"] + [f"- fact {i} <!-- id=m{i} -->" for i in range(300)]
    learnings = ["## Lessons", "- check the backups <!-- id=l1 -->", "- a lesson"]
    archive = ["- old <!-- id=m5 -->"]  # an archived copy of a live id: not a duplicate
    tick = 10**18
    _write(tmp_path / "memory.md", "\n".join(lines) + "\n", tick)
    _write(tmp_path / "learnings.md", "\n".join(learnings) + "\n", tick)
    _write(tmp_path / "archive.md", "\n".join(archive) + "\n", tick)
    warm = Store(tmp_path)
    _read(warm)
    choices = [
        "- a lesson",
        "- fact 7 <!-- id=m7 -->",  # a duplicate id
        "- fact 7 <!-- id=l1 -->",  # the id of an entry of another file
        "- broken <!-- imp=lots -->",
        "## Skills",
        "  continued",
        "",
        "- new fact",
    ]
    for step in range(60):
        tick += 1_000_000
        target = rng.choice([lines, lines, learnings])
        at = rng.randrange(len(target) + 1)
        kind = rng.choice(["insert", "replace", "delete"])
        if kind == "insert" or not target:
            target.insert(at, rng.choice(choices))
        elif kind == "replace":
            target[min(at, len(target) - 1)] = rng.choice(choices)
        else:
            del target[min(at, len(target) - 1)]
        name = "memory.md" if target is lines else "learnings.md"
        _write(tmp_path / name, "\n".join(target) + "\n", tick)
        got, got_warnings = _read(warm)
        want, want_warnings = _read(Store(tmp_path))
        assert got == want, step
        assert got_warnings == want_warnings, step
        assert warm.ids_distinct(include_archived=True) == (len({e.id for e in want}) == len(want))
