"""The first run (issue 29): in a fresh user cache, `init` makes the one-time model
preparation (the ONNX export) up front and says what it does and how far it is on stderr,
never in --json stdout; a hook that cannot use the embeddings yet answers from the
keyword side and says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.index.onnx_embedder import STEPS
from tests.support.env import SAMPLE

MEMCLI = [sys.executable, "-m", "memcli"]


def fresh_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env |= {
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HF_HUB_OFFLINE": "1",
        "MEMCLI_WATCH_AUTOSTART": "0",  # no watcher started behind the test's back
    }
    return env


def hook(ws: Path, prompt: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    payload = {"cwd": str(ws), "prompt": prompt, "hook_event_name": "UserPromptSubmit"}
    return subprocess.run(
        [*MEMCLI, "hook", "user-prompt-submit", "--timeout", "60"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
def test_init_prepares_the_model_and_a_first_hook_answers_from_keywords(tmp_path: Path) -> None:
    env = fresh_env(tmp_path)
    onnx = tmp_path / "cache" / "memcli" / "onnx"
    made = subprocess.run(
        [*MEMCLI, "init", str(tmp_path / "new"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["ok"] is True  # stdout: the JSON and nothing else
    lines = [line for line in made.stderr.splitlines() if "preparing the embedding model" in line]
    assert [line.split("): ", 1)[1] for line in lines] == list(STEPS)
    assert [line.split("(", 1)[1].split(")")[0] for line in lines] == [
        f"{i}/{len(STEPS)}" for i in range(1, len(STEPS) + 1)
    ]
    assert list(onnx.glob("*/model.onnx")), "init made the export"
    again = subprocess.run(
        [*MEMCLI, "init", str(tmp_path / "other"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert again.returncode == 0 and "preparing" not in again.stderr  # once

    # a workspace never indexed: the hook answers from the keyword side, says so, and
    # starts `memcli index` in the background
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws, ignore=shutil.ignore_patterns(".memcli"))
    first = hook(ws, "which test framework, pytest or unittest?", env)
    assert first.returncode == 0, first.stderr
    block = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Prefers pytest over unittest" in block
    assert "answered from the keyword side" in first.stderr
    manifest = ws / ".memcli" / "index" / "manifest.json"
    for _ in range(600):  # the background `memcli index`
        if manifest.exists():
            break
        time.sleep(0.5)
    later = hook(ws, "which test framework, pytest or unittest?", env)
    assert later.returncode == 0, later.stderr
    assert "keyword side" not in later.stderr
    assert (
        "Prefers pytest over unittest"
        in json.loads(later.stdout)["hookSpecificOutput"]["additionalContext"]
    )


# A command that loaded torch ends without the interpreter's teardown of it (4-6 s of
# silence after its last line); the exit handlers still run and the exit code is kept.
EXIT_PROBE = """
import sys, atexit, threading, time, types
class Marker:
    def __del__(self):
        sys.stderr.write("teardown\\n")
marker = Marker()
atexit.register(lambda: sys.stderr.write("exit handlers\\n"))
torch, worker = sys.argv[1:3]
if torch == "real":
    import torch
elif torch == "named":  # only the name: what fastpath.leave looks at
    sys.modules["torch"] = types.ModuleType("torch")
def work():  # at work until the main thread is done: the usual exit waits for it
    while threading.main_thread().is_alive():
        time.sleep(0.01)
if worker == "thread":
    threading.Thread(target=work).start()
sys.argv = ["memcli", *sys.argv[3:]]
from memcli.surfaces.cli.fastpath import main
main()
"""


def exit_probe(torch: str, worker: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", EXIT_PROBE, torch, worker, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("torch", "worker", "args", "code", "teardown"),
    [
        ("named", "none", ["--version"], 0, False),
        ("named", "none", ["-w", "{missing}", "list"], 1, False),  # an error's code kept
        ("none", "none", ["--version"], 0, True),
        ("named", "thread", ["--version"], 0, True),
        ("named", "none", ["--no-such-option"], 2, False),  # a usage error's code kept
    ],
)
def test_a_command_that_loaded_torch_skips_the_teardown(
    tmp_path: Path, torch: str, worker: str, args: list[str], code: int, teardown: bool
) -> None:
    args = [a.format(missing=tmp_path / "missing") for a in args]
    done = exit_probe(torch, worker, *args)
    assert done.returncode == code, done.stderr
    assert "exit handlers" in done.stderr  # atexit runs either way
    assert ("teardown" in done.stderr) is teardown, done.stderr
    if args == ["--version"]:
        assert done.stdout.startswith("memcli "), "the output is flushed before the exit"


@pytest.mark.slow
def test_with_torch_imported_for_real(tmp_path: Path) -> None:
    done = exit_probe("real", "none", "--version")
    assert done.returncode == 0 and done.stdout.startswith("memcli "), done.stderr
    assert "exit handlers" in done.stderr and "teardown" not in done.stderr


# `install` and `watch --background` make the preparation up front too, before they are
# done, its steps on stderr, --json stdout clean (the export itself: the init test above;
# install's indexing of the workspace is recorded, not run: it would make the export)
@pytest.mark.parametrize(
    "command",
    [["install", "claude-code", "--project", "--json"], ["watch", "--background", "--json"]],
)
def test_install_and_a_background_watch_prepare_up_front(
    runner: CliRunner, empty_workspace: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    from memcli.services.memory import Memory
    from memcli.services.runtime import Runtime
    from memcli.surfaces.cli.app import app
    from memcli.surfaces.daemon import service

    prepared: list[str] = []

    def prepare(self: Runtime, report=None) -> str:  # noqa: ANN001 - onnx_embedder.Report
        for number, what in enumerate(STEPS, 1):
            report(number, len(STEPS), what)
        prepared.append(str(self.store.root))
        return "prepared"

    monkeypatch.setattr(Runtime, "prepare_model", prepare)
    monkeypatch.setattr(Memory, "index", lambda self, **_: prepared.append("indexed"))
    monkeypatch.setattr(service, "start_background", lambda root: {"pid": 0, "log": "-"})
    monkeypatch.chdir(empty_workspace)  # --project writes .claude/ here
    done = runner.invoke(app, ["-w", str(empty_workspace), *command])
    assert done.exit_code == 0, done.stderr
    json.loads(done.stdout)  # stdout: the JSON and nothing else
    lines = [line for line in done.stderr.splitlines() if "preparing the embedding model" in line]
    assert [line.split("): ", 1)[1] for line in lines] == list(STEPS)
    indexed = ["indexed"] if command[0] == "install" else []  # the watcher indexes itself
    assert prepared == [str(empty_workspace), *indexed]


def test_install_shows_what_it_wrote_before_the_preparation(
    runner: CliRunner, empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.services.memory import Memory
    from memcli.services.runtime import Runtime
    from memcli.surfaces.cli.app import app

    def prepare(self: Runtime, report=None) -> str:  # noqa: ANN001 - onnx_embedder.Report
        report(1, len(STEPS), STEPS[0])
        return "prepared"

    monkeypatch.setattr(Runtime, "prepare_model", prepare)
    monkeypatch.setattr(Memory, "index", lambda self, **_: None)
    monkeypatch.chdir(empty_workspace)
    done = runner.invoke(app, ["-w", str(empty_workspace), "install", "claude-code", "--project"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()  # stdout and stderr as a terminal shows them
    wrote = [i for i, line in enumerate(lines) if "added the UserPromptSubmit hook" in line]
    preparing = [i for i, line in enumerate(lines) if "preparing the embedding model" in line]
    assert wrote and preparing and wrote[0] < preparing[0], done.output
