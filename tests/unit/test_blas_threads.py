"""One BLAS thread for a one-off read (memcli.surfaces.blas): set for the reads the entry
point answers in-process when nobody set it, never for other commands nor over a value
given, and not passed on to the watcher a hook starts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memcli.surfaces import blas
from memcli.surfaces.daemon import autostart


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(blas.VARIABLE, raising=False)
    monkeypatch.setattr(blas, "_set_here", False)
    yield
    os.environ.pop(blas.VARIABLE, None)  # monkeypatch restores what it saw


@pytest.mark.parametrize("command", ["search", "inject", "get", "hook"])
def test_a_read_gets_one_thread(unset: None, command: str) -> None:
    blas.one_thread_for(command)
    assert os.environ[blas.VARIABLE] == "1"
    assert blas.VARIABLE not in blas.for_children(os.environ)


@pytest.mark.parametrize("command", ["watch", "mcp", "index", "add", None])
def test_other_commands_keep_their_threads(unset: None, command: str | None) -> None:
    blas.one_thread_for(command)
    assert blas.VARIABLE not in os.environ


def test_a_value_given_is_kept_and_passed_on(unset: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(blas.VARIABLE, "2")
    blas.one_thread_for("search")
    assert os.environ[blas.VARIABLE] == "2"
    assert blas.for_children(os.environ)[blas.VARIABLE] == "2"


def test_the_watcher_a_read_starts_has_its_threads(
    unset: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".memcli").mkdir()
    seen: list[dict[str, str]] = []

    class Started:
        pid = 4242

        def __init__(self, args: list[str], **kwargs: object) -> None:
            seen.append(kwargs["env"])  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess, "Popen", Started)
    blas.one_thread_for("hook")
    assert autostart.spawn(str(tmp_path), 30, os.environ) == 4242
    assert blas.VARIABLE not in seen[0] and "PATH" in seen[0]


def test_the_entry_point_sets_it_before_a_read_in_process(
    unset: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.surfaces.cli import fastpath, quick
    from memcli.surfaces.cli.env import Env

    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    seen: list[str | None] = []
    monkeypatch.setattr(quick, "run", lambda env, call: seen.append(os.environ.get(blas.VARIABLE)) or 0)
    assert fastpath.answered(Env(["-w", str(tmp_path), "search", "deploys"])) == 0
    assert seen == ["1"]
