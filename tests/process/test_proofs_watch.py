"""The watcher alone keeps the index current (issue 19, item 8 (a)): a real `memcli
watch` process with its real watchdog observer, and no search at all. A search brings
a stale index up to date by itself, so a test that searches cannot tell a working
watcher from none: this one only reads the index on disk (ids and content keys) and the watcher's status, and checks at the end that nothing but status
requests reached the daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import indexed_keys, start_watch

pytestmark = pytest.mark.slow


def memcli(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(ws), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )


def status(ws: Path) -> dict | None:
    result = memcli(ws, "watch", "--status", "--json")
    return json.loads(result.stdout)["data"] if result.returncode == 0 else None


def manifest(ws: Path) -> dict:
    """What the index on disk holds (ids and their content keys)."""
    keys = indexed_keys(ws)
    return {"ids": list(keys), "hashes": list(keys.values())}


def hash_of(ws: Path, entry_id: str) -> str | None:
    data = manifest(ws)
    return dict(zip(data["ids"], data["hashes"], strict=True)).get(entry_id)


def wait_for(what: str, predicate, timeout: float = 30.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"the watcher did not index the change in {timeout:.0f} s: {what}")


@pytest.fixture
def watcher(workspace: Path):  # noqa: ANN201
    proc = start_watch(workspace, timeout=180)  # once it serves: no request asked
    yield proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_watcher_indexes_create_edit_delete_without_any_search(
    workspace: Path, watcher: subprocess.Popen
) -> None:
    ws = workspace
    memory = ws / "memory.md"
    before = status(ws)
    assert before is not None and before["batches"] == 0
    first = manifest(ws)
    assert "mbackup1" not in first["ids"]
    # create, appending in place
    with memory.open("a") as handle:
        handle.write("- Backups run nightly at 02:00 UTC <!-- id=mbackup1 -->\n")
    wait_for("a new entry", lambda: hash_of(ws, "mbackup1") is not None)
    created = hash_of(ws, "mbackup1")
    # edit in place: the same id, a new text, so a new hash
    memory.write_text(memory.read_text().replace("nightly at 02:00 UTC", "hourly on the replica"))
    wait_for("an edit in place", lambda: hash_of(ws, "mbackup1") not in (None, created))
    edited = hash_of(ws, "mbackup1")
    # edit like an editor: a temp file renamed over memory.md
    swap = ws / ".memory.md.swp"
    swap.write_text(memory.read_text().replace("hourly on the replica", "every six hours"))
    os.replace(swap, memory)
    wait_for("an editor's rename", lambda: hash_of(ws, "mbackup1") not in (None, created, edited))
    # delete
    memory.write_text(
        "".join(line for line in memory.read_text().splitlines(True) if "mbackup1" not in line)
    )
    wait_for("a deleted entry", lambda: "mbackup1" not in manifest(ws)["ids"])
    # an episodes file appears, then goes
    (ws / "episodes").mkdir()
    day = ws / "episodes" / "2026-11-22.md"
    day.write_text("- Met Dana about the quarterly roadmap <!-- id=e1 -->\n")
    wait_for("a new episodes file", lambda: "e1" in manifest(ws)["ids"])
    day.unlink()
    wait_for("a removed episodes file", lambda: "e1" not in manifest(ws)["ids"])
    after = status(ws)
    assert after is not None
    assert after["batches"] >= 6  # each change was a batch of the watcher's own
    assert after["requests"] == before["requests"] + 1  # only this status: no search ran
    assert sorted(manifest(ws)["ids"]) == sorted(first["ids"])
