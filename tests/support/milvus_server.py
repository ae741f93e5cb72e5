"""A Milvus server process for tests: `python -m milvus_lite server` (milvus-lite ≥ 3) on
127.0.0.1 and a free port. It speaks Milvus's gRPC protocol, so memcli reaches it by the
same client path as a Milvus standalone (`uri = "http://127.0.0.1:PORT"`)."""

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
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
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
