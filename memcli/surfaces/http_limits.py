"""What a client may hold of `memcli mcp --http`: the limits, read from the environment,
and the uvicorn protocol, loop and logging that keep them.

Limits keep unauthenticated clients from holding the server: at most
MEMCLI_MCP_MAX_CONNECTIONS connections at once (default 256, never more than half the
process's descriptor limit; those over it get 503 and are closed at once), a whole
request (headers and body) within MEMCLI_MCP_READ_TIMEOUT seconds of its first byte
being awaited (default 10; else 408 and closed), headers of at most 16 KB (h11 while
they arrive, the gate once in: 431) and a body of at most MEMCLI_MCP_MAX_BODY_MB
(default 4; else 413). Every refusal closes its connection.

The cap is checked only once asyncio has accepted a connection, and asyncio accepts up
to its `backlog` at a time, each open for up to three passes of its loop before the cap
can close it: that batch is sized so these bursts fit in the descriptors too, while the
kernel's queue of connections not yet accepted (which holds none of ours) stays long
(LISTEN_QUEUE), so a burst waits there instead of being dropped. Should descriptors
run out anyway (the limit lowered under a running server), the server says so in one
line and asyncio accepts again a second later; nothing it logs needs a file opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memcli.core.errors import ConfigError

#: the server's limits: (environment variable, default, smallest allowed)
LIMITS = {
    "max_connections": ("MEMCLI_MCP_MAX_CONNECTIONS", 256, 1),
    "read_timeout": ("MEMCLI_MCP_READ_TIMEOUT", 10.0, 0.1),
    "max_body_mb": ("MEMCLI_MCP_MAX_BODY_MB", 4.0, 0.001),
}
HEADER_BYTES = 16 * 1024
#: descriptors kept for everything but connections (files, the index, the model)
RESERVED_DESCRIPTORS = 64
#: accepted batches that may be open at once before the cap closes them (three passes
#: of asyncio's loop, and one spare): the accept batch is what is left over this
ACCEPT_BATCHES = 4
#: the kernel's queue of connections not yet accepted (uvicorn's default backlog)
LISTEN_QUEUE = 2048


@dataclass(frozen=True)
class Limits:
    """What one client may hold: connections, seconds to send a request, body bytes;
    and how many connections asyncio accepts at once (uvicorn's `backlog`)."""

    max_connections: int
    read_timeout: float
    max_body: int
    accept_batch: int


def load_limits(env: Mapping[str, str] | None = None, descriptors: int | None = None) -> Limits:
    """The limits from the environment (ConfigError naming a bad value); connections are
    capped to half the descriptors left after RESERVED_DESCRIPTORS, the accept batch to
    what the connections leave of those, over ACCEPT_BATCHES."""
    env = os.environ if env is None else env
    values: dict[str, float] = {}
    for key, (name, default, least) in LIMITS.items():
        raw = env.get(name, "").strip()
        try:
            value = float(raw) if raw else float(default)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not a number") from None
        if not value >= least or value != value or value == float("inf"):
            raise ConfigError(f"{name}={raw!r}: give a number of at least {least:g}")
        values[key] = value
    if descriptors is None:
        descriptors = _descriptor_limit()
    spare = max(0, descriptors - RESERVED_DESCRIPTORS)
    room = max(1, spare // 2)
    max_connections = max(1, min(int(values["max_connections"]), room))
    return Limits(
        max_connections=max_connections,
        read_timeout=values["read_timeout"],
        max_body=int(values["max_body_mb"] * 2**20),
        accept_batch=max(1, min(LISTEN_QUEUE, (spare - max_connections) // ACCEPT_BATCHES)),
    )


def _descriptor_limit() -> int:
    try:
        import resource
    except ImportError:  # Windows: no such limit to fear
        return 1 << 20
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def guarded_protocol(limits: Limits) -> type:
    """uvicorn's h11 protocol with a connection cap and a deadline for reading each
    request (uvicorn times out only an idle keep-alive connection, never a request sent
    slowly, and it accepts connections until descriptors run out)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    reading = (h11.IDLE, h11.SEND_BODY)  # the client's states while we wait for its bytes

    class GuardedH11(H11Protocol):
        deadline: Any = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                transport.write(_raw_reply(503, "too many connections; try again later"))
                transport.close()
                return
            self._watch()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_watch()
            super().connection_lost(exc)

        def _watch(self) -> None:
            """A deadline while a request is awaited or arriving; none once it is in."""
            if self.transport.is_closing() or self.conn.their_state not in reading:
                self._stop_watch()
            elif self.deadline is None:
                self.deadline = self.loop.call_later(limits.read_timeout, self._too_slow)

        def _stop_watch(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _too_slow(self) -> None:
            self.deadline = None
            if self.transport.is_closing():
                return
            if self.cycle is None or self.cycle.response_complete:  # no answer under way
                self.transport.write(_raw_reply(408, "the request took too long to arrive"))
            self.transport.close()

    return GuardedH11


def guarded_loop() -> asyncio.AbstractEventLoop:
    """uvicorn's loop (`loop=` takes this factory): asyncio's own, whose accept batches
    ACCEPT_BATCHES is sized for, with quiet_loop_errors as its error handler."""
    loop = GuardedLoop()
    loop.set_exception_handler(quiet_loop_errors())
    return loop


class GuardedLoop(asyncio.SelectorEventLoop):
    """asyncio's loop, whose servers listen with a queue of LISTEN_QUEUE whatever their
    `backlog` (asyncio gives listen() the same number it accepts at once)."""

    async def create_server(self, *args: Any, **kwargs: Any) -> asyncio.Server:  # type: ignore[override]
        server = await super().create_server(*args, **kwargs)
        for sock in server.sockets:
            with sock.dup() as listening:
                listening.listen(LISTEN_QUEUE)
        return server


def quiet_loop_errors() -> Any:
    """An asyncio error handler: out of descriptors (asyncio then stops accepting for a
    second) is one line on stderr a second at most instead of a traceback for every
    connection it could not accept; anything else is logged as asyncio would."""
    import errno

    out_of = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
    quiet_until = [float("-inf")]

    def handle(loop: Any, context: dict) -> None:
        exc = context.get("exception")
        if not (isinstance(exc, OSError) and exc.errno in out_of):
            loop.default_exception_handler(context)
            return
        if loop.time() >= quiet_until[0]:
            quiet_until[0] = loop.time() + 1.0
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(
                    f"memcli: cannot accept connections: {exc.strerror} (the descriptor "
                    "limit); accepting again in a second\n"
                )

    return handle


def plain_logging() -> None:
    """Log to stderr through logging's own StreamHandler, in place of the Rich handler
    the mcp package installs: Rich imports its traceback module when it first logs an
    error, and with no descriptor left that import failed and took the server down."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memcli: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


def _raw_reply(status: int, message: str) -> bytes:
    """A whole HTTP response that closes the connection, for the protocol to write."""
    from http import HTTPStatus

    body = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body
