"""A Milvus server process for tests: `python -m milvus_lite server` (milvus-lite ≥ 3) on
127.0.0.1 and a free port. It speaks Milvus's gRPC protocol, so memcli reaches it by the
same client path as a Milvus standalone (`uri = "http://127.0.0.1:PORT"`). And what the
Milvus process tests share: a process holding a workspace's writer lease, a hand edit."""

from __future__ import annotations

import importlib.util
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def available() -> bool:
    """pymilvus and a milvus-lite with a server are installed (the `milvus` extra)."""
    if importlib.util.find_spec("pymilvus") is None:
        return False
    return importlib.util.find_spec("milvus_lite.adapter.grpc.server") is not None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class MilvusServer:
    """One server process over `data_dir`; start() again after stop() serves the same
    data on the same port."""

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        self.data_dir = data_dir
        self.port = port or free_port()
        self.log = data_dir.parent / f"{data_dir.name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> MilvusServer:
        """Start the server and return once it accepts connections."""
        command = [sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(self.data_dir)]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--max-workers", "16"]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                default_signals(command), stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"milvus-lite server exited: {self.log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"milvus-lite server did not listen on {self.port} in {timeout} s")

    def stop(self) -> None:
        """Stop it as Ctrl-C does (it closes its data), killed if it does not."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


#: a process that holds the workspace's writer lease as a sync does, says so, and waits
HOLDER = """
import sys, time
from memcli.services.memory import Memory
backend = Memory(sys.argv[1]).index_manager.backend
with backend.writing():
    backend.lease.take()
    print("held", flush=True)
    time.sleep(120)
"""


def hold_lease(ws: Path) -> subprocess.Popen[str]:
    """A process holding the writer lease of `ws`, returned once it holds it."""
    proc = subprocess.Popen(
        default_signals([sys.executable, "-c", HOLDER, str(ws)]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "held", proc.stderr.read() if proc.stderr else ""
    return proc


def append(ws: Path, line: str) -> None:
    """A hand edit: a line added at the end of memory.md."""
    with (ws / "memory.md").open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


#: sets SIGINT and SIGTERM to their default action, then becomes the command it is given
_RESET = """
import os, signal, sys
for number in (signal.SIGINT, signal.SIGTERM):
    signal.signal(number, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])
"""


def default_signals(command: list[str]) -> list[str]:
    """`command` run with SIGINT and SIGTERM at their default action, as in a terminal. A
    suite started in the background by a shell without job control (`(bash
    scripts/test.sh &)`) ignores SIGINT, and its children would inherit that: the server
    would not stop on Ctrl-C, nor a lease holder on SIGINT. The reset happens in a small
    interpreter that then execs the command, not in a preexec_fn: that would run Python
    in a fork of a test process whose gRPC threads are busy, and gRPC's fork handling then
    broke the child ("epoll_wait error: Bad file descriptor", no "held")."""
    return [sys.executable, "-c", _RESET, *command]
