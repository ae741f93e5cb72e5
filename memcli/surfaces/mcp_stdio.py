"""The stdio front of `memcli mcp`: an MCP host gets `initialize` and `tools/list`
answered at once, while the server itself is built behind it (issue 37).

Importing the mcp package and building the server takes ≈ 1.5 s of CPU, many seconds on
a busy machine (Codex gives a server 10 s). So this module, which imports only the
standard library, reads the protocol's lines first: it answers `initialize`,
`tools/list` and `ping` from a snapshot of what the real server answers
(`mcp_snapshot.json`, made by memcli.surfaces.docgen and checked against the real
server by tests/unit/test_docs.py and tests/process/test_mcp_start.py) and keeps every
other line, in order.
Meanwhile the main thread builds the server (memcli.surfaces.mcp_server) and hands it
the stream: first the `initialize` it answered (the server's own answer to it is
dropped: the host has one already), then the kept lines, then everything as it comes.
After that the front only passes lines on. The embedding model is readied in the
background meanwhile (`Warm`); a tool call that has to wait for it says so.

A workspace that declares types of its own (`[files]`) has other enums in its tools'
schemas than the snapshot: there `tools/list` waits for the server.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from memcli.core.names import CONFIG_FILE

SNAPSHOT = Path(__file__).with_name("mcp_snapshot.json")


class Front:
    """Reads the host's lines (`wire_in`); answers what the snapshot answers until the
    server is connected (`connect`), and passes everything else on to it in order."""

    def __init__(self, wire_in: BinaryIO, wire_out: BinaryIO, snapshot: dict[str, Any]) -> None:
        self.wire_in = wire_in
        self.wire_out = wire_out
        self.snapshot = snapshot
        self.lock = threading.Lock()  # one writer on the wire; the hand-off is atomic
        self.kept: list[bytes] = []  # lines for the server, in the order they came
        self.server_in: BinaryIO | None = None
        self.ended = False  # the host closed its end before the server was connected
        self.version: str | None = None  # the protocol version answered here
        #: ids of requests answered here whose answers from the server are dropped
        self.dropped: set[object] = set()

    def pump(self) -> None:
        """Read the host's lines until it closes its end (the front thread's work)."""
        for line in self.wire_in:
            with self.lock:
                if self.server_in is not None:
                    self._forward(line)
                    continue
                answer = self._answer(line)
                if answer is not None:
                    self._write(answer)
        with self.lock:
            self.ended = True
            if self.server_in is not None:
                self.server_in.close()

    def connect(self, server_in: BinaryIO) -> None:
        """Hand the stream to the server: the kept lines, then all that comes."""
        with self.lock:
            for line in self.kept:
                self._forward(line, server_in)
            self.kept.clear()
            self.server_in = server_in
            if self.ended:
                server_in.close()

    def write_from_server(self, line: str) -> None:
        """One line the server writes (a JSON-RPC message and its newline)."""
        with self.lock:
            if self.dropped:
                try:
                    ident = json.loads(line).get("id")
                except (ValueError, AttributeError):
                    ident = None
                if ident in self.dropped and "result" in line:
                    self.dropped.discard(ident)
                    return
            self._write(line.encode("utf-8"))

    # ------------------------------------------------------------------ internals

    def _answer(self, line: bytes) -> bytes | None:
        """The answer to `line` from the snapshot, or None (the line is kept for the
        server; an `initialize` answered here is kept too, to initialize it)."""
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or "id" not in message:
            self.kept.append(line)  # a notification, or what the server will refuse
            return None
        method, ident = message.get("method"), message["id"]
        if method == "initialize" and self.version is None:
            params = message.get("params") or {}
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            known = self.snapshot.get("versions", {}).get(version)
            self.kept.append(line)
            if known is None:
                return None  # a protocol version the snapshot lacks: the server answers
            self.version = version
            self.dropped.add(ident)
            return _response(ident, known["initialize"])
        known = self.snapshot.get("versions", {}).get(self.version or "")
        if known and "tools/list" in known and method == "tools/list" and not message.get("params"):
            return _response(ident, known["tools/list"])
        if known is not None and method == "ping":
            return _response(ident, {})
        self.kept.append(line)
        return None

    def _forward(self, line: bytes, to: BinaryIO | None = None) -> None:
        target = to or self.server_in
        assert target is not None
        try:
            target.write(line if line.endswith(b"\n") else line + b"\n")
            target.flush()
        except (BrokenPipeError, ValueError):
            pass  # the server has ended: nothing takes the line any more

    def _write(self, data: bytes) -> None:
        self.wire_out.write(data)
        self.wire_out.flush()


def _response(ident: object, result: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": ident, "result": result}  # compact, as the server writes
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class ServerOut:
    """The file the server writes to (anyio wraps it): each line goes through the front."""

    def __init__(self, front: Front) -> None:
        self.front = front
        self.partial = ""

    def write(self, text: str) -> int:
        self.partial += text
        while "\n" in self.partial:
            line, self.partial = self.partial.split("\n", 1)
            self.front.write_from_server(line + "\n")
        return len(text)

    def flush(self) -> None:
        pass


class Warm:
    """The embedding model and the index readied in the background; `wait` blocks a
    tool call until they are and says how long it waited."""

    def __init__(self) -> None:
        self.done = threading.Event()

    def start(self, workspace: str | Path | None) -> None:
        threading.Thread(target=self._run, args=(workspace,), daemon=True).start()

    def _run(self, workspace: str | Path | None) -> None:
        try:
            from memcli.services.memory import shared_memory

            index = shared_memory(workspace).index_manager
            index.ensure()
            index.query_embedder.embed(["warm up"])
        except Exception:  # noqa: BLE001 - the tool call meets the problem and reports it
            pass
        finally:
            self.done.set()

    def wait(self) -> float:
        """Seconds this call waited for the model (0.0 when it was ready)."""
        if self.done.is_set():
            return 0.0
        started = time.monotonic()
        self.done.wait()
        return time.monotonic() - started


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own copies of stdin and stdout; fd 0 then reads the null device
    and fd 1 goes to stderr, so nothing printed by accident reaches the wire."""
    wire_in = os.fdopen(os.dup(0), "rb", buffering=0)
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def load_snapshot(root: Path) -> dict[str, Any]:
    """The snapshot of the server's answers, {} when it cannot be read; without its
    tools when the workspace's memcli.toml may declare types of its own (`[files]`)."""
    try:
        snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    from memcli.core.errors import MemcliError
    from memcli.store.links import read_settings

    try:  # bounded, by the link rule: a memcli.toml linked to /dev/zero never hangs
        config = read_settings(root / CONFIG_FILE, root).decode("utf-8", errors="replace")
    except (OSError, MemcliError):
        config = ""
    if re.search(r"^\s*\[+\s*files\b", config, re.MULTILINE):
        for answers in snapshot.get("versions", {}).values():
            answers.pop("tools/list", None)
    return snapshot


