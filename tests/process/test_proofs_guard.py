"""The write guard's last check before the swap (issue 19, item 8 (g)): another writer
that saves between memcli's read and memcli's swap is never replaced, not even for an
instant, and nothing of either write is lost.

Deterministic: the other writer saves from inside memcli's own change function, which
runs exactly between the read and the swap. Run without the atomic exchange
(MEMCLI_NO_EXCHANGE=1: rename aside + link, the other platforms' path), in a process of
its own so no cached renameat2 lookup of this process is reused; every name change at
memory.md is observed through the os functions the swap calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json, os, sys
from pathlib import Path
from memcli.store.files import guarded_update

path, style = Path(sys.argv[1]), sys.argv[2]
real_replace = os.replace
seen = []  # memory.md's content right after each name change that landed on it

def observed(fn):
    def call(src, dst, *args, **kwargs):
        result = fn(src, dst, *args, **kwargs)
        if os.fspath(dst) == str(path):
            seen.append(path.read_text())
        return result
    return call

os.link, os.rename, os.replace = observed(os.link), observed(os.rename), observed(os.replace)
calls = []

def change(text):
    calls.append(text)
    if len(calls) == 1:  # another writer saves between our read and our swap
        theirs = text + "- Saved by the other writer <!-- id=mtheirs1 -->\n"
        if style == "rename":  # an editor's save: temp file, then rename over
            tmp = path.with_name(".memory.md.editor")
            tmp.write_text(theirs)
            real_replace(tmp, path)
        else:  # in place: truncate and write the same inode
            with open(path, "r+") as handle:
                handle.truncate(0)
                handle.write(theirs)
    return text + "- Written by memcli <!-- id=mours001 -->\n", None

guarded_update(path, path.with_name(".lock"), change)
print(json.dumps({"seen": seen, "calls": len(calls), "final": path.read_text()}))
"""


@pytest.mark.parametrize("style", ["rename", "inplace"])
def test_a_save_between_read_and_swap_is_never_replaced(tmp_path: Path, style: str) -> None:
    memory = tmp_path / "memory.md"
    memory.write_text("# Memory\n\n## Facts\n- Has a cat named Miso <!-- id=mcat0001 -->\n")
    env = dict(os.environ, MEMCLI_NO_EXCHANGE="1")
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(memory), style],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["calls"] >= 2  # the change was applied again, on the other writer's file
    final = report["final"]
    for line in ("mcat0001", "mtheirs1", "mours001"):
        assert final.count(line) == 1, (line, final)
    assert final == memory.read_text()
    assert report["seen"], "the swap was not observed: has the write path changed?"
    for content in report["seen"]:  # never, even for an instant, without their save
        assert "mtheirs1" in content, content
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("memory.md", ".lock"))
    assert leftovers == [], leftovers
