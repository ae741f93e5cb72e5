"""memcli as child processes: one command, the watch daemon, and probes of what a fresh
interpreter imports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
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


#: the line `memcli watch` logs once it serves: its socket answers and its file observer
#: runs (WatchService.start logs it after starting both)
SERVING = "serving search, inject and get on "


def start_watch(ws: Path, timeout: float = 120, stdin: int | None = None) -> subprocess.Popen[str]:
    """A `memcli watch` on ws (its stdin `stdin`, else this process's), returned once it
    logs that it serves (SERVING): its file observer runs by then, so a test may edit at
    once. What it logged up to then is kept as the process's `start_log` (its stdout goes
    on from there)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(ws), "watch"],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    serving = threading.Event()

    def read_until_serving() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:  # ends at EOF when the watcher exits
            lines.append(line)
            if SERVING in line:
                serving.set()
                return

    reader = threading.Thread(target=read_until_serving, daemon=True)
    reader.start()
    reader.join(timeout)
    proc.start_log = "".join(lines)  # type: ignore[attr-defined]
    if serving.is_set():
        return proc
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=30)
        raise AssertionError(f"watch did not start in {timeout:.0f} s: {proc.start_log}")  # type: ignore[attr-defined]
    raise AssertionError(f"watch exited with {proc.returncode}: {proc.start_log}")  # type: ignore[attr-defined]


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


#: memcli's entry point (memcli.surfaces.cli.fastpath.run, the console script's work) for
#: one command after another in this one process: a JSON line `[argv, stdin or null]` in,
#: a JSON line `[exit code, stdout, stderr]` out; a command's stdin is its text or empty
#: (as /dev/null, what a test's `memcli` process without input has: the test process's
#: own), its output captured as a pipe would take it
_ENTRY_POINT = """
import contextlib, io, json, sys, traceback
from memcli.surfaces.cli.fastpath import run

requests, answers = sys.stdin, sys.__stdout__
for line in requests:
    argv, data = json.loads(line)
    out, err = io.StringIO(), io.StringIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO((data or "").encode()), encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = run(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        except BaseException:  # noqa: BLE001 - as the interpreter: a traceback, exit 1
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    answers.write(json.dumps([code, out.getvalue(), err.getvalue()]) + "\\n")
    answers.flush()
"""


class EntryPoint:
    """One fresh process that runs `memcli` command after command through its entry point
    (fastpath.run, in-process: no daemon when `env` sets MEMCLI_NO_DAEMON), for a test
    that compares many commands' output with another path's: one interpreter start,
    import and model load for all of them (≈ 0.2-0.5 s of CPU each as processes of
    their own). Its first command runs as in a fresh `memcli` process; later ones find
    the modules imported and the model loaded. A context manager; `run` answers like
    `memcli()`."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ENTRY_POINT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=dict(env or os.environ),
        )

    def run(self, ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """`memcli -w WS ARGS...` in the process: its exit code, stdout and stderr."""
        argv = ["-w", str(ws), *args]
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([argv, stdin]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the entry point's process ended (exit {self.proc.wait(timeout=30)})"
        code, out, err = json.loads(line)
        return subprocess.CompletedProcess(["memcli", *argv], code, out, err)

    def __enter__(self) -> EntryPoint:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
