"""Issue 14, local surfaces with client processes and a real watcher: the workspace the
client resolved, the client's settings, and a daemon that never reads its own stdin.
In-process servers: tests/integration/test_local_security.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.surfaces import protocol as daemon_protocol
from memcli.surfaces.daemon.server import DaemonServer, RequestHandler
from tests.support.env import make_workspace


def served(root: Path) -> DaemonServer:
    """A daemon for `root` answering with the real library, in this process."""
    server = DaemonServer(
        root, RequestHandler(root, lambda: {"pid": os.getpid()}), detach_stdin=False
    )
    server.start()
    return server


def client(args: list[str], cwd: Path, env: dict[str, str], stdin: str = ""):
    return subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_daemon_serves_the_workspace_the_client_resolved(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "served", "mserved1", "Served workspace fact")
    other = make_workspace(tmp_path / "other", "mother1", "Other workspace fact")
    server = served(ws)
    try:
        env = dict(os.environ, MEMCLI_WORKSPACE=str(ws))
        env.pop("MEMCLI_NO_DAEMON", None)
        # MEMCLI_WORKSPACE names the served workspace; the directory holds another one
        found = client(["get", "mserved1", "--json"], cwd=other, env=env)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["data"]["entry"]["text"] == "Served workspace fact"
        missing = client(["get", "mother1"], cwd=other, env=env)
        assert missing.returncode == 1
        assert server.requests == 2  # both answered by the daemon, from `served`
        # a request that names another workspace is refused
        handler = server.handler
        request = {
            "request": {"kind": "GetRequest", "entry_id": "mother1"},
            "workspace": str(other),
            "env": daemon_protocol.settings_env(os.environ),
        }
        assert "another workspace" in handler(request)["refused"]
        request.update(workspace=f"{ws}/../other")
        assert "another workspace" in handler(request)["refused"]
        request.update(workspace=str(ws))
        missing = handler(request)  # served: not in this workspace (exit code 1)
        assert missing["exit"] == 1 and "mother1" in missing["error"]
    finally:
        server.stop()


def test_daemon_refuses_a_client_with_other_settings(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", "m1", "A fact about settings")
    server = served(ws)
    try:
        request = {
            "request": {"kind": "GetRequest", "entry_id": "m1"},
            "workspace": str(ws),
            "env": daemon_protocol.settings_env(os.environ),
        }
        assert server.handler(request)["entry"]["text"] == "A fact about settings"
        request["env"] = {**request["env"], "MEMCLI_SEARCH_LIMIT": "3"}
        assert "settings" in server.handler(request)["refused"]
        # the client then runs in-process, with its own settings
        env = dict(os.environ, MEMCLI_SEARCH_LIMIT="3")
        env.pop("MEMCLI_NO_DAEMON", None)
        result = client(["-w", str(ws), "get", "m1"], cwd=tmp_path, env=env)
        assert result.returncode == 0 and "A fact about settings" in result.stdout
    finally:
        server.stop()


# ------------------------------------------------------------------ the daemon's stdin


def test_served_stdin_is_refused_as_in_process(tmp_path: Path) -> None:
    """The attack suite's last two harms (bench/README, 38/40): a served `inject -`
    took a NUL or invalid UTF-8 on stdin and exited 0, where the in-process run refuses
    it. The client reads stdin as bytes and, for what the in-process run would refuse,
    runs in-process: the same refusal, and the daemon never sees the text."""
    ws = make_workspace(tmp_path / "ws", "m1", "Writes Python tests with pytest")
    server = served(ws)
    env = dict(os.environ)
    env.pop("MEMCLI_NO_DAEMON", None)

    def run(args: list[str], data: bytes = b"", **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memcli", "-w", str(ws), *args],
                              env={**env, **extra}, input=data, capture_output=True,
                              timeout=60)

    try:
        assert run(["get", "m1"]).returncode == 0
        assert server.requests == 1  # this daemon answers these clients
        for args, data, says in [
            (["inject", "-"], b"context \x00 here", "stdin:1: holds a NUL byte"),
            (["inject", "-"], b"ok\n\xc3(", "stdin:2: not valid UTF-8"),
            (["search", "-"], b"find \x00 this", "stdin:1: holds a NUL byte"),
        ]:
            bad = run(args, data)
            assert bad.returncode == 1 and says in bad.stderr.decode(), (args, bad.stderr)
            assert b"Traceback" not in bad.stderr and bad.stdout == b""
            assert server.requests == 1  # refused before anything was sent
            if args == ["inject", "-"]:  # the in-process run says the same
                alone = run(args, data, MEMCLI_NO_DAEMON="1")
                assert (alone.returncode, alone.stderr) == (bad.returncode, bad.stderr)
    finally:
        server.stop()


@pytest.mark.slow
def test_inject_messages_from_stdin_through_a_real_watcher(workspace: Path) -> None:
    """The reviewer's case: `inject --messages /dev/stdin` while `memcli watch` runs
    made the daemon read its own stdin (a terminal or pipe) under its lock, and every
    later client hung. Now the client handles it in-process (the transcript rules of the
    in-process CLI apply) and the daemon stays free."""
    from tests.support.processes import memcli, start_watch, watch_status

    # its stdin a pipe nobody writes to: reading it would block forever
    watcher = start_watch(workspace, stdin=subprocess.PIPE)
    try:
        transcript = json.dumps([{"role": "user", "content": "How do I write Python tests?"}])

        def requests() -> int:
            """The daemon's request count, asked as `watch --status` asks it (a request)."""
            status = watch_status(workspace)
            assert status is not None, "the watcher stopped answering"
            return status["requests"]

        first, second = requests(), requests()  # what a status call alone adds
        result = memcli(workspace, "inject", "--messages", "/dev/stdin", stdin=transcript)
        assert result.returncode in (0, 1) and "Traceback" not in result.stderr
        assert requests() - second == second - first  # the inject never went to the daemon
        before = requests()
        got = memcli(workspace, "get", "m8f3a2c1", "--json")
        assert got.returncode == 0
        after = requests()
        assert after >= before + 2  # `get` (and the status call) were served by the daemon
        # a regular transcript file is still served by the daemon
        path = workspace.parent / "conversation.json"
        path.write_text(transcript)
        via_file = memcli(workspace, "inject", "--messages", str(path))
        assert via_file.returncode == 0 and "pytest" in via_file.stdout
        final = requests()
        assert final >= after + 2
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
