"""The writer lease of a shared index (memcli.index.lease): who may take it, checked
against real processes of this host (one running, one that has exited)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

import pytest

from memcli.index.lease import (
    LEASE_SECONDS,
    Holder,
    Lease,
    WriterConflict,
    free_to_take,
    gone,
    process_start,
    this_process,
)

LINUX = os.path.exists("/proc/self/stat")


@pytest.fixture(scope="module")
def exited() -> int:
    """The pid of a process that has run and exited (reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture(scope="module")
def running() -> Any:
    """A process that runs for the module's tests."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield child
    child.kill()
    child.wait()


def test_holder_names_round_trip() -> None:
    me = this_process()
    assert Holder.parse(str(me)) == me
    # memcli before process-checked leases wrote host:pid:nonce
    assert Holder.parse("vm:10910:bb233a31") == Holder("vm", 10910, "", "", "bb233a31")
    assert Holder.parse("host.example:10910:1:boot:ab") == Holder(
        "host.example", 10910, "1", "boot", "ab"
    )
    assert Holder.parse("not a holder") is None
    assert Holder.parse("vm:pid:x") is None


# (case, holder built from (me, the exited pid, the running process), beat age in
# seconds, may it be taken?)
CASES = [
    ("nobody holds it", lambda me, dead, live: "", 0.0, True),
    ("this very holder", lambda me, dead, live: str(me), 0.0, True),
    (
        "a process of this host that exited",
        lambda me, dead, live: str(replace(me, pid=dead, nonce="x")),
        0.0,
        True,
    ),
    ("an exited process, old name", lambda me, dead, live: f"{me.host}:{dead}:abcd1234", 0.0, True),
    ("a running process of this host", lambda me, dead, live: str(live), 0.0, False),
    (
        "a running process silent past the lease",
        lambda me, dead, live: str(live),
        LEASE_SECONDS + 1,
        True,
    ),
    (
        "another lease of this same process",
        lambda me, dead, live: str(replace(me, nonce="other")),
        0.0,
        False,
    ),
    (
        "another host, seen just now",
        lambda me, dead, live: str(replace(me, host="elsewhere", pid=dead)),
        1.0,
        False,
    ),
    (
        "another host, just inside the lease",
        lambda me, dead, live: str(replace(me, host="elsewhere")),
        LEASE_SECONDS - 1,
        False,
    ),
    (
        "another host, silent for the lease",
        lambda me, dead, live: str(replace(me, host="elsewhere")),
        LEASE_SECONDS,
        True,
    ),
    ("an unreadable holder, seen just now", lambda me, dead, live: "garbage", 1.0, False),
]


@pytest.mark.parametrize(("case", "holder", "age", "free"), CASES, ids=[c[0] for c in CASES])
def test_who_may_take_the_lease(
    case: str, holder: Any, age: float, free: bool, exited: int, running: Any
) -> None:
    me = this_process()
    live = replace(me, pid=running.pid, start=process_start(running.pid), nonce="live")
    now = time.time()
    beat = int((now - age) * 1000)
    assert free_to_take(holder(me, exited, live), beat, me, now)[0] is free


@pytest.mark.skipif(not LINUX, reason="process start times and boot ids come from /proc")
def test_a_pid_that_came_back_or_a_reboot_is_a_dead_holder(running: Any) -> None:
    me = this_process()
    live = replace(me, pid=running.pid, start=process_start(running.pid), nonce="live")
    assert not gone(live, me)
    assert gone(replace(live, start=str(int(live.start) - 1)), me)  # the pid was reused
    assert gone(replace(live, boot="an-earlier-boot"), me)  # the host rebooted since
    assert not gone(replace(live, host="elsewhere", boot="other"), me)  # cannot tell


class Record:
    """A lease record in memory, as the workspaces collection keeps it."""

    def __init__(self, holder: str = "", beat: int = 0) -> None:
        self.row: dict[str, Any] = {"holder": holder, "beat": beat}
        self.writes = 0
        self.steal_after_write: str | None = None  # another process writes just after us

    def read(self) -> dict[str, Any]:
        return dict(self.row)

    def write(self, **changes: Any) -> None:
        self.writes += 1
        self.row.update(changes)
        if self.steal_after_write:
            self.row["holder"] = self.steal_after_write


def conflict(holder: str, age: float) -> WriterConflict:
    return WriterConflict(f"written by {holder} ({age:.0f} s)")


def test_take_renew_and_release() -> None:
    record = Record()
    lease = Lease(record.read, record.write, conflict)
    lease.take()
    assert record.row["holder"] == str(lease.me) and lease.held
    writes = record.writes
    lease.take()  # renewed only every RENEW_SECONDS: no write now
    assert record.writes == writes
    lease.release()
    assert record.row == {"holder": "", "beat": 0} and not lease.held
    lease.release()  # not held: nothing written
    assert record.writes == writes + 1


def test_a_live_holder_refuses_then_a_waiting_writer_gets_it_when_released(running: Any) -> None:
    live = replace(this_process(), pid=running.pid, start=process_start(running.pid))
    record = Record(str(live), int(time.time() * 1000))
    lease = Lease(record.read, record.write, conflict)
    with pytest.raises(WriterConflict, match=str(running.pid)):
        lease.take()
    assert record.row["holder"] == str(live) and not lease.held

    reads = 0

    def read_then_free() -> dict[str, Any]:
        nonlocal reads
        reads += 1
        if reads == 3:  # the other writer finishes while we wait
            record.row.update(holder="", beat=0)
        return record.read()

    waiting = Lease(read_then_free, record.write, conflict)
    waiting.take(wait=30)
    assert record.row["holder"] == str(waiting.me)


def test_two_taking_at_once_one_loses() -> None:
    record = Record()
    record.steal_after_write = "elsewhere:1:1:b:n"
    lease = Lease(record.read, record.write, conflict)
    with pytest.raises(WriterConflict, match="elsewhere"):
        lease.take()
    assert not lease.held
    record.steal_after_write = None
    lease.release()  # it does not hold it: the other's lease stays
    assert record.row["holder"] == "elsewhere:1:1:b:n"
