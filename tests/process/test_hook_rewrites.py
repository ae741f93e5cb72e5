"""The Stop hook's extraction (`memcli hook stop`, run as Claude Code runs it) leaves an
entry the person pinned as it is and proposes its new text beside it: the pin and
importance it would carry wait in `memcli review` (DESIGN §4; the CLI's cases:
tests/integration/test_agent_rewrites.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.services.memory import Memory
from tests.process.test_hooks import SESSION, run_hook, stop_payload


@pytest.mark.slow  # a hook process that loads the model
def test_the_stop_hook_proposes_its_rewrite_beside_the_persons_pinned_entry(
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
    mem = Memory(empty_workspace)
    mine = mem.get("mmuc").entry
    assert (mine.text, mine.pinned, mine.importance) == ("Lives in Munich", True, 1.0)
    assert "review" not in mine.meta and mine.provenance == "hand"
    (new,) = [e for e in mem.entries() if e.id != "mmuc" and "Leipzig" in e.text]
    assert new.text == "Lives in Leipzig" and new.meta["by"] == "extract"
    assert not new.pinned and new.meta["review"] == "imp:1,pin,rewrite:mmuc"
    assert mem.store.load("archive.md").entries() == []
    block = mem.inject(None, max_tokens=400).text  # the person's pinned entry leads
    assert "Lives in Munich" in block
