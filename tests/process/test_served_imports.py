"""The served client path imports only what it uses (issue 27 item 4): `memcli search`,
`inject` and `get` answered by a watcher run through the real entry point (`python -m
memcli`) against a daemon socket served in this process with canned answers, and the
modules the client imported are read from `python -X importtime`. memcli's own modules
come from an allow-list (a new import on this path must be added here, on purpose);
libraries and the heavier standard modules are never imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memcli.core.models import Entry
from memcli.logic.search import Hit
from memcli.surfaces.cli.render import hit_row
from memcli.surfaces.daemon.server import DaemonServer, printed

#: every memcli module a served command naming its workspace (-w) may import
SERVED_MODULES = {
    "memcli",
    "memcli.surfaces",
    "memcli.surfaces.cli",
    "memcli.surfaces.cli.fastpath",
    # the command line read once (its Env) and the served command's arguments
    "memcli.surfaces.cli.env",
    # the socket, the trust checks and the wire
    "memcli.surfaces.protocol",
    # the command's Env resolves the workspace once, also for a served command (issue 27
    # item 3): the resolution rules
    "memcli.store",
    "memcli.store.workspace",
}
#: and what the walk up from the current directory adds: the file names it looks for
WALK_MODULES = {"memcli.core", "memcli.core.names"}
#: never on the served path: libraries, and standard modules that cost milliseconds
NEVER = {
    "rich",
    "typer",
    "click",
    "numpy",
    "faiss",
    "onnxruntime",
    "tokenizers",
    "torch",
    "sentence_transformers",
    "transformers",
    "tiktoken",
    "pysbd",
    "watchdog",
    "mcp",
    "json",
    "re",
    "typing",
    "dataclasses",
    "enum",
    "pathlib",
    "socket",
    "selectors",
    "datetime",
    "subprocess",
    "logging",
    "tomllib",
}
ENTRY = Entry("m1", "Deploys Postgres with blue-green deploys", "fact", "memory.md", 3, {})
ANSWERS: dict[str, dict[str, Any]] = {
    "SearchQuery": {"hits": [hit_row(Hit(ENTRY, 0.73, {"semantic": 0.6, "keyword": 1.2}))]},
    "InjectRequest": {"inject": {"exact": True, "block": "## Memory\n- Deploys Postgres"}},
    "GetRequest": {"entry": ENTRY.to_dict()},
}
CASES = [
    (["search", "postgres deploys", "--no-touch"], "Deploys Postgres"),
    (["search", "postgres deploys", "--json", "--explain"], '"semantic"'),
    (["inject", "-q", "postgres", "--max-tokens", "500"], "## Memory"),
    (["get", "m1"], "blue-green"),
]


def imported(stderr: str) -> set[str]:
    """Module names of `python -X importtime` output."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    } - {"imported package"}


@pytest.fixture
def served(workspace: Path):  # noqa: ANN201 - (workspace, the requests it got)
    asked: list[str] = []

    def handler(message: dict[str, Any]) -> dict[str, Any]:
        kind = message["request"]["kind"]
        asked.append(kind)
        return printed(ANSWERS[kind], message.get("view"))  # as RequestHandler answers

    server = DaemonServer(workspace, handler, detach_stdin=False)
    server.start()
    yield workspace, asked
    server.stop()


def run_served(
    workspace: Path, args: list[str], named: bool
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`python -X importtime -m memcli ARGS`, the workspace named with -w or found by the
    walk up from it (the current directory); the run and the modules it imported."""
    env = {k: v for k, v in os.environ.items() if k != "MEMCLI_WORKSPACE"}
    here = str(Path(__file__).resolve().parents[2])  # this checkout, run from elsewhere
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    flag = ["-w", str(workspace)] if named else []
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memcli", *flag, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done, imported(done.stderr)


@pytest.mark.parametrize(("args", "shown"), CASES)
def test_a_served_command_imports_only_the_served_path(served, args: list[str], shown: str) -> None:
    workspace, asked = served
    done, modules = run_served(workspace, args, named=True)
    assert shown in done.stdout
    assert len(asked) == 1  # the daemon answered it, not an in-process run
    ours = {m for m in modules if m == "memcli" or m.startswith("memcli.")}
    assert ours <= SERVED_MODULES, sorted(ours - SERVED_MODULES)
    tops = {m.split(".")[0] for m in modules}
    assert not tops & NEVER, sorted(tops & NEVER)


def test_the_walk_up_adds_only_the_file_names(served) -> None:
    workspace, asked = served
    done, modules = run_served(workspace, CASES[0][0], named=False)
    assert CASES[0][1] in done.stdout
    assert asked == ["SearchQuery"]
    ours = {m for m in modules if m == "memcli" or m.startswith("memcli.")}
    assert WALK_MODULES <= ours <= SERVED_MODULES | WALK_MODULES, sorted(ours)


def test_importtime_lines_are_read() -> None:
    stderr = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       120 |        120 |   memcli.surfaces.cli.env\n"
        "Error: something else | with a bar\n"
    )
    assert imported(stderr) == {"memcli.surfaces.cli.env"}
