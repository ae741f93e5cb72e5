"""What keeps `memcli mcp --http` up (issue 25, finding 3), in process against the
installed uvicorn, h11 and asyncio: GuardedH11 (a subclass of uvicorn's H11Protocol:
this pins the hooks and attributes it relies on), the loop's long listen queue, the
quiet handler for running out of descriptors, logging that needs no file, and a request
whose client left never reaching the MCP app. The real server under attack:
tests/process/test_mcp_http.py."""

from __future__ import annotations

import _io
import asyncio
import errno
import logging
import select
import socket
import sys
import time
from pathlib import Path

import anyio
import pytest

from memcli.surfaces.http_limits import (
    HEADER_BYTES,
    Limits,
    guarded_loop,
    guarded_protocol,
    plain_logging,
    quiet_loop_errors,
)
from memcli.surfaces.mcp_http import Gate, Grant, _digest

TOKEN = "test-token-0123456789abcdef"


def test_guarded_h11_on_the_installed_uvicorn() -> None:
    """A half-sent request: 408 and closed after the read deadline; a whole request whose
    answer takes longer than the deadline: answered; one over the cap: 503 at once."""
    import uvicorn
    from uvicorn.server import ServerState

    async def app(scope: dict, receive: object, send: object) -> None:
        await asyncio.sleep(0.6)  # longer than the read deadline: no deadline now
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"answered"})  # type: ignore[operator]

    config = uvicorn.Config(
        app, lifespan="off", log_config=None, h11_max_incomplete_event_size=HEADER_BYTES
    )
    protocol = guarded_protocol(Limits(2, 0.3, 1000, 4))
    state = ServerState()

    async def attack() -> tuple[bytes, bytes, bytes, int]:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: protocol(config=config, server_state=state, app_state={}, _loop=loop),
            "127.0.0.1",
            0,
        )
        port = server.sockets[0].getsockname()[1]
        slow_r, slow_w = await asyncio.open_connection("127.0.0.1", port)
        slow_w.write(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Le")
        whole_r, whole_w = await asyncio.open_connection("127.0.0.1", port)
        whole_w.write(b"GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
        await asyncio.sleep(0.1)  # both in: the cap (2) is reached
        over_r, over_w = await asyncio.open_connection("127.0.0.1", port)
        over = await asyncio.wait_for(over_r.read(), 10)
        slow = await asyncio.wait_for(slow_r.read(), 10)
        whole = await asyncio.wait_for(whole_r.readuntil(b"answered"), 10)
        for writer in (slow_w, whole_w, over_w):
            writer.close()
        server.close()
        await asyncio.sleep(0.1)
        return over, slow, whole, len(state.connections)

    over, slow, whole, left = asyncio.run(attack())
    assert over.startswith(b"HTTP/1.1 503") and b"too many connections" in over
    assert slow.startswith(b"HTTP/1.1 408") and b"too long to arrive" in slow
    assert whole.startswith(b"HTTP/1.1 200") and whole.endswith(b"answered")
    assert left == 0  # every connection left uvicorn's count


async def _exchange(app: object, data: bytes) -> tuple[bytes, bool]:
    """`data` sent to a GuardedH11 server (read deadline 60 s) in front of `app`: what
    came back, and whether the server closed the connection after it."""
    import uvicorn
    from uvicorn.server import ServerState

    config = uvicorn.Config(app, lifespan="off", log_config=None)  # type: ignore[arg-type]
    protocol = guarded_protocol(Limits(8, 60.0, 1000, 4))
    state = ServerState()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: protocol(config=config, server_state=state, app_state={}, _loop=loop),
        "127.0.0.1",
        0,
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
    writer.write(data)
    try:
        got = await asyncio.wait_for(reader.read(), 5)  # to the end: the server closed it
        closed = True
    except TimeoutError:
        got, closed = b"", False
    writer.close()
    server.close()
    return got, closed


_AUTH = f"Authorization: Bearer {TOKEN}\r\n".encode()


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST /other HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", 404),
        (b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", 401),
        (b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 90\r\n\r\n{", 401),  # body unread
        (b"POST /mcp HTTP/1.1\r\nHost: h\r\nAuthorization: Basic abc\r\n\r\n", 401),
        (b"POST /mcp?workspace=no HTTP/1.1\r\nHost: h\r\n" + _AUTH + b"\r\n", 403),
        (b"POST /mcp HTTP/1.1\r\nHost: h\r\n" + _AUTH + b"Content-Length: 1001\r\n\r\n{", 413),
        (
            b"POST /mcp HTTP/1.1\r\nHost: h\r\n" + _AUTH + b"Transfer-Encoding: chunked\r\n\r\n"
            + b"3e9\r\n" + b"x" * 1001 + b"\r\n",
            413,
        ),
        (b"POST /mcp HTTP/1.1\r\nHost: h\r\n" + _AUTH + b"X-Big: " + b"a" * 16384 + b"\r\n\r\n", 431),
        (b"POST /mcp HTTP/1.1\r\nHost: h\r\nX-Big: " + b"a" * 16374 + b"\r\n\r\n", 401),  # 16,384
        (b"POST /mcp HTTP/1.1\r\nHost: h\r\nX-Big: " + b"a" * 16375 + b"\r\n\r\n", 431),
        (b"NOT HTTP AT ALL\r\n\r\n", 400),  # h11's own refusal
    ],
    ids=[
        "path", "no-token", "body-unread", "not-bearer", "workspace", "declared", "chunked",
        "headers", "headers-16384", "headers-16385", "h11",
    ],
)
def test_every_refusal_closes_the_connection(tmp_path: Path, request_bytes: bytes, status: int) -> None:
    """A refused client keeps no connection open (keep-alive) for its next try."""
    called: list[dict] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        called.append(scope)

    gate = Gate([Grant(_digest(TOKEN), {"ws": tmp_path})], {tmp_path: app}, max_body=1000)
    got, closed = asyncio.run(_exchange(gate, request_bytes))
    assert got.startswith(f"HTTP/1.1 {status} ".encode()), got[:200]
    assert closed and called == []


def test_the_listen_queue_is_longer_than_the_accept_batch() -> None:
    """asyncio gives listen() its accept batch; GuardedLoop's servers queue LISTEN_QUEUE
    in the kernel: with nothing accepted (the loop not running), 20 connect at once."""
    loop = guarded_loop()
    socks: list[socket.socket] = []
    try:
        server = loop.run_until_complete(
            loop.create_server(asyncio.Protocol, "127.0.0.1", 0, backlog=1)
        )
        address = server.sockets[0].getsockname()
        for _ in range(20):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(address)
            socks.append(sock)
        pending = list(socks)
        end = time.monotonic() + 5  # reached only when connections wait (SYNs dropped)
        while pending and time.monotonic() < end:
            _, ready, _ = select.select([], pending, [], 0.1)
            pending = [sock for sock in pending if sock not in ready]
        refused = [s for s in socks if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)]
        assert (len(pending), len(refused)) == (0, 0)
        server.close()
    finally:
        for sock in socks:
            sock.close()
        loop.close()


class _Loop:
    def __init__(self) -> None:
        self.now = 100.0
        self.passed: list[dict] = []

    def time(self) -> float:
        return self.now

    def default_exception_handler(self, context: dict) -> None:
        self.passed.append(context)


@pytest.mark.parametrize(
    ("code", "quiet"),
    [
        (errno.EMFILE, True),
        (errno.ENFILE, True),
        (errno.ENOBUFS, True),
        (errno.ENOMEM, True),
        (errno.ECONNABORTED, False),
        (errno.EBADF, False),
    ],
)
def test_running_out_of_descriptors_is_one_line_a_second(
    capsys: pytest.CaptureFixture[str], code: int, quiet: bool
) -> None:
    handle = quiet_loop_errors()
    loop = _Loop()
    context = {"message": "socket.accept() out of system resource", "exception": OSError(code, "x")}
    for step in (0.0, 0.5, 0.49, 0.02):  # at 0, 0.5, 0.99 and 1.01 s
        loop.now += step
        handle(loop, context)
    said = capsys.readouterr().err.splitlines()
    if quiet:
        assert len(said) == 2 and loop.passed == []
        assert all("cannot accept connections" in line and "limit" in line for line in said)
    else:
        assert said == [] and loop.passed == [context] * 4
    handle(loop, {"message": "something else"})  # no exception at all: asyncio's own way
    assert loop.passed[-1] == {"message": "something else"}


def test_logging_needs_no_file(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The mcp package logs through Rich, which imports rich.traceback the first time it
    logs an error: with no descriptor left that import failed and the error escaped into
    asyncio's loop. After plain_logging an error with its traceback still gets out."""
    from rich.console import Console
    from rich.logging import RichHandler

    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    try:  # what building an MCP server does (mcp's configure_logging):
        root.addHandler(RichHandler(console=Console(stderr=True), rich_tracebacks=True))
        plain_logging()
        monkeypatch.delitem(sys.modules, "rich.traceback", raising=False)

        def no_descriptor(*args: object, **kwargs: object) -> None:
            raise OSError(errno.EMFILE, "Too many open files")

        monkeypatch.setattr(_io, "open_code", no_descriptor)  # how imports read files
        try:
            raise OSError(errno.EMFILE, "Too many open files")
        except OSError:
            logging.getLogger("asyncio").exception("socket.accept() out of system resource")
    finally:
        root.handlers[:] = before[0]
        root.setLevel(before[1])
    said = capsys.readouterr().err
    assert "memcli: ERROR asyncio: socket.accept() out of system resource" in said
    assert "Traceback" in said and "Too many open files" in said


def test_a_request_whose_client_left_never_reaches_the_app(tmp_path: Path) -> None:
    """Timed out half way through its body (or gone): nobody to answer, so the MCP app
    (which would open a session for it) is never called."""
    called: list[dict] = []
    sent: list[dict] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        called.append(scope)

    messages = [
        {"type": "http.request", "body": b'{"jsonrpc"', "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    gate = Gate([Grant(_digest(TOKEN), {"ws": tmp_path})], {tmp_path: app}, max_body=1000)
    headers = [(b"authorization", f"Bearer {TOKEN}".encode()), (b"content-length", b"100")]
    scope = {"type": "http", "path": "/mcp", "headers": headers, "query_string": b""}
    anyio.run(gate, scope, receive, send)
    assert (called, sent, messages) == ([], [], [])
