"""The writer lease of a shared index: one writer per workspace, held while it writes.

An index that other processes (other clones, other machines) write too (Milvus) keeps a
record per workspace naming the process that writes it and when it was last seen
(`holder`, `beat`). A process takes the lease when it first writes in a sync and gives
it back when the sync ends (memcli.services.indexing: normally, on an error, on SIGINT,
on SIGTERM), so a command that only reads never needs it, and commands in a row never
wait for one another.

A holder is named `host:pid:start:boot:nonce`: the process's start time (clock ticks
since boot) and the machine's boot id tell a live process from a dead one whose pid came
back. A holder on this host that is no longer running is taken over at once; a holder on
another host only once it has not been seen for LEASE_SECONDS. Without /proc (macOS)
start time and boot id are empty and a pid that runs counts as alive.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memcli.core.errors import ConflictError

LEASE_SECONDS = 60.0  # a writer on another host not seen for this long has gone
RENEW_SECONDS = LEASE_SECONDS / 3  # a writer re-stamps its beat this often while writing
POLL_SECONDS = 0.2  # how often a waiting writer looks again


class WriterConflict(ConflictError):
    """Another live process writes this workspace's index (one writer per workspace):
    `holder` names it, `age` is how long ago it was last seen, `where` the index."""

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        holder: str = "",
        age: float = 0.0,
        where: str = "",
    ) -> None:
        super().__init__(message, hint=hint)
        self.holder, self.age, self.where = holder, age, where


@dataclass(frozen=True)
class Holder:
    """Who holds a lease: a process on a host (see the module docstring)."""

    host: str
    pid: int
    start: str = ""  # the process's start time in clock ticks since boot ("" unknown)
    boot: str = ""  # the host's boot id ("" unknown)
    nonce: str = ""  # tells apart two leases of one process

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}:{self.boot}:{self.nonce}"

    @classmethod
    def parse(cls, text: str) -> Holder | None:
        """A holder from its name; older names `host:pid:nonce` too; None if unreadable."""
        parts = text.rsplit(":", 4)
        if len(parts) == 3:  # memcli before process-checked leases
            parts = [parts[0], parts[1], "", "", parts[2]]
        if len(parts) != 5 or not parts[1].isdigit():
            return None
        host, pid, start, boot, nonce = parts
        return cls(host, int(pid), start, boot, nonce)


def this_process() -> Holder:
    """A fresh holder name for this process."""
    pid = os.getpid()
    return Holder(socket.gethostname(), pid, process_start(pid), boot_id(), uuid.uuid4().hex[:8])


def process_start(pid: int) -> str:
    """When process `pid` started (clock ticks since boot, /proc), "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return ""
    # the command name (field 2) may hold spaces and parentheses: split after its end
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else ""


def boot_id() -> str:
    """This boot of the machine ("" without /proc)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def gone(holder: Holder, here: Holder) -> bool:
    """The holder is a process of this host (`here`) that is no longer running: the
    host rebooted since, its pid is free, or the pid now belongs to a later process.
    Always False for another host's process (it cannot be checked from here)."""
    if holder.host != here.host:
        return False
    if holder.boot and here.boot and holder.boot != here.boot:
        return True
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's live process
    except OSError:
        return False
    start = process_start(holder.pid)
    return bool(holder.start and start and start != holder.start)


def free_to_take(holder_name: str, beat_ms: int, me: Holder, now: float) -> tuple[bool, float]:
    """(may `me` take the lease recorded as (holder, beat)?, seconds since that beat).
    Free when nobody holds it, `me` holds it, its holder is a dead process of this host,
    or it was not renewed for LEASE_SECONDS."""
    age = max(0.0, now - beat_ms / 1000)
    if not holder_name or holder_name == str(me):
        return True, age
    holder = Holder.parse(holder_name)
    if holder is not None and gone(holder, me):
        return True, age
    return age >= LEASE_SECONDS, age


class Lease:
    """A workspace's writer lease, kept in a record that `read()` returns as
    {"holder", "beat"} and `write(holder=, beat=)` replaces."""

    def __init__(
        self,
        read: Callable[[], dict[str, Any]],
        write: Callable[..., None],
        conflict: Callable[[str, float], WriterConflict],
    ) -> None:
        self._read = read
        self._write = write
        self._conflict = conflict
        self.me = this_process()
        self._renew_at = 0.0  # monotonic time after which the beat is stamped again
        self.held = False

    def take(self, wait: float = 0.0) -> None:
        """Hold (or renew) the lease, waiting up to `wait` seconds while a live process
        holds it; WriterConflict after that."""
        now = time.monotonic()
        if self.held and now < self._renew_at:
            return
        deadline = now + max(0.0, wait)
        while True:
            record = self._read()
            holder = str(record.get("holder") or "")
            free, age = free_to_take(holder, int(record.get("beat") or 0), self.me, time.time())
            if free:
                self._write(holder=str(self.me), beat=int(time.time() * 1000))
                holder = str(self._read().get("holder") or "")
                if holder == str(self.me):
                    self.held = True
                    self._renew_at = time.monotonic() + RENEW_SECONDS
                    return
                age = 0.0  # another took it at the same moment
            self.held = False
            if time.monotonic() >= deadline:
                raise self._conflict(holder or "another process", age)
            time.sleep(POLL_SECONDS)

    def release(self) -> None:
        """Give the lease back if this process holds it."""
        if not self.held:
            return
        self.held = False
        self._renew_at = 0.0
        if str(self._read().get("holder") or "") == str(self.me):
            self._write(holder="", beat=0)


@runtime_checkable
class LeasedWrites(Protocol):
    """A backend other processes write too: its writes happen inside `writing()`, which
    gives the lease back when they end, and a sync never deletes an entry this clone's
    files never held (`shared`)."""

    shared: bool

    def writing(self, wait: float = 0.0) -> contextlib.AbstractContextManager[None]: ...


@contextlib.contextmanager
def released_on_sigterm() -> Iterator[None]:
    """While the block runs, SIGTERM ends the process through SystemExit (so `finally`
    clauses give a lease back) unless the process handles SIGTERM itself."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, AttributeError):
        previous = None
    if previous is not signal.SIG_DFL:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
