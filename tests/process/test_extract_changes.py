"""Issue 37 §10 end to end: "I left Globex last month, I'm working at Initech now." and
"Heads up: I sold the Subaru, I drive a Tesla now." update "Works at Globex" and "Drives a
Subaru" — through `memcli extract --messages` and through the Stop hook, as real
processes with the bundled model. (The entries are extract's own, so the rewrites apply at
once; what waits for review when they are a person's: tests/process/test_hook_rewrites.py.)
The rules themselves: tests/unit/test_extract_changes.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.process.test_hooks import MEMCLI, SESSION, run_hook, stop_payload
from tests.support.cli import envelope

SAID = [
    "I left Globex last month, I'm working at Initech now.",
    "Heads up: I sold the Subaru, I drive a Tesla now.",
]
MEMORY = (
    "# Memory\n\n## Facts\n"
    "- Works at Globex <!-- id=mglobex by=extract -->\n"
    "- Drives a Subaru <!-- id=msubaru by=extract -->\n"
)


def _remembered(workspace: Path) -> tuple[str, str]:
    return (
        (workspace / "memory.md").read_text(encoding="utf-8"),
        (workspace / "archive.md").read_text(encoding="utf-8"),
    )


@pytest.mark.slow  # two memcli processes that load the model
def test_a_change_said_in_passing_updates_the_entry_through_cli_and_stop_hook(
    empty_workspace: Path,
    tmp_path: Path,
    exported,  # noqa: ANN001 - the model, exported once
) -> None:
    (empty_workspace / "memory.md").write_text(MEMORY, encoding="utf-8")
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps([{"role": "user", "content": s} for s in SAID]))
    done = subprocess.run(
        [MEMCLI, "-w", str(empty_workspace), "extract", "--messages", str(transcript), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    decisions = envelope(done.stdout)["decisions"]
    assert [(d["action"], d["id"], d["stored"]) for d in decisions] == [
        ("UPDATE", "mglobex", "Works at Initech"),
        ("UPDATE", "msubaru", "Drives a Tesla"),
    ]
    memory, archive = _remembered(empty_workspace)
    assert "- Works at Initech <!-- id=mglobex" in memory and "Globex" not in memory
    assert "- Drives a Tesla <!-- id=msubaru" in memory and "Subaru" not in memory
    assert "Works at Globex" in archive and "Drives a Subaru" in archive  # superseded

    # the Stop hook, on a session that says the same again of the next change
    (empty_workspace / "memory.md").write_text(MEMORY, encoding="utf-8")
    lines = [
        {
            "type": "user",
            "sessionId": SESSION,
            "uuid": f"a1e6f0c2-1b7d-4f39-8c1e-0e5b2d4c7f0{n}",
            "message": {"role": "user", "content": said},
        }
        for n, said in enumerate(SAID)
    ]
    session = tmp_path / f"{SESSION}.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    hooked = run_hook("stop", stop_payload(empty_workspace, session))
    assert hooked.returncode == 0 and hooked.stdout == "", hooked.stderr
    memory, _ = _remembered(empty_workspace)
    assert "- Works at Initech <!-- id=mglobex" in memory and "Globex" not in memory
    assert "- Drives a Tesla <!-- id=msubaru" in memory and "Subaru" not in memory
