"""`memcli hook EVENT` run as Claude Code runs it, with its hook payloads and transcript
format: the inject block for a prompt, extraction from the transcript once per position,
failures that never block a prompt (exit 0, nothing on stdout, one line on stderr), and
a prompt served by a running watcher."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.env import FIXTURES

SESSION = "5b0d8c3e-7a41-4c6f-9f0e-2d7e5c1a9b10"
MEMCLI = str(Path(sys.executable).parent / "memcli")


@pytest.fixture
def indexed(workspace: Path) -> Path:
    """The sample workspace, indexed (and the one-time ONNX export of this test session
    made), as it is once memcli has run there: a hook's time limit is for answering."""
    from memcli.services.memory import Memory

    Memory(workspace, notify=lambda m: None).index()
    return workspace


def run_hook(event: str, payload: dict, *args: str, env: dict | None = None, cwd=None):  # noqa: ANN001, ANN201
    return subprocess.run(
        [MEMCLI, "hook", event, *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        env=env or dict(os.environ),
        cwd=cwd,
    )


def prompt_payload(ws: Path, prompt: str, transcript: Path | None = None) -> dict:
    return {
        "session_id": SESSION,
        "transcript_path": str(transcript or ws / "none.jsonl"),
        "cwd": str(ws),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def stop_payload(ws: Path, transcript: Path) -> dict:
    return {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(ws),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }


# ------------------------------------------------------------------ whole processes


@pytest.mark.slow
def test_prompt_gets_a_block_and_failures_never_block(indexed: Path, tmp_path: Path) -> None:
    workspace = indexed
    result = run_hook(
        "user-prompt-submit", prompt_payload(workspace, "How should I write Python tests?")
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "Prefers pytest" in out["additionalContext"]
    assert out["additionalContext"].startswith("<memory>")

    start = run_hook("session-start", {**prompt_payload(workspace, ""), "source": "startup"})
    assert start.returncode == 0 and "SessionStart" in start.stdout

    empty = tmp_path / "nothing"
    empty.mkdir()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "memory.md").write_bytes(b"\xff\xfe not text\n- x\n")
    failures = {
        "no workspace": run_hook("user-prompt-submit", prompt_payload(empty, "hi")),
        "broken file": run_hook("user-prompt-submit", prompt_payload(broken, "hi")),
        "not json": subprocess.run(
            [MEMCLI, "hook", "user-prompt-submit"], input="{oops", capture_output=True, text=True
        ),
        "timeout": run_hook(
            "user-prompt-submit", prompt_payload(workspace, "tests?"), "--timeout", "0.001"
        ),
    }
    for what, failed in failures.items():
        assert failed.returncode == 0, what
        assert failed.stdout == "", what
        assert len(failed.stderr.strip().splitlines()) == 1, (what, failed.stderr)
        assert "nothing was added" in failed.stderr, what
    assert "not valid UTF-8" in failures["broken file"].stderr
    assert "no memcli workspace" in failures["no workspace"].stderr
    usage = run_hook("bogus", {})
    assert usage.returncode == 1 and "unknown event" in usage.stderr  # never 2: that blocks


@pytest.mark.slow
def test_a_task_prompt_gets_each_things_lessons_and_hi_no_correction(workspace: Path) -> None:
    """Issue 38's prompt through the real hook and model: "Add an index to the invoices
    table and write a migration for it" names a table and a migration, and the block holds
    the lesson about each ("Run database migrations on staging first", "The billing
    database has 1.2 TB of data") and the pinned editor preference, not the correction
    about staging's Postgres version; the prompt "hi" gets the pinned entry, no
    correction."""
    from memcli.services.memory import Memory

    mem = Memory(workspace, notify=lambda m: None)
    staging = mem.add("Run database migrations on staging first", type="lesson", by="person")
    billing = mem.add("The billing database has 1.2 TB of data", type="fact", by="person")
    editor = mem.add("Uses neovim as the editor", type="preference", pin=True, by="person")
    mem.index()
    correction = "The staging database is Postgres 16"  # the sample's correction
    assert correction in (workspace / "memory.md").read_text()

    prompt = "Add an index to the invoices table and write a migration for it"
    slack = ("--timeout", "60")  # what goes in is tested here, not how fast (a loaded CI)
    result = run_hook("user-prompt-submit", prompt_payload(workspace, prompt), *slack)
    assert result.returncode == 0 and result.stdout, result.stderr
    block = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    for added in (staging, billing, editor):
        assert added.entry.text in block, block
    assert correction not in block

    hi = run_hook("user-prompt-submit", prompt_payload(workspace, "hi"), *slack)
    assert hi.returncode == 0 and hi.stdout, hi.stderr
    block = json.loads(hi.stdout)["hookSpecificOutput"]["additionalContext"]
    assert editor.entry.text in block and correction not in block and "## Corrections" not in block


@pytest.mark.slow  # a second or more: the whole suite runs it, the fast tier stays under a minute
def test_stop_extracts_each_part_of_a_transcript_once(indexed: Path, tmp_path: Path) -> None:
    workspace = indexed
    transcript = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(FIXTURES / "claude_code_session.jsonl", transcript)
    memory = workspace / "memory.md"

    first = run_hook("stop", stop_payload(workspace, transcript))
    assert first.returncode == 0 and first.stdout == "", first.stderr
    assert "nothing was added" not in first.stderr
    text = memory.read_text()
    assert "Prefers pytest fixtures over setUp methods" in text and f"src={SESSION}" in text
    assert "hunter2" not in text

    again = run_hook("stop", stop_payload(workspace, transcript))
    assert again.returncode == 0 and "nothing new" in again.stderr
    assert memory.read_text() == text  # the second Stop on the same transcript adds nothing

    with transcript.open("a") as handle:  # the session goes on; a line still being written
        handle.write((FIXTURES / "claude_code_session_more.jsonl").read_text())
        handle.write('{"type":"user","message":{"role":"user","content":"Remember that')
    compact = run_hook("pre-compact", {**stop_payload(workspace, transcript), "trigger": "auto"})
    assert compact.returncode == 0, compact.stderr
    after = memory.read_text()
    assert "The staging database runs on Postgres 16" in after or "Postgres 16" in after
    assert "I prefer YAML" not in after and "Prefers YAML" not in after  # a subagent's words
    assert after.count(f"src={SESSION}") >= 2
    state = json.loads((workspace / ".memcli" / "hooks.json").read_text())
    assert state["sessions"][SESSION]["offset"] == len(transcript.read_bytes()) - len(
        '{"type":"user","message":{"role":"user","content":"Remember that'
    )
    assert run_hook("stop", stop_payload(workspace, transcript)).stderr.count("nothing new") == 1
    assert memory.read_text() == after


# ------------------------------------------------------------------ with a watcher


@pytest.mark.slow
def test_prompt_hook_goes_through_the_watcher(indexed: Path) -> None:
    workspace = indexed
    from tests.support.processes import start_watch

    proc = start_watch(workspace)
    try:
        status = [MEMCLI, "-w", str(workspace), "watch", "--status", "--json"]
        before = json.loads(subprocess.run(status, capture_output=True, text=True).stdout)["data"]
        payload = prompt_payload(workspace, "How to optimize my Next.js app?")
        served = run_hook("user-prompt-submit", payload)
        after = json.loads(subprocess.run(status, capture_output=True, text=True).stdout)["data"]
        assert served.returncode == 0, served.stderr
        assert after["requests"] == before["requests"] + 2  # the hook and this status call
        code = (
            "import sys\nfrom memcli.surfaces import hooks\n"
            "code = hooks.run(None, ['user-prompt-submit'], sys.argv[1])\n"
            "mods = sorted({m.split('.')[0] for m in sys.modules})\n"
            "import json\nsys.stdout.write('\\nMODULES=' + json.dumps(mods))"
        )
        light = subprocess.run(
            [sys.executable, "-c", code, json.dumps(payload)], capture_output=True, text=True
        )
        assert light.returncode == 0, light.stderr
        served_out, modules = light.stdout.split("\nMODULES=")
        assert served_out == served.stdout
        heavy = {"typer", "torch", "numpy", "pydantic", "re", "json", "pathlib"}
        assert not set(json.loads(modules)) & heavy  # builtin modules only, as a served search
        in_process = run_hook(
            "user-prompt-submit", payload, env=dict(os.environ, MEMCLI_NO_DAEMON="1")
        )
        assert served.stdout == in_process.stdout and served.stdout
        proc.send_signal(signal.SIGKILL)  # a dead daemon: its socket stays behind
        proc.wait(timeout=30)
        dead = run_hook("user-prompt-submit", payload)
        assert dead.returncode == 0 and dead.stdout == served.stdout  # answered in-process
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)


@pytest.mark.slow
def test_a_stop_and_a_pre_compact_at_once_read_each_part_once(
    indexed: Path, tmp_path: Path
) -> None:
    """Two hooks of one session at the same moment (Claude Code may compact while a Stop
    runs): the lock makes one of them read the new lines and the other find nothing new."""
    workspace = indexed
    transcript = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(FIXTURES / "claude_code_session.jsonl", transcript)
    procs = [
        subprocess.Popen(
            [MEMCLI, "hook", event],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for event in ("stop", "pre-compact")
    ]
    for proc in procs:
        proc.stdin.write(json.dumps(stop_payload(workspace, transcript)))
        proc.stdin.close()
    reports = []
    for proc in procs:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout.read() == ""
        reports.append(proc.stderr.read())
    size = len(transcript.read_bytes())
    assert sorted("nothing new" in r for r in reports) == [False, True], reports
    assert sum(f"from {size} new bytes" in r for r in reports) == 1, reports
    assert (workspace / "memory.md").read_text().count("Prefers pytest fixtures over setUp") == 1
