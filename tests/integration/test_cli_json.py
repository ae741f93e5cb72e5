"""Every command of the Typer app, walked from the app itself (a new command without
--json, or without a case here, fails): `--json` exists, a successful run prints one
JSON document in the documented envelope, and misuse — an unknown option, a bad
option value, a missing argument — exits 2 naming the option (the value too) in
memcli's one error style, with the error envelope on stdout and nothing written; a
domain error exits 1 with its envelope (README "Commands", issue 20)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app
from tests.support.cli import envelope, failure, snapshot

#: commands whose output is another program's protocol, so no --json of memcli's
SPEAKS_ANOTHER_PROTOCOL = {
    "mcp": "MCP's JSON-RPC on stdio, or HTTP",
    "hook": "the agent host's hook JSON (Claude Code's hookSpecificOutput)",
    "merge-driver": "git's merge driver: exit status and the merged file (hidden)",
}


def commands() -> dict[str, Any]:
    """Every command of the app by its path (`search`, `config set`), from Typer's
    Click group."""
    import typer

    group = typer.main.get_command(app)

    def walk(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
        for name, command in node.commands.items():
            path = f"{prefix} {name}".strip()
            if isinstance(getattr(command, "commands", None), dict):
                yield from walk(command, path)
            else:
                yield path, command

    return dict(walk(group, ""))


@dataclass
class Case:
    """How to run a command successfully, and how to make it fail on the data (exit 1)."""

    args: Callable[[Path, Path], list[str]]  # (workspace, a scratch folder) -> arguments
    error: Callable[[Path, Path], list[str]] | None = None  # None: a file as --workspace
    before: list[list[str]] = field(default_factory=list)  # commands run first
    env: dict[str, str] = field(default_factory=dict)
    empty: bool = False  # run on an empty workspace (compress on the sample embeds it all)


EDITOR = {"VISUAL": f"{sys.executable} -c pass"}  # an editor that saves nothing


def _transcript(ws: Path, tmp: Path) -> str:
    path = tmp / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "What time is it?"}]))  # no model
    return str(path)


def _import_file(ws: Path, tmp: Path) -> str:
    path = tmp / "MEMORY.md"
    path.write_text("## Preferences\n- Likes oolong tea\n")
    return str(path)


def _damaged_settings(tmp: Path, command: str) -> list[str]:
    """Cursor's project settings file holding something that is not JSON."""
    settings = tmp / ".cursor" / "mcp.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text("{not json")
    return [command, "cursor", "--project"]


def _git(ws: Path, tmp: Path) -> list[str]:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ["git", "setup"]


CASES: dict[str, Case] = {
    "init": Case(
        lambda ws, tmp: ["init", str(tmp / "new")],
        lambda ws, tmp: ["init", str(ws / "memory.md")],
        env={"MEMCLI_INDEX_ONNX": "false"},  # no ONNX export (torch): test_first_run's
    ),
    "add": Case(lambda ws, tmp: ["add", "Likes green tea"], lambda ws, tmp: ["add", "   "]),
    "list": Case(lambda ws, tmp: ["list"]),
    "get": Case(lambda ws, tmp: ["get", "m8f3a2c1"], lambda ws, tmp: ["get", "mnothere"]),
    "edit": Case(
        lambda ws, tmp: ["edit", "m8f3a2c1", "-i", "0.9"],
        lambda ws, tmp: ["edit", "mnothere", "-i", "0.9"],
    ),
    "forget": Case(lambda ws, tmp: ["forget", "m8f3a2c1"], lambda ws, tmp: ["forget", "mnothere"]),
    "open": Case(
        lambda ws, tmp: ["open", "learnings.md"], lambda ws, tmp: ["open", "archive.md"], env=EDITOR
    ),
    "restore": Case(
        lambda ws, tmp: ["restore", "m8f3a2c1"],
        lambda ws, tmp: ["restore", "m2a7c9e0"],  # not archived
        before=[["forget", "m8f3a2c1"]],
    ),
    "stats": Case(lambda ws, tmp: ["stats"]),
    "search": Case(
        lambda ws, tmp: ["search", "pytest", "--mode", "keyword"], lambda ws, tmp: ["search", "-"]
    ),
    "index": Case(lambda ws, tmp: ["index"]),
    "inject": Case(
        lambda ws, tmp: ["inject", "-q", "python tests", "--max-tokens", "200"],
        lambda ws, tmp: ["inject", "--context-file", str(tmp / "missing.txt")],
    ),
    "watch": Case(lambda ws, tmp: ["watch", "--stop"], lambda ws, tmp: ["watch", "--status"]),
    "extract": Case(
        lambda ws, tmp: ["extract", "--messages", _transcript(ws, tmp), "--dry-run"],
        lambda ws, tmp: ["extract", "--messages", str(tmp / "missing.json")],
        empty=True,
    ),
    "compress": Case(lambda ws, tmp: ["compress", "--dry-run"], empty=True),
    "reflect": Case(lambda ws, tmp: ["reflect", "--dry-run"]),
    "log": Case(lambda ws, tmp: ["log", "Fixed the flaky build"], lambda ws, tmp: ["log", " "]),
    "history": Case(lambda ws, tmp: ["history"]),
    "undo": Case(
        lambda ws, tmp: ["undo", "--dry-run"],
        lambda ws, tmp: ["undo"],
        before=[["add", "Likes jasmine tea"]],
    ),
    "doctor": Case(lambda ws, tmp: ["doctor"]),
    "export": Case(lambda ws, tmp: ["export", "--format", "mem0"]),
    "import": Case(
        lambda ws, tmp: ["import", _import_file(ws, tmp), "--dry-run"],
        lambda ws, tmp: ["import", str(tmp / "missing.md")],
    ),
    "config list": Case(lambda ws, tmp: ["config", "list"]),
    "config get": Case(lambda ws, tmp: ["config", "get", "search.limit"]),
    "config set": Case(lambda ws, tmp: ["config", "set", "search.limit", "7"]),
    "config unset": Case(lambda ws, tmp: ["config", "unset", "search.limit"]),
    "git setup": Case(_git),
    "install": Case(
        lambda ws, tmp: ["install", "cursor", "--project", "--dry-run"],
        lambda ws, tmp: _damaged_settings(tmp, "install"),
    ),
    "uninstall": Case(
        lambda ws, tmp: ["uninstall", "cursor", "--project", "--dry-run"],
        lambda ws, tmp: _damaged_settings(tmp, "uninstall"),
    ),
    "trust": Case(lambda ws, tmp: ["trust"], lambda ws, tmp: ["trust", str(tmp / "missing")]),
    "review confirm": Case(
        lambda ws, tmp: ["review", "confirm", "--all"],
        lambda ws, tmp: ["review", "confirm", "mnothere"],
    ),
    "review reject": Case(
        lambda ws, tmp: ["review", "reject", "--all"],
        lambda ws, tmp: ["review", "reject", "mnothere"],
    ),
}

ALL = commands()
WITH_JSON = sorted(name for name in ALL if name not in SPEAKS_ANOTHER_PROTOCOL)


def run(runner: CliRunner, ws: Path, args: list[str], env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, ["-w", str(ws), *args], env=env, catch_exceptions=False)


def state(ws: Path) -> dict[str, bytes]:
    """What a command may write in the workspace: its Markdown files and memcli.toml."""
    files = snapshot(ws)
    toml = ws / "memcli.toml"
    files["memcli.toml"] = toml.read_bytes() if toml.exists() else b""
    return files


def test_every_command_has_json_and_a_case() -> None:
    assert len(ALL) >= 30, sorted(ALL)
    assert set(SPEAKS_ANOTHER_PROTOCOL) <= set(ALL)
    for name in WITH_JSON:
        options = {opt for p in ALL[name].params for opt in getattr(p, "opts", [])}
        assert "--json" in options, f"`memcli {name}` has no --json"
        assert name in CASES, f"`memcli {name}`: add a case to tests/integration/test_cli_json.py"
    assert set(CASES) == set(WITH_JSON), set(CASES) ^ set(WITH_JSON)


@pytest.fixture
def chdir_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.chdir(scratch)  # install --project writes under the current directory
    return scratch


#: commands whose case embeds the entries with the real model (torch, then its ONNX export)
REAL_MODEL = {"index", "inject", "search"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in REAL_MODEL else n for n in WITH_JSON]
)
def test_every_command_prints_one_envelope(
    name: str, runner: CliRunner, workspace: Path, chdir_tmp: Path
) -> None:
    case = CASES[name]
    if case.empty:
        from memcli.store.workspace import init_workspace

        workspace = chdir_tmp / "empty"
        init_workspace(workspace)
    for step in case.before:
        assert run(runner, workspace, step).exit_code == 0, step
    result = run(runner, workspace, [*case.args(workspace, chdir_tmp), "--json"], case.env)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)  # the whole of stdout: one JSON document
    assert list(doc) == ["ok", "command", "data"] and doc["ok"] is True
    assert doc["command"] == name
    envelope(result.stdout)


