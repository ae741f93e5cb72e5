"""Nothing lost (issues 8 and 14): concurrency, kill -9, damaged derived state, bad
input, fuzzing, the security boundaries, issue 14's attacks through the real CLI, and
editors racing memcli, issue 25's findings (tests/support/round3_*.py) and issue 35's
(round four: tests/support/round4_*.py).

    python bench/reliability.py                    # full run (≈ 10 min), prints the tables
    python bench/reliability.py --quick            # the sizes CI's tests use
    python bench/reliability.py --only attacks     # some parts: concurrency, crashes,
                                                   # derived, bad-input, fuzz, security,
                                                   # attacks, editors, round3, round4

The code is tests/support/reliability.py (tests/process/test_reliability.py asserts on
the same functions; tests never import bench/). Figures: bench/README.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support.reliability import main  # noqa: E402 - after the path set-up

if __name__ == "__main__":
    sys.exit(main())
