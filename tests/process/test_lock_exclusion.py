"""Two memcli processes holding the same lock exclude each other (issue 35: a planted
shared lock instead of an exclusive one was caught only by accident; no test checked
that two holders exclude each other). Real processes, the real store.locks.file_lock:
each process records entering and leaving its critical section, and a counter file is
read, then written back one higher, inside it: with exclusion the log never interleaves
and no increment is lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memcli.core.errors import ConflictError
from memcli.store.locks import file_lock

ROUNDS = 40
HOLDER = """
import os, sys, time
from pathlib import Path
from memcli.store.locks import file_lock
lock, log, counter, rounds = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
me = str(os.getpid())
for _ in range(rounds):
    with file_lock(lock, timeout=60):
        with open(log, "a") as f:
            f.write(f"in {me}\\n")
        value = int(counter.read_text() or 0)
        time.sleep(0.002)  # another holder would read the same value meanwhile
        counter.write_text(str(value + 1))
        with open(log, "a") as f:
            f.write(f"out {me}\\n")
"""


def test_two_processes_holding_one_lock_exclude_each_other(tmp_path: Path) -> None:
    lock, log, counter = tmp_path / "locks" / "x.lock", tmp_path / "log", tmp_path / "n"
    counter.write_text("0")
    argv = [sys.executable, "-c", HOLDER, str(lock), str(log), str(counter), str(ROUNDS)]
    procs = [subprocess.Popen(argv) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    lines = log.read_text().splitlines()
    assert len(lines) == 4 * ROUNDS
    for enter, leave in zip(lines[::2], lines[1::2], strict=True):
        assert enter.startswith("in ") and leave == "out " + enter[3:], (enter, leave)
    assert len({line.split()[1] for line in lines}) == 2  # both held it
    assert counter.read_text() == str(2 * ROUNDS)  # no increment lost


def test_a_held_lock_makes_another_process_give_up_with_a_clear_error(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "x.lock"
    with file_lock(lock):
        waiter = subprocess.run(
            [sys.executable, "-c",
             "import sys\nfrom pathlib import Path\nfrom memcli.store.locks import file_lock\n"
             "from memcli.core.errors import ConflictError\n"
             "try:\n    with file_lock(Path(sys.argv[1]), timeout=0.3):\n        sys.exit(3)\n"
             "except ConflictError as e:\n    print(e); sys.exit(0)\n", str(lock)],
            capture_output=True, text=True, timeout=60,
        )
    assert waiter.returncode == 0, waiter
    assert "still held by another process" in waiter.stdout and str(lock) in waiter.stdout
    with pytest.raises(ConflictError), file_lock(lock), file_lock(lock, timeout=0.1):
        pass  # a second holder in this very process is refused too (flock per open file)
