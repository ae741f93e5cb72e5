"""Agents served from the first prompt on (issue 36 item 2): the real hooks start a
watcher for their workspace (detached, once, logged), the hook does not wait for it, the
next prompt is served by it, `memcli uninstall` stops it; a watcher started with
`--idle-exit` leaves by itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.surfaces.daemon import autostart
from tests.support.processes import watch_status

pytestmark = pytest.mark.slow
MEMCLI = str(Path(sys.executable).parent / "memcli")


def agent_env(home: Path) -> dict[str, str]:
    """The test's environment with autostart on (the suite turns it off), HOME apart."""
    env = {k: v for k, v in os.environ.items() if k != "MEMCLI_WATCH_AUTOSTART"}
    return env | {"HOME": str(home)}


def hook(event: str, ws: Path, env: dict[str, str], prompt: str | None = None):  # noqa: ANN201
    payload = {"session_id": "s-autostart", "cwd": str(ws), "hook_event_name": event}
    if prompt is not None:
        payload["prompt"] = prompt
    return subprocess.run(
        [MEMCLI, "hook", event, "--timeout", "60"],  # a loaded machine: no cut-off
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ws,
    )


def wait_until(predicate, timeout: float) -> float:  # noqa: ANN001 - a callable
    """The time at which `predicate()` first held (AssertionError after `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(0.1)
    raise AssertionError("not reached in time")


def test_the_second_prompt_is_served_by_the_watcher_the_first_started(
    workspace: Path, tmp_path: Path, exported  # noqa: ANN001 - the session's ONNX export
) -> None:
    from memcli.services.memory import Memory

    Memory(workspace, notify=lambda m: None, embedder_factory=lambda: exported).index()
    env = agent_env(tmp_path / "home")
    first = hook("session-start", workspace, env)
    hook_done = time.monotonic()
    try:
        assert first.returncode == 0, first.stderr
        assert "additionalContext" in first.stdout  # answered in-process meanwhile
        ready = wait_until(lambda: watch_status(workspace) is not None, timeout=180)
        assert ready > hook_done  # the hook returned before the watcher was serving
        status = watch_status(workspace)
        assert status is not None
        log = (workspace / ".memcli" / "watch.log").read_text()
        assert "started for an agent" in log and f"watching {workspace}" in log
        assert str(workspace) in autostart.started(env)

        second = hook("user-prompt-submit", workspace, env, prompt="how do I run python tests")
        assert second.returncode == 0, second.stderr
        assert "pytest" in json.loads(second.stdout)["hookSpecificOutput"]["additionalContext"]
        after = watch_status(workspace)
        # served: the hook's request, and this status query (each counts)
        assert after is not None and after["requests"] == status["requests"] + 2
        assert after["pid"] == status["pid"]  # and no second watcher was started
        assert autostart.ensure(workspace, env) == "running"

        gone = subprocess.run(
            [MEMCLI, "uninstall", "claude-code", "--user", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=workspace,
        )
        assert gone.returncode == 0, gone.stderr
        stopped = json.loads(gone.stdout)["data"]["stopped"]
        assert stopped == [{"workspace": str(workspace), "pid": status["pid"]}]
        assert watch_status(workspace) is None
        assert autostart.started(env) == []
    finally:
        running = watch_status(workspace)
        if running is not None:
            os.kill(int(running["pid"]), signal.SIGTERM)


def test_a_watcher_with_idle_exit_leaves_by_itself(workspace: Path, exported) -> None:  # noqa: ANN001
    proc = subprocess.Popen(
        [MEMCLI, "-w", str(workspace), "watch", "--idle-exit", "0.05"],  # 3 s
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until(lambda: watch_status(workspace) is not None, timeout=180)
        assert proc.wait(timeout=60) == 0
        out = proc.stdout.read() if proc.stdout else ""
        assert "no request or change for" in out and "leaving" in out, out
        assert watch_status(workspace) is None
    finally:
        if proc.poll() is None:
            proc.kill()


def test_memcli_mcp_starts_a_watcher_that_serves_the_next_search(
    workspace: Path, tmp_path: Path, exported  # noqa: ANN001 - the session's ONNX export
) -> None:
    """A real MCP client over stdio starts `memcli mcp` in a workspace no watcher serves:
    a watcher comes up for that workspace (not waited for: the tool call is answered by
    the server itself), serves the next `memcli search`, and `watch --stop` stops it."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from memcli.services.memory import Memory

    Memory(workspace, notify=lambda m: None, embedder_factory=lambda: exported).index()
    env = agent_env(tmp_path / "home")
    assert watch_status(workspace) is None
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memcli", "-w", str(workspace), "mcp"],
        env={k: v for k, v in env.items() if k.startswith(("XDG_", "HF_", "PATH", "HOME"))},
    )

    async def session_run() -> dict:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            found = await session.call_tool("search_memories", {"query": "python tests"})
            assert not found.is_error, found
            wait_until(lambda: watch_status(workspace) is not None, timeout=180)
            return watch_status(workspace)

    try:
        status = anyio.run(session_run)
        assert status is not None
        log = (workspace / ".memcli" / "watch.log").read_text()
        assert "started for an agent" in log and f"watching {workspace}" in log
        assert str(workspace) in autostart.started(env)

        search = subprocess.run(
            [MEMCLI, "-w", str(workspace), "search", "python tests", "--no-touch"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert search.returncode == 0, search.stderr
        assert "m8f3a2c1" in search.stdout
        after = watch_status(workspace)
        # served: the search, and this status query (each counts)
        assert after is not None and after["requests"] == status["requests"] + 2
        assert after["pid"] == status["pid"]

        stop = subprocess.run(
            [MEMCLI, "-w", str(workspace), "watch", "--stop"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert stop.returncode == 0, stop.stderr
        wait_until(lambda: watch_status(workspace) is None, timeout=60)
    finally:
        running = watch_status(workspace)
        if running is not None:
            os.kill(int(running["pid"]), signal.SIGTERM)
