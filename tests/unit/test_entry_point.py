"""The console script's `main` (memcli.surfaces.cli.fastpath): garbage collection is off
while a command is answered without Typer (a served command, an in-process search, a
prompt hook: one answer, then the process ends) and on for the Typer app and the hooks
that extract, which may run for long."""

from __future__ import annotations

import gc
import sys

import pytest

from memcli.surfaces.cli import fastpath


class Exited(Exception):
    """os._exit, which a test cannot let happen."""


@pytest.fixture(autouse=True)
def collector_back_on():  # noqa: ANN201 - the test leaves the collector as it found it
    yield
    gc.enable()


@pytest.mark.parametrize(
    ("argv", "answered", "collecting"),
    [
        (["search", "deploys"], 0, False),  # served, or searched in-process
        (["-w", "/tmp/x", "inject", "-q", "deploys"], 0, False),
        (["hook", "stop"], 0, True),  # a hook that extracts may run for long
        (["hook", "pre-compact"], 0, True),
        (["hook", "user-prompt-submit"], 0, False),  # a read, served or in-process
        (["-w", "/tmp/x", "hook", "session-start", "--timeout", "5"], 0, False),
        (["add", "a fact"], None, True),  # the Typer app
        (["watch"], None, True),
    ],
)
def test_the_collector_is_off_only_while_a_command_is_answered_without_typer(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], answered: int | None, collecting: bool
) -> None:
    seen: list[bool] = []

    def answer(env: fastpath.Env) -> int | None:
        return answered

    def exit_now(code: int) -> None:
        seen.append(gc.isenabled())
        raise Exited

    def typer(env: fastpath.Env) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(sys, "argv", ["memcli", *argv])
    monkeypatch.setattr(fastpath, "answered", answer)
    monkeypatch.setattr(fastpath.os, "_exit", exit_now)
    monkeypatch.setattr(fastpath, "typer_main", typer)
    # leave() ends with os._exit when torch is loaded (as after another test in this
    # worker): here it always exits as without torch
    monkeypatch.setattr(fastpath, "leave", lambda code: sys.exit(code))
    with pytest.raises(Exited if answered is not None else SystemExit):
        fastpath.main()
    assert seen == [collecting]