def serve(workspace: str | Path | None) -> None:
    """Run the MCP server on stdio until the host disconnects (WorkspaceError first,
    when there is no workspace)."""
    from memcli.store.workspace import require_workspace, resolve_workspace

    root = require_workspace(resolve_workspace(workspace, os.environ))
    wire_in, wire_out = claim_stdio()
    front = Front(wire_in, wire_out, load_snapshot(root))
    threading.Thread(target=front.pump, name="mcp-front", daemon=True).start()
    warm = Warm()
    warm.start(workspace)
    from memcli.surfaces.daemon.autostart import ensure

    ensure(root)  # a watcher for the workspace ([watch] autostart), not waited for
    from memcli.surfaces import mcp_server

    mcp_server.plain_logging()
    run(mcp_server.build_server(workspace, warm.wait), front)


def run_here(workspace: str | Path | None) -> int | None:
    """`memcli mcp` from the entry point, before the CLI's own imports: 0 once served,
    None when there is no workspace (the CLI then says so as for any command)."""
    from memcli.core.errors import WorkspaceError

    try:
        serve(workspace)
    except WorkspaceError:
        return None
    return 0


def run(server: Any, front: Front) -> None:
    """Serve `server` on the stream `front` hands it, until that stream ends."""
    import anyio
    from mcp.server.stdio import stdio_server

    read_fd, write_fd = os.pipe()
    server_in = os.fdopen(write_fd, "wb")
    reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")

    async def main() -> None:
        streams = stdio_server(anyio.wrap_file(reader), anyio.wrap_file(ServerOut(front)))
        async with streams as (read_stream, write_stream):
            front.connect(server_in)
            low = server._lowlevel_server  # noqa: SLF001 - MCPServer.run_stdio_async's own
            await low.run(read_stream, write_stream, low.create_initialization_options())

    anyio.run(main)
