"""CLI conventions people expect (issue 20) on the real entry point in child processes: the
quick start verbatim in a fresh shell, `init PATH` saying how to make it the default,
exit code 2 for bad search values, one message for an unknown type on the quick and
Typer paths, --version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app


def slow(*values: object) -> object:
    """A parameter set of the whole suite only (child processes cost ≈ 1 s each)."""
    return pytest.param(*values, marks=pytest.mark.slow)


def fresh_env(home: Path) -> dict[str, str]:
    """A fresh shell's environment: HOME only, no XDG or MEMCLI variables."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "MEMCLI_NO_DAEMON": "1",
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],  # the session's ONNX export
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # this checkout's memcli
    }


def memcli(
    *args: str, env: dict[str, str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        env=env,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


# ----------------------------------------------------------------- 1. the quick start


@pytest.mark.slow
def test_quick_start_works_verbatim_in_a_fresh_shell(tmp_path: Path) -> None:
    home = tmp_path / "home"
    elsewhere = tmp_path / "project"
    home.mkdir()
    elsewhere.mkdir()
    env = fresh_env(home)
    init = memcli("init", env=env, cwd=elsewhere)
    assert init.returncode == 0, init.stderr
    default = home / ".local" / "share" / "memcli"
    assert (default / "memory.md").is_file() and not (elsewhere / "memory.md").exists()
    added = memcli(
        "add", "Prefers pytest over unittest", "--type", "preference", "-i", "0.8",
        "-k", "python,testing", env=env, cwd=home,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "to memory.md (preference)" in added.stdout
    found = memcli("search", "How should I write Python tests?", "--explain", env=env, cwd=home)
    assert found.returncode == 0, found.stderr
    assert "Prefers pytest over unittest" in found.stdout
    block = memcli(
        "inject", "-q", "How should I write Python tests?", "--max-tokens", "500",
        env=env, cwd=elsewhere,
    )  # fmt: skip
    assert block.returncode == 0 and "Prefers pytest" in block.stdout


@pytest.mark.slow  # seconds: the whole suite runs it, the fast tier stays under a minute
def test_init_path_says_how_to_make_it_the_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = fresh_env(home)
    target = home / "notes" / "memory"
    init = memcli("init", str(target), env=env, cwd=home)
    assert init.returncode == 0, init.stderr
    assert (target / "memory.md").is_file()
    assert f"export MEMCLI_WORKSPACE={target}" in init.stderr
    env["MEMCLI_WORKSPACE"] = str(target)
    assert memcli("add", "Lives in Lisbon", env=env, cwd=home).returncode == 0
    listed = memcli("list", env=env, cwd=tmp_path)
    assert listed.returncode == 0 and "Lives in Lisbon" in listed.stdout
    again = memcli("init", env=env, cwd=home)  # MEMCLI_WORKSPACE: that one, no advice
    assert again.returncode == 0 and str(target) in again.stdout
    assert "export" not in again.stderr


@pytest.mark.parametrize(
    "args, option",
    [
        (["--limit", "0"], "--limit"),
        (["--mode", "bogus"], "--mode"),
        (["--since", "garbage"], "--since"),
        (["--until", "soon"], "--until"),
    ],
)
def test_bad_search_values_exit_2_on_the_real_entry_point(
    tmp_path: Path, workspace: Path, args: list[str], option: str
) -> None:
    env = fresh_env(tmp_path)  # the quick path (no daemon, no Typer) or Typer: both 2
    result = memcli("-w", str(workspace), "search", "tests", *args, env=env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert option in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["--type", "skil"], "error: --type: unknown type 'skil' (did you mean skill?)"),
        (["--limit", "0"], "error: --limit: '0' is not valid"),
        slow(["--mode", "bogus", "--json"], "error: --mode: 'bogus' is not one of"),
        slow(["--since", "garbage"], "error: --since: 'garbage' is not a date"),
        slow(["--no-such-option"], "error: --no-such-option: no such option"),
        slow(["--limit"], "error: --limit: needs a value"),
    ],
)
def test_usage_errors_read_the_same_on_quick_and_typer_paths(
    tmp_path: Path, workspace: Path, args: list[str], message: str
) -> None:
    """One style for every usage error, whichever path parses the command line: the
    quick path (no Typer) and the Typer app print the same bytes and exit 2."""
    env = fresh_env(tmp_path)
    full = ("-w", str(workspace), "search", "tests", *args)
    quick = memcli(*full, env=env, cwd=tmp_path)
    typer_path = memcli(*full, env={**env, "MEMCLI_NO_QUICK": "1"}, cwd=tmp_path)
    assert quick.returncode == typer_path.returncode == 2, quick.stderr
    assert (quick.stdout, quick.stderr) == (typer_path.stdout, typer_path.stderr)
    assert quick.stderr.startswith(message), quick.stderr
    assert "Usage:" not in quick.stderr and "\n  hint: " in quick.stderr
    if "--json" in args:
        assert json.loads(quick.stdout)["error"]["code"] == "usage"
    else:
        assert quick.stdout == ""


def test_version(runner: CliRunner, tmp_path: Path) -> None:
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"memcli {version('memcli')}\n"
    real = memcli("--version", env=fresh_env(tmp_path), cwd=tmp_path)
    assert real.returncode == 0 and real.stdout == result.stdout
