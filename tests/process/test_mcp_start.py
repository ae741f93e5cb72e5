"""`memcli mcp` answers at once (issue 37, item 4): `initialize` and `tools/list` well
under a second with both cores busy (two busy loops beside it), the server built and
the model readied behind them; a tool call then gets the real server's answer, and a
call that had to wait for the model says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcli.surfaces.mcp_server import NOTICE_AFTER, build_server

#: seconds for `initialize` and `tools/list`, with both cores busy (0603281: 9-10 s)
AT_ONCE = 1.0
BUSY = "while True: pass"


class Host:
    """The host's end of a `memcli mcp` process: a line out, a line back."""

    def __init__(self, ws: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(ws), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def ask(self, ident: int, method: str, params: dict | None = None) -> dict:
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        answer = json.loads(self.proc.stdout.readline())
        assert answer["id"] == ident, answer
        return answer

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=120)


@pytest.mark.slow
def test_initialize_and_tools_list_at_once_with_both_cores_busy(workspace: Path, exported) -> None:
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(os.cpu_count() or 2)]
    try:
        time.sleep(0.5)  # the loops have the cores
        started = time.monotonic()
        host = Host(workspace)
        init = host.ask(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        initialized = time.monotonic() - started
        host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = host.ask(2, "tools/list")
        listed = time.monotonic() - started
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
    try:
        assert init["result"]["serverInfo"]["name"] == "memcli"
        assert init["result"]["protocolVersion"] == "2025-06-18"
        assert "search_memories" in {t["name"] for t in tools["result"]["tools"]}
        assert initialized < AT_ONCE, f"initialize after {initialized:.2f} s"
        assert listed < AT_ONCE, f"tools/list after {listed:.2f} s"
        # the server took over: its own answer to a call, and to tools/list now
        found = host.ask(
            3, "tools/call", {"name": "search_memories", "arguments": {"query": "pytest"}}
        )
        result = found["result"]["structuredContent"]
        assert result["total_found"] >= 1 and not found["result"].get("isError")
        again = host.ask(4, "tools/list")
        assert again["result"] == tools["result"]  # the snapshot is what the server says
    finally:
        assert host.close() == 0


def test_a_call_that_waited_for_the_model_says_so(workspace: Path, session_export) -> None:  # noqa: ANN001 - the model it searches with, exported once
    import anyio

    def call(waited: float) -> dict:
        server = build_server(workspace, lambda: waited)
        arguments = {"query": "pytest", "search_mode": "keyword"}
        result = anyio.run(server.call_tool, "search_memories", arguments)
        return result.structured_content

    assert "notice" not in call(0.0)
    assert "notice" not in call(NOTICE_AFTER / 2)
    notice = call(3.25)["notice"]
    assert "waited 3.2 s for the embedding model" in notice
