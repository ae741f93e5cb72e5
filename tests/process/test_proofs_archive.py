"""Archive first, then remove (issue 19, item 8 (c)): a process killed between the file
writes of forget, or of an applied compress/merge plan, leaves every entry it was moving
in its file, in archive.md or in both, never in neither.

Deterministic: the process dies (os._exit, no cleanup runs) right before its k-th file
write, for each k after the first, instead of a SIGKILL that lands somewhere random."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.services.memory import Memory

CRASHED = 77

SCRIPT = r"""
import os, sys
from memcli.core.models import Entry
from memcli.services.memory import Memory
from memcli.store.changes import Plan, Removal, Write
from memcli.store.store import Store

workspace, operation, crash_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
real_update, writes = Store.update, []

def update(self, name, change):
    writes.append(name)
    if len(writes) == crash_at:
        os._exit(77)  # killed here: the writes before this one are on disk, no more
    return real_update(self, name, change)

Store.update = update
memory = Memory(workspace, notify=lambda message: None)
if operation == "forget":
    memory.forget("m1b2c3d4", by="person")
else:  # a merge, as compress plans one: sources in two files, the result in one
    live = {e.id: e for e in memory.entries()}
    merged = Entry("mmerged01", "Docker everywhere: compose locally, slim final stages",
                   "fact", "memory.md", 0, {"id": "mmerged01", "imp": "0.7"})
    memory.apply(Plan(
        writes=[Write(merged)],
        removals=[Removal(live["m6c1d8e2"], "merged", "mmerged01"),
                  Removal(live["l4a9e6c2"], "merged", "mmerged01")],
    ))
print(" ".join(writes))
"""


def run(workspace: Path, operation: str, crash_at: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(workspace), operation, str(crash_at)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )


def places(workspace: Path) -> dict[str, set[str]]:
    """id -> the files holding it (every file must still parse cleanly)."""
    found: dict[str, set[str]] = {}
    mem = Memory(workspace, notify=lambda m: None)
    for name in ("memory.md", "learnings.md", "archive.md"):
        if (workspace / name).exists():
            doc = mem.store.load(name)
            assert not doc.problems, (name, doc.problems)
            for entry in doc.entries():
                found.setdefault(entry.id, set()).add(name)
    return found


@pytest.mark.parametrize("crash_at", [2])
def test_forget_crash_between_writes_keeps_the_entry(workspace: Path, crash_at: int) -> None:
    result = run(workspace, "forget", crash_at)
    assert result.returncode == CRASHED, result.stderr  # it did die before that write
    assert places(workspace).get("m1b2c3d4"), "forgotten entry in neither file"


@pytest.mark.parametrize("crash_at", [2, 3])
def test_applied_plan_crash_between_writes_keeps_every_entry(
    workspace: Path, crash_at: int
) -> None:
    result = run(workspace, "merge", crash_at)
    assert result.returncode == CRASHED, result.stderr
    found = places(workspace)
    for source in ("m6c1d8e2", "l4a9e6c2"):
        assert found.get(source), f"{source} in neither its file nor archive.md"


@pytest.mark.slow
def test_uninterrupted_runs_end_with_entries_archived_only(workspace: Path) -> None:
    """The same scripts run to the end: the entries moved to archive.md for good (so the
    crash tests above crash operations that really move them)."""
    assert run(workspace, "forget", 0).returncode == 0
    assert run(workspace, "merge", 0).returncode == 0
    found = places(workspace)
    for moved in ("m1b2c3d4", "m6c1d8e2", "l4a9e6c2"):
        assert found[moved] == {"archive.md"}, (moved, found[moved])
    assert found["mmerged01"] == {"memory.md"}
