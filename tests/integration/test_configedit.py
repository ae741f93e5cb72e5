"""memcli config list / get / set (issue 20): settings in effect, edits that keep the
file's comments, values checked before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app
from tests.support.cli import envelope


def test_config_list_get_set(workspace: Path, runner: CliRunner, tmp_path: Path) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text("# my settings\n[search]\nlimit = 7  # fewer hits\n")

    def run(*args: str):  # noqa: ANN202
        return runner.invoke(app, ["-w", str(workspace), "config", *args])

    listed = envelope(run("list", "--json").stdout)
    assert listed["search.limit"] == 7 and "inject.max_tokens" in listed
    alone = run()  # `memcli config` alone: the settings, as `config list` prints them
    assert alone.exit_code == 0 and alone.stdout == run("list").stdout
    assert "search.limit = 7" in alone.stdout
    assert run("get", "search.limit").stdout.strip() == "7"
    assert run("set", "search.limit", "12").exit_code == 0
    text = toml.read_text()
    assert "# my settings" in text and "limit = 12" in text and "# fewer hits" in text
    assert run("get", "search.limit").stdout.strip() == "12"
    assert run("set", "forget.scope", "all").exit_code == 0
    assert run("get", "forget.scope").stdout.strip() == "all"
    before = toml.read_bytes()
    bad_value = run("set", "search.limit", "lots")
    assert bad_value.exit_code == 2 and "limit" in bad_value.output
    bad_scope = run("set", "forget.scope", "everything")
    assert bad_scope.exit_code == 2 and "scope" in bad_scope.output
    assert toml.read_bytes() == before  # nothing written
    unknown = run("set", "search.limmit", "3")
    assert unknown.exit_code == 2 and "limit" in unknown.output  # the known keys listed
    assert run("get", "bogus.key").exit_code == 2
    user = run("set", "inject.max_tokens", "900", "--user")
    assert user.exit_code == 0, user.output
    assert (
        (tmp_path / "xdg-config" / "memcli" / "config.toml")
        .read_text()
        .strip()
        .endswith("max_tokens = 900")
    )
    assert run("get", "inject.max_tokens").stdout.strip() == "900"  # the workspace sets none
    assert run("set", "inject.max_tokens", "1500").exit_code == 0
    assert run("get", "inject.max_tokens").stdout.strip() == "1500"  # the workspace wins


@pytest.mark.slow  # embeds with the real model (torch, then its ONNX export)
def test_config_set_unset_and_a_bad_value_already_in_the_file(
    workspace: Path, runner: CliRunner
) -> None:
    toml = workspace / "memcli.toml"
    toml.write_text("# mine\n[search]\nmode = 'hybrid'\n")

    def run(*args: str):  # noqa: ANN202
        return runner.invoke(app, ["-w", str(workspace), *args])

    before = toml.read_bytes()
    zero = run("config", "set", "search.limit", "0")
    assert zero.exit_code == 2 and "search.limit must be at least 1" in zero.output
    assert toml.read_bytes() == before
    assert run("config", "set", "index.onnx", "True").exit_code == 0
    assert "onnx = true" in toml.read_text()  # a real boolean, not the string "True"
    unset = run("config", "unset", "index.onnx")
    assert unset.exit_code == 0 and "onnx" not in toml.read_text()
    assert "# mine" in toml.read_text()
    assert "not set" in run("config", "unset", "index.onnx").output
    # written by hand: every command says so (file:line) and goes on with the default
    toml.write_text("[search]\nmode = 'hybrid'\nlimit = 0\n")
    found = run("search", "pytest", "--mode", "keyword", "--json")
    assert found.exit_code == 0, found.output
    assert f"{toml}:3: search.limit = 0 must be at least 1" in found.stderr
    assert "--limit" not in found.output
    doctor = run("doctor", "--json")
    assert doctor.exit_code == 1
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["data"]["checks"]}
    assert not checks["config"]["ok"] and f"{toml}:3" in checks["config"]["detail"]
    assert run("config", "unset", "search.limit").exit_code == 0
    assert envelope(run("doctor", "--json").stdout)["checks"][0]["ok"]


@pytest.mark.parametrize("command", [["set", "search.limit", "5"], ["unset", "search.limit"]])
def test_config_set_and_unset_on_a_file_that_is_not_toml_name_it(
    workspace: Path, runner: CliRunner, command: list[str]
) -> None:
    """A memcli.toml that is no TOML (a clone's, or a trusted link to ~/.bashrc): one
    error naming the file (tomlkit's traceback before), the file unchanged."""
    toml = workspace / "memcli.toml"
    toml.write_text("# ~/.bashrc\nexport EDITOR=vi\n")
    done = runner.invoke(app, ["-w", str(workspace), "config", *command])
    assert done.exit_code == 1 and done.exception is None or isinstance(
        done.exception, SystemExit
    ), done.exception
    assert f"{toml}:" in done.output and "fix the TOML syntax" in done.output, done.output
    assert toml.read_text() == "# ~/.bashrc\nexport EDITOR=vi\n"