def _misuse(command: Any) -> Iterator[tuple[str, list[str], str]]:
    """(what, extra arguments, the name the message must carry): an unknown option, and
    a bad value for every option whose value the parser checks (numbers, choices)."""
    yield "unknown option", ["--no-such-option"], "--no-such-option"
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "is_flag", False):
            continue
        long = [o for o in param.opts if o.startswith("--")][0]
        type_name = type(getattr(param, "type", None)).__name__.lower()
        annotation = str(getattr(param, "annotation", "") or "")
        checked = any(
            k in (type_name + annotation).lower() for k in ("int", "float", "choice", "enum")
        )
        if checked or getattr(param, "min", None) is not None:
            yield f"bad {long}", [long, "bogus"], long


@pytest.mark.parametrize("name", WITH_JSON)
def test_misuse_exits_2_naming_the_option_and_writes_nothing(
    name: str, runner: CliRunner, workspace: Path, chdir_tmp: Path
) -> None:
    case = CASES[name]
    base = case.args(workspace, chdir_tmp)
    before = state(workspace)
    for what, extra, option in _misuse(ALL[name]):
        result = run(runner, workspace, [*base, *extra, "--json"], case.env)
        assert result.exit_code == 2, (what, result.output)
        error = failure(result.stdout)
        assert error["code"] == "usage" and error["message"].startswith(f"{option}: "), error
        if extra[-1] == "bogus":
            assert "'bogus'" in error["message"], error
        assert error["hint"] == f"`memcli {name} --help` lists the options"
        assert result.stderr.startswith(f"error: {option}: "), result.stderr
        assert "Usage:" not in result.output and "Traceback" not in result.output
    required = [p for p in ALL[name].params if p.param_type_name == "argument" and p.required]
    if required:
        result = run(runner, workspace, [*name.split(), "--json"])
        assert result.exit_code == 2, result.output
        metavar = required[0].metavar or required[0].name.upper()
        assert failure(result.stdout)["message"] == f"{metavar}: missing argument"
        assert result.stderr.startswith(f"error: {metavar}: missing argument")
    assert state(workspace) == before


@pytest.mark.parametrize("name", WITH_JSON)
def test_a_domain_error_exits_1_with_the_error_envelope(
    name: str, runner: CliRunner, workspace: Path, chdir_tmp: Path
) -> None:
    case = CASES[name]
    for step in case.before:
        assert run(runner, workspace, step).exit_code == 0, step
    if case.error is None:  # a file where the workspace should be
        target, args = workspace / "memory.md", case.args(workspace, chdir_tmp)
    else:
        target, args = workspace, case.error(workspace, chdir_tmp)
    before = state(workspace)
    result = run(runner, target, [*args, "--json"], case.env)
    assert result.exit_code == 1, result.output
    error = failure(result.stdout)
    assert error["message"] and error["code"] != "usage", error
    assert result.stderr.startswith("error: "), result.stderr
    assert error["message"] in result.stderr
    assert state(workspace) == before
