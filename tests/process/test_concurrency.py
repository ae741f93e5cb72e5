"""Two writer processes and a hand editor on one file: nothing is lost."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memcli.services.memory import Memory

WRITER = textwrap.dedent(
    """
    import sys
    from memcli.services.memory import Memory
    mem = Memory(sys.argv[1])
    for i in range(int(sys.argv[3])):
        mem.add(f"{sys.argv[2]} note number {i}", type="fact")
    """
)

HAND_EDITOR = textwrap.dedent(
    """
    import os, sys, time
    path = sys.argv[1]
    edits = int(sys.argv[2])
    done = 0
    while done < edits:
        with open(path, "rb") as f:
            before = f.read()
        text = before.decode()
        # A person types a new line under Facts and fixes a typo elsewhere.
        text = text.replace("## Facts\\n", f"## Facts\\n- hand edit {done}\\n", 1)
        tmp = path + ".swp"
        with open(tmp, "wb") as f:
            f.write(text.encode())
            f.flush()
            os.fsync(f.fileno())
        with open(path, "rb") as f:   # editors reload when the file changed on disk
            if f.read() != before:
                os.unlink(tmp)
                continue
        os.replace(tmp, path)
        done += 1
        time.sleep(0.01)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "os.replace"])
def test_two_writers_and_a_hand_editor_lose_nothing(empty_workspace: Path, exchange: bool) -> None:
    """Also without the atomic exchange (other platforms): the check before the swap and
    renaming the current file aside and linking ours in without replacing must do the work."""
    ws = empty_workspace
    per_writer, edits = (200, 40) if exchange else (100, 30)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    if not exchange:
        env["MEMCLI_NO_EXCHANGE"] = "1"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(ws), name, str(per_writer)], env=env)
        for name in ("alpha", "beta")
    ]
    time.sleep(0.2)
    editor = subprocess.Popen(
        [sys.executable, "-c", HAND_EDITOR, str(ws / "memory.md"), str(edits)], env=env
    )
    for proc in [*procs, editor]:
        assert proc.wait(timeout=300) == 0
    mem = Memory(ws)
    texts = [e.text for e in mem.entries()]
    for name in ("alpha", "beta"):
        for i in range(per_writer):
            assert texts.count(f"{name} note number {i}") == 1, (name, i)
    for i in range(edits):
        assert texts.count(f"hand edit {i}") == 1, i
    assert len(texts) == 2 * per_writer + edits
    assert not mem.store.load("memory.md").problems
    assert len({e.id for e in mem.entries()}) == len(texts)
