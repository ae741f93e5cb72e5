"""`memcli mcp --http`: a real MCP client over streamable HTTP, with and without a token."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from memcli.core.errors import ConfigError, UsageError
from memcli.surfaces.mcp_http import load_grants, parse_bind
from tests.support.processes import listening

TOKEN = "test-token-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(root: Path, env: dict[str, str], *extra: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(root), "mcp", "--http", f"127.0.0.1:{port}"]
        + list(extra),
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    if listening(port, proc):
        return proc, port
    if proc.poll() is not None:
        raise AssertionError(proc.stderr.read())
    proc.kill()
    raise AssertionError("the HTTP server did not start")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=20)


async def _search(url: str, token: str | None, query: str) -> dict:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("search_memories", {"query": query, "limit": 2})
        assert not result.is_error, result
        return result.structured_content or json.loads(result.content[0].text)


def _post(url: str, token: str | None) -> tuple[int, dict]:
    import httpx2

    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    response = httpx2.post(url, json=body, headers=headers, timeout=30)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, {}


@pytest.mark.slow
def test_each_token_searches_its_own_workspaces_and_nothing_else(tmp_path: Path, workspace: Path) -> None:
    alice = tmp_path / "alice"
    shutil.copytree(workspace, alice)
    bob = tmp_path / "bob"
    bob.mkdir()
    (bob / "memory.md").write_text(
        "# Memory\n\n## Facts\n- Bob keeps his bicycle in the garage <!-- id=mb0000001 -->\n",
        encoding="utf-8",
    )
    grants = tmp_path / "grants.toml"
    grants.write_text(
        f'[[grant]]\ntoken = "alice-token-0123456789"\nworkspaces = ["{alice}"]\n\n'
        f'[[grant]]\ntoken = "{TOKEN}"\nworkspaces = ["{alice}", "{bob}"]\n',
        encoding="utf-8",
    )
    grants.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if k != "MEMCLI_MCP_TOKEN"}
    proc, port = _start(alice, env, "--token-file", str(grants))
    base = f"http://127.0.0.1:{port}/mcp"
    try:
        found = anyio.run(_search, base + "?workspace=bob", TOKEN, "where is the bicycle")
        assert found["results"][0]["memory_key"] == "mb0000001"
        found = anyio.run(_search, base, "alice-token-0123456789", "Python tests")
        assert found["results"][0]["memory_key"] == "m8f3a2c1"
        status, body = _post(base + "?workspace=bob", "alice-token-0123456789")
        assert status == 403 and "granted: alice" in body["error"]
        status, body = _post(base, TOKEN)  # two workspaces: it must say which
        assert status == 403 and "?workspace=" in body["error"]
        status, body = _post(base, None)
        assert status == 401 and "bearer token" in body["error"]
        status, _ = _post(base, "wrong-token-0123456789abcdef")
        assert status == 401
        with pytest.raises(Exception):  # noqa: B017, PT011 - the client's own error type
            anyio.run(_search, base, "wrong-token-0123456789abcdef", "pytest")
    finally:
        _stop(proc)


def test_no_token_no_server(workspace: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MEMCLI_MCP_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(workspace), "mcp", "--http", "127.0.0.1:1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "without a token" in done.stderr and "MEMCLI_MCP_TOKEN" in done.stderr


def test_grants_are_checked_before_serving(tmp_path: Path, workspace: Path) -> None:
    assert parse_bind("8080") == ("127.0.0.1", 8080)
    assert parse_bind("0.0.0.0:9000") == ("0.0.0.0", 9000)
    with pytest.raises(UsageError, match="out of range"):
        parse_bind("localhost:70000")
    with pytest.raises(ConfigError, match="shorter than 16"):
        load_grants(workspace, None, {"MEMCLI_MCP_TOKEN": "short"})
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    token_file.chmod(0o644)
    with pytest.raises(ConfigError, match="other users can read"):
        load_grants(workspace, token_file, {})
    token_file.chmod(0o600)
    (grant,) = load_grants(workspace, token_file, {})
    assert TOKEN not in repr(grant) and list(grant.workspaces.values()) == [workspace.resolve()]
    token_file.write_text('[[grant]]\ntoken = "x"\nworkspaces = ["."]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="grant 1: the token is shorter"):
        load_grants(workspace, token_file, {})
    token_file.write_text(
        f'[[grant]]\ntoken = "{TOKEN}"\nworkspaces = ["missing-dir"]\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="missing-dir is not a directory"):
        load_grants(workspace, token_file, {})



@pytest.mark.slow
def test_half_sent_requests_cannot_exhaust_the_server(tmp_path: Path) -> None:
    from tests.support.round3_harden import half_sent_requests

    assert half_sent_requests(tmp_path, sockets=200) == []


@pytest.mark.slow
def test_a_server_out_of_descriptors_says_so_and_lives(tmp_path: Path) -> None:
    from tests.support.round3_harden import descriptors_lowered

    assert descriptors_lowered(tmp_path, sockets=200) == []
