"""Deliberate bugs, and whether the tests meant to catch them do (issues 19 and 25).

    python bench/mutations.py                 # every mutation (≈ 30 min on a quiet machine)
    python bench/mutations.py --check         # every mutation still applies, tests exist
    python bench/mutations.py --only NAME ... # some; --baseline, --jobs N, --json, --list

The list is tests/support/mutation_list.py, the runner tests/support/mutations.py
(tests/unit/test_mutations.py checks the list in the fast tier and runs three mutations
end to end in the slow one; tests never import bench/). Figures: bench/README.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support.mutations import main  # noqa: E402 - after the path set-up

if __name__ == "__main__":
    sys.exit(main())
