"""Files memcli writes (issue 14, a "smaller" finding): every file memcli creates
honours the umask (archive.md, episodes, the index manifest and access statistics were
0644 under umask 077). A child process, because the umask is the whole process's. The
in-process cases (a symlinked memory.md, a held lock): tests/integration/test_files.py."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

WRITE_EVERYTHING = r"""
import os, sys
from pathlib import Path
os.umask(int(sys.argv[2], 8))
from memcli.services.memory import Memory
from memcli.store.workspace import init_workspace

root = Path(sys.argv[1])
init_workspace(root)
mem = Memory(root, notify=lambda m: None)
first = mem.add("Prefers pytest over unittest", type="preference").entry
mem.add("Runs the linters before each commit", type="skill")
mem.log("Paired on the release checklist today")
mem.forget(first.id, by="person")
mem.search("python tests")  # builds the index, counts an access
mem.flush()
"""


def _modes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode)
        for p in sorted(root.rglob("*"))
        if not p.is_symlink()
    }


def test_every_file_memcli_creates_honours_the_umask(tmp_path: Path, exported) -> None:
    root = tmp_path / "ws"
    done = subprocess.run(
        [sys.executable, "-c", WRITE_EVERYTHING, str(root), "077"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    modes = _modes(root)
    for name in ("memory.md", "learnings.md", "archive.md", ".memcli"):
        assert name in modes
    assert any(n.startswith("episodes/") for n in modes)
    assert any(n.startswith(".memcli/history/") for n in modes)
    assert len([n for n in modes if n.startswith(".memcli/")]) >= 5  # index, access, history
    loose = {name: oct(mode) for name, mode in modes.items() if mode & 0o077}
    assert loose == {}, f"readable by others under umask 077: {loose}"
