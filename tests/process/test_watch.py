"""The watcher and the fast paths as processes: what a cold search and the quick path
import in a fresh interpreter, a daemon killed with SIGKILL, a background watcher that
refuses a second one and stops."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from memcli.services.memory import Memory
from memcli.surfaces.protocol import socket_path
from tests.support.processes import imports_of, memcli, start_watch

pytestmark = pytest.mark.slow
HEAVY = {"torch", "sentence_transformers", "transformers"}


# ------------------------------------------------------------------ ONNX


def test_cold_search_imports_no_torch(workspace: Path, exported) -> None:
    Memory(workspace, notify=lambda m: None).index()
    code = (
        "import sys\nfrom memcli.surfaces.cli.app import app\n"
        "try:\n    app(args=['-w', sys.argv[1], 'search', 'python tests', '-n', '1'], "
        "standalone_mode=False)\nexcept SystemExit:\n    pass"
    )
    modules, out = imports_of(code, str(workspace))
    assert "m8f3a2c1" in out
    assert not modules & HEAVY, modules & HEAVY
    assert "onnxruntime" not in modules  # the query embedded by numpy alone
    assert "faiss" not in modules  # below ann_threshold the index is a NumPy matrix


def test_quick_search_imports_neither_typer_nor_torch(workspace: Path, exported) -> None:
    """The entry point's no-daemon search skips Typer (and pydantic) altogether."""
    Memory(workspace, notify=lambda m: None).index()
    code = (
        "import sys\nfrom memcli.surfaces.cli import quick\n"
        "code = quick.run(['-w', sys.argv[1], 'search', 'python tests', '-n', '1'])\n"
        "assert code == 0, code"
    )
    modules, out = imports_of(code, str(workspace))
    assert "m8f3a2c1" in out
    assert not modules & (HEAVY | {"typer", "pydantic", "faiss"}), modules & (
        HEAVY | {"typer", "pydantic", "faiss"}
    )


# ------------------------------------------------------------------ watcher + daemon


def test_killed_daemon_leaves_a_working_fallback(watched) -> None:
    ws, proc = watched
    proc.kill()
    proc.wait(timeout=10)
    assert socket_path(ws).exists()  # a stale socket is left behind
    result = memcli(ws, "search", "pytest fixtures", "--json", "--no-touch")
    assert result.returncode == 0 and json.loads(result.stdout)["data"]["hits"][0]["id"] == "m8f3a2c1"
    again = start_watch(ws)  # a new watcher replaces the stale socket
    try:
        assert json.loads(memcli(ws, "watch", "--status", "--json").stdout)["data"]["pid"] == again.pid
    finally:
        again.send_signal(signal.SIGINT)
        assert again.wait(timeout=30) == 0


@pytest.mark.slow
def test_background_watcher_starts_refuses_a_second_and_stops(workspace: Path, exported) -> None:
    started = memcli(workspace, "watch", "--background", "--json")
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["data"]["pid"]
    try:
        assert json.loads(memcli(workspace, "watch", "--status", "--json").stdout)["data"]["pid"] == pid
        derived = {p: p.stat().st_mtime_ns for p in (workspace / ".memcli").rglob("*")}
        second = memcli(workspace, "watch")  # says so at once, before indexing anything
        assert second.returncode == 1 and "already serves" in second.stderr
        assert "memcli watch --stop" in second.stderr  # what to do about it
        index = workspace / ".memcli" / "index"
        assert any(index in p.parents for p in derived)  # the first one built it
        assert {p: t for p, t in derived.items() if index in p.parents} == {
            p: p.stat().st_mtime_ns for p in index.rglob("*")
        }  # the second watcher wrote no index
        again = memcli(workspace, "watch", "--background", "--json")  # idempotent: it runs
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["data"]["already"] is True
        assert json.loads(again.stdout)["data"]["pid"] == pid
    finally:
        stopped = memcli(workspace, "watch", "--stop", "--json")
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["data"]["stopped"] == pid
    assert memcli(workspace, "watch", "--status").returncode == 1
    assert "stopped; the index is consistent" in (workspace / ".memcli" / "watch.log").read_text()
    assert memcli(workspace, "watch", "--stop").stdout.strip() == "none was running"
