"""The MCP HTTP server's connection cap, deterministically (issue 25 #3): with
MEMCLI_MCP_MAX_CONNECTIONS=2 and a long read deadline, a third connection is answered
503 and closed at once while the two half-sent requests are still held. (The 200-socket
test of tests/process/test_mcp_http.py depends on timing: under load the read deadline
alone may close enough of them.)"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import round3_harden as h
from tests.support.processes import listening


@pytest.mark.slow
def test_a_connection_over_the_cap_gets_503_at_once(tmp_path: Path) -> None:
    root = h._workspace(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(
        h.ENV,
        MEMCLI_MCP_TOKEN=h.TOKEN,
        MEMCLI_MCP_MAX_CONNECTIONS="2",
        MEMCLI_MCP_READ_TIMEOUT="120",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(root), "mcp", "--http", f"127.0.0.1:{port}"],
        env=env, stderr=subprocess.PIPE, text=True,
    )
    held: list[socket.socket] = []
    try:
        listening(port, proc)
        time.sleep(0.5)  # the probe's connection is gone from the server's count
        for _ in range(2):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
            held.append(sock)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as extra:
            reply = extra.recv(4096)
            assert reply.startswith(b"HTTP/1.1 503"), reply
            assert extra.recv(4096) == b""  # and closed
        for sock in held:  # the two within the cap are still waited on
            sock.settimeout(0.5)
            try:
                data = sock.recv(1)
            except TimeoutError:
                data = None  # no reply, not closed: still waited on
            assert data is None, data
        assert proc.poll() is None
    finally:
        for sock in held:
            sock.close()
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
