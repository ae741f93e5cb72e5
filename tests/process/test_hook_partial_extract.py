"""A Stop whose extraction fails after writing some entries says which were written and
that the rest was not (never "nothing was added"); one that fails before any write
still says nothing was added. The real hook code in this process; the second write
of the extraction fails."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

SESSION = "5b0d8c3e-7a41-4c6f-9f0e-2d7e5c1a9b10"
SAID = (
    "Remember that the billing service deploys only on Tuesdays.",
    "Remember that our staging cluster is called kestrel.",
    "Remember that invoices are archived after seven years.",
)
LINES = [
    {"type": "user", "sessionId": SESSION, "message": {"role": "user", "content": text}}
    for text in SAID
]


def _stop(workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    from memcli.surfaces import hooks

    transcript = tmp_path / f"{SESSION}.jsonl"
    if not transcript.exists():
        transcript.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(workspace),
        "hook_event_name": "Stop",
    }
    capsys.readouterr()
    assert hooks.run(str(workspace), ["stop"], json.dumps(payload)) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


def _failing_write(monkeypatch: pytest.MonkeyPatch, at: int) -> list[str]:
    """Make the `at`-th entry the extraction adds fail (disk full); the ids written."""
    from memcli.services import entries

    real = entries.add
    written: list[str] = []

    def add(rt, request):  # noqa: ANN001, ANN202
        if len(written) + 1 == at:
            raise OSError(28, "No space left on device")
        result = real(rt, request)
        written.append(result.entry.id)
        return result

    monkeypatch.setattr(entries, "add", add)
    return written


@pytest.mark.slow
def test_a_stop_failing_at_the_second_write_names_the_first(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    written = _failing_write(monkeypatch, at=2)
    err = _stop(workspace, tmp_path, capsys)
    assert len(written) == 1, err
    assert "nothing was added" not in err
    assert "No space left on device" in err
    assert f"added 1 ({written[0]})" in err
    assert "the rest of this part of the session was not written" in err
    assert re.search(rf"- .*<!-- id={written[0]}\b", (workspace / "memory.md").read_text())
    monkeypatch.undo()  # the next Stop reads the same part again and adds the rest once
    again = _stop(workspace, tmp_path, capsys)
    assert "ADD" in again and "nothing was added" not in again, again
    assert (workspace / "memory.md").read_text().count(f"id={written[0]}") == 1


@pytest.mark.slow
def test_a_stop_failing_at_the_first_write_says_nothing_was_added(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    memory = (workspace / "memory.md").read_bytes()
    written = _failing_write(monkeypatch, at=1)
    err = _stop(workspace, tmp_path, capsys)
    assert written == [] and "nothing was added" in err, err
    assert (workspace / "memory.md").read_bytes() == memory


@pytest.mark.slow
def test_a_stop_failing_after_its_writes_names_them_all(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every entry written, then the read position cannot be saved."""
    from memcli.surfaces.hook_positions import Positions

    written = _failing_write(monkeypatch, at=0)  # never fails: records the ids

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Positions, "record", refuse)
    err = _stop(workspace, tmp_path, capsys)
    assert len(written) == len(SAID), err
    assert "nothing was added" not in err
    assert f"added {len(SAID)} ({' '.join(written)})" in err, err


TIMED_OUT = """
import sys, time
from memcli.services.memory import Memory
def extract(self, messages, source=None, dry_run=False):
    self.add("The billing service deploys only on Tuesdays.")  # written, then stuck
    time.sleep(60)
Memory.extract = extract
from memcli.surfaces import hooks
hooks.run(sys.argv[1], ["stop", "--timeout", sys.argv[3]], sys.argv[2])
"""


@pytest.mark.slow
def test_a_stop_cut_short_by_its_time_limit_does_not_say_nothing_was_added(
    workspace: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from tests.support.round3_recovery import env

    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(transcript)})
    done = subprocess.run(
        [sys.executable, "-c", TIMED_OUT, str(workspace), payload, "4"],
        capture_output=True, text=True, timeout=120, env=env(),
    )
    assert done.returncode == 0, done.stderr
    assert "no answer within 4 s" in done.stderr, done.stderr
    assert "nothing was added" not in done.stderr
    assert "read again at the next Stop" in done.stderr
