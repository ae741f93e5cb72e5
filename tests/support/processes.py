"""memcli as child processes: one command, the watch daemon, and probes of what a fresh
interpreter imports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path


def memcli(
    ws: Path, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m memcli -w WS ARGS...` (this process's environment unless `env`)."""
    return subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(ws), *args],
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
        env=dict(env or os.environ),
    )


def start_watch(ws: Path) -> subprocess.Popen[str]:
    """A `memcli watch` on ws, returned once `watch --status` answers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(ws), "watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        # polled in this process until it answers, then confirmed by the command: the
        # watcher answers a moment before its file observer runs (WatchService.start
        # starts the server first), and a test editing at once would go unseen
        if watch_status(ws) is not None:
            status = subprocess.run(
                [sys.executable, "-m", "memcli", "-w", str(ws), "watch", "--status", "--json"],
                capture_output=True,
                text=True,
            )
            if status.returncode == 0:
                return proc
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("watch did not start")


def watch_status(ws: Path) -> dict | None:
    """The status a running watcher of `ws` gives (the `data` of `watch --status --json`),
    asked from this process as that command asks it: polling costs no process start
    (≈ 0.4 s CPU each). None while none answers."""
    from memcli.surfaces.daemon.service import query_status

    return query_status(ws)


def stop_watch(proc: subprocess.Popen[str]) -> None:
    """SIGINT, as a person's Ctrl-C, if it still runs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def search_ids(ws: Path, query: str, env: Mapping[str, str] | None = None) -> list[str]:
    result = memcli(ws, "search", query, "--json", "--no-touch", env=env)
    assert result.returncode == 0, result.stderr
    return [h["id"] for h in json.loads(result.stdout)["data"]["hits"]]


def indexed_keys(ws: Path) -> dict[str, str]:
    """id -> content key of what the index of `ws` holds, read from disk through its
    backend as another process would ({} while there is no index)."""
    from memcli.index.backend import open_backend
    from memcli.store.config import IndexSettings

    return open_backend(IndexSettings(), ws / ".memcli" / "index").fingerprint().keys


def manifest_ids(ws: Path) -> list[str]:
    """Ids the index backend of `ws` holds."""
    return list(indexed_keys(ws))


def wait_for(predicate: Callable[[], object], timeout: float = 15.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def imported_modules(*args: str, cwd: Path | None = None) -> set[str]:
    """Top-level packages a fresh interpreter has imported after running `memcli ARGS`
    through the Typer app."""
    code = (
        "import sys, json\n"
        "from memcli.surfaces.cli.app import app\n"
        "try:\n"
        f"    app(args={list(args)!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n' + json.dumps(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def imports_of(code: str, *args: str, cwd: Path | None = None) -> tuple[set[str], str]:
    """Run `code` in a fresh interpreter: the top-level packages it imported, and what
    it printed."""
    script = (
        code
        + "\nimport sys, json\nprint('\\nMODULES=' + json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stderr
    marker = result.stdout.rindex("MODULES=")
    return set(json.loads(result.stdout[marker + 8 :])), result.stdout[:marker]


def listening(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> bool:
    """True once something accepts connections on 127.0.0.1:`port`; False when `proc`
    exits or `timeout` seconds pass first."""
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.1)
    return False
