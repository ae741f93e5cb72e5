"""`memcli mcp` over stdio logs plain lines to stderr, as `--http` does, and never imports
Rich (the mcp package's default handler: wrapped, boxed lines with a clock)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.integration.test_mcp import payload


def rich_imports(stderr: str) -> list[str]:
    """The lines of a `python -X importtime` stderr that import Rich or a part of it."""
    return [
        line
        for line in stderr.splitlines()
        if line.startswith("import time:") and line.rsplit("|", 1)[-1].strip().split(".")[0] == "rich"
    ]


@pytest.mark.slow  # a server process that loads the model
def test_the_stdio_server_never_imports_rich(
    workspace: Path,
    tmp_path: Path,
    exported,  # noqa: ANN001 - the ONNX export, as after a first run (torch's path, a
    # first run's, imports Rich through scikit-learn's progress bars)
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    errors = tmp_path / "stderr.txt"

    async def run() -> tuple[dict, bool]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-X", "importtime", "-m", "memcli", "-w", str(workspace), "mcp"],
            env=dict(os.environ),
        )
        with errors.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                found = payload(await session.call_tool("search_memories", {"query": "pytest"}))
                failed = await session.call_tool("get_memory_detail", {"memory_key": "nope"})
                return found, failed.is_error

    found, failed = anyio.run(run)
    assert found["total_found"] > 0 and failed
    stderr = errors.read_text()
    assert "import time:" in stderr and "mcp.server" in stderr  # the check can see imports
    assert rich_imports(stderr) == []
    said = [line for line in stderr.splitlines() if not line.startswith("import time:")]
    assert said == []  # a tool's failure goes to the client, not in a box on stderr


def test_its_logging_is_plain_lines_without_rich() -> None:
    """What `memcli mcp` sets up before it builds its server (mcp_server.plain_logging),
    then a server built and a warning and an error with its traceback logged as the mcp
    package logs them, in a process of its own."""
    script = """
import logging, sys
from memcli.surfaces.mcp_server import build_server, plain_logging
plain_logging()
build_server(sys.argv[1])
log = logging.getLogger("mcp.server.mcpserver.server")
log.info("not for people")
log.warning("Tool %r is slow", "search_memories")
try:
    1 / 0
except ZeroDivisionError:
    log.exception("Tool %r raised an unexpected exception", "add_memory")
print(sorted(m for m in sys.modules if m == "rich" or m.startswith("rich.")))
"""
    from tests.support.env import SAMPLE

    done = subprocess.run(
        [sys.executable, "-c", script, str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"  # Rich never imported
    lines = done.stderr.splitlines()
    assert lines[0] == "memcli: WARNING mcp.server.mcpserver.server: Tool 'search_memories' is slow"
    assert lines[1] == (
        "memcli: ERROR mcp.server.mcpserver.server: Tool 'add_memory' raised an unexpected "
        "exception"
    )
    assert lines[2] == "Traceback (most recent call last):"  # Python's own, not Rich's
    assert lines[-1] == "ZeroDivisionError: division by zero"
    assert "not for people" not in done.stderr


def test_the_http_server_never_imports_rich(tmp_path: Path) -> None:
    """`memcli mcp --http` up to the moment it serves (uvicorn.run, replaced here): the
    logging is plain before its MCP servers are built, so Rich is never imported."""
    script = """
import sys
from pathlib import Path
import uvicorn
uvicorn.run = lambda *args, **kwargs: print(
    sorted(m for m in sys.modules if m == "rich" or m.startswith("rich."))
)
from memcli.surfaces.mcp_http import serve_http
serve_http(Path(sys.argv[1]), "127.0.0.1:8765", None)
"""
    from tests.support.env import SAMPLE

    done = subprocess.run(
        [sys.executable, "-c", script, str(SAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MEMCLI_MCP_TOKEN": "test-token-0123456789abcdef"},
    )
    assert done.returncode == 0, done.stderr
    assert "serving MCP" in done.stderr  # it got as far as serving
    assert done.stdout.strip() == "[]"  # Rich never imported
