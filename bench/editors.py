"""Editors racing memcli (issue 14): people save memory.md in place, by temp file +
rename, by backup copy then write, or from a stale buffer, while memcli processes add,
edit, forget, extract and compress, with a real `memcli watch` running; every line
either side was told was written is looked for afterwards.

    python bench/editors.py --ops 60 --trials 2    # the figures in bench/README.md (≈ 15 min)
    python bench/editors.py --styles inplace,stale --ops 10 --trials 1

The code is tests/support/editors.py (tests/process/test_reliability.py runs its trial()
at CI size; tests never import bench/). Figures: bench/README.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support.editors import main  # noqa: E402 - after the path set-up

if __name__ == "__main__":
    main()
