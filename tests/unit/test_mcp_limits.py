"""The MCP HTTP server's limits (issue 25, finding 3): read from the environment with
their boundaries, and a body over the limit answered 413 without reaching the app."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from memcli.core.errors import ConfigError
from memcli.surfaces.http_limits import RESERVED_DESCRIPTORS, load_limits
from memcli.surfaces.mcp_http import Gate, Grant, _digest

TOKEN = "test-token-0123456789abcdef"


@pytest.mark.parametrize(
    ("env", "descriptors", "expected"),
    [
        ({}, 1024, (256, 10.0, 4 * 2**20, 176)),  # batch: (960 - 256) // 4
        ({}, 128, (32, 10.0, 4 * 2**20, 8)),  # half of what the reserve leaves
        ({}, 60, (1, 10.0, 4 * 2**20, 1)),  # never none
        ({}, 8511, (256, 10.0, 4 * 2**20, 2047)),
        ({}, 8512, (256, 10.0, 4 * 2**20, 2048)),  # the batch's own ceiling: the queue
        ({}, 1 << 20, (256, 10.0, 4 * 2**20, 2048)),
        ({"MEMCLI_MCP_MAX_CONNECTIONS": "1"}, 1024, (1, 10.0, 4 * 2**20, 239)),
        ({"MEMCLI_MCP_MAX_CONNECTIONS": "1000"}, 1 << 20, (1000, 10.0, 4 * 2**20, 2048)),
        ({"MEMCLI_MCP_READ_TIMEOUT": "0.1"}, 1024, (256, 0.1, 4 * 2**20, 176)),
        ({"MEMCLI_MCP_MAX_BODY_MB": "1"}, 1024, (256, 10.0, 2**20, 176)),
    ],
)
def test_limits_from_the_environment(env: dict, descriptors: int, expected: tuple) -> None:
    limits = load_limits(env, descriptors)
    got = (limits.max_connections, limits.read_timeout, limits.max_body, limits.accept_batch)
    assert got == expected


@pytest.mark.parametrize("wanted", ["1", "32", "256", "5000"])
def test_held_connections_and_accept_bursts_fit_in_the_descriptors(wanted: str) -> None:
    """asyncio accepts a batch of connections in a pass and closes one over the cap three
    passes later: the cap plus three such batches stay within what the reserve leaves."""
    for descriptors in [*range(RESERVED_DESCRIPTORS + 8, 2100, 7), 4096, 20000, 1 << 20]:
        limits = load_limits({"MEMCLI_MCP_MAX_CONNECTIONS": wanted}, descriptors)
        held = limits.max_connections + 3 * limits.accept_batch
        assert held <= descriptors - RESERVED_DESCRIPTORS, (descriptors, limits)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MEMCLI_MCP_MAX_CONNECTIONS", "0"),
        ("MEMCLI_MCP_MAX_CONNECTIONS", "many"),
        ("MEMCLI_MCP_READ_TIMEOUT", "0.09"),
        ("MEMCLI_MCP_READ_TIMEOUT", "nan"),
        ("MEMCLI_MCP_READ_TIMEOUT", "inf"),
        ("MEMCLI_MCP_MAX_BODY_MB", "-1"),
    ],
)
def test_a_bad_limit_is_refused_by_name(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        load_limits({name: value}, 1024)


def _call(gate: Gate, body: bytes, chunks: int, declared: bool) -> tuple[int, bytes]:
    sent: list[dict] = []
    parts = [body[i::chunks] for i in range(chunks)]  # the size is what counts
    messages = [
        {"type": "http.request", "body": part, "more_body": i < chunks - 1}
        for i, part in enumerate(parts)
    ]
    headers = [(b"authorization", f"Bearer {TOKEN}".encode())]
    if declared:
        headers.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "path": "/mcp", "headers": headers, "query_string": b""}

    async def receive() -> dict:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    anyio.run(gate, scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize(
    ("size", "chunks", "declared", "status"),
    [
        (1000, 1, True, 200),
        (1000, 4, False, 200),
        (1001, 1, True, 413),  # said so: refused before reading
        (1001, 4, False, 413),  # chunked: refused once the bytes add up
    ],
)
def test_a_body_over_the_limit_never_reaches_the_app(
    tmp_path: Path, size: int, chunks: int, declared: bool, status: int
) -> None:
    seen: list[bytes] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        body = b""
        while True:
            message = await receive()  # type: ignore[operator]
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        seen.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]

    gate = Gate([Grant(_digest(TOKEN), {"ws": tmp_path})], {tmp_path: app}, max_body=1000)
    got, reply = _call(gate, b"x" * size, chunks, declared)
    assert got == status
    if status == 200:
        assert seen == [b"x" * size] and reply == b"ok"
    else:
        assert seen == [] and b"longer than 1000 bytes" in reply
