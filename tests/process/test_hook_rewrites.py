"""The Stop hook's extraction (`memcli hook stop`, run as Claude Code runs it) rewrites an
entry the person pinned as the program's: its pin and importance wait in `memcli review`
(DESIGN §4; the CLI's cases: tests/integration/test_agent_rewrites.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.services.memory import Memory
from tests.process.test_hooks import SESSION, run_hook, stop_payload


@pytest.mark.slow  # a hook process that loads the model
def test_the_stop_hook_holds_the_standing_of_an_entry_it_rewrites(
    empty_workspace: Path, tmp_path: Path, exported  # noqa: ANN001 - the model, exported once
) -> None:
    memory = empty_workspace / "memory.md"
    memory.write_text(
        memory.read_text().replace(
            "## Facts\n", "## Facts\n- Lives in Munich <!-- id=mmuc imp=1 pin=true -->\n"
        )
    )
    line = {
        "type": "user",
        "sessionId": SESSION,
        "uuid": "a1e6f0c2-1b7d-4f39-8c1e-0e5b2d4c7f01",
        "message": {"role": "user", "content": "I moved, I live in Leipzig now, not Munich"},
    }
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text(json.dumps(line) + "\n")
    done = run_hook("stop", stop_payload(empty_workspace, transcript))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    entry = Memory(empty_workspace).get("mmuc").entry
    assert entry.text == "Lives in Leipzig" and entry.meta["by"] == "extract"
    (old,) = Memory(empty_workspace).store.load("archive.md").entries()
    assert old.text == "Lives in Munich" and old.meta["replaced_by"] == "mmuc"
    assert not entry.pinned and entry.meta["review"] == f"imp:1,pin,rewrite:{old.id}"
