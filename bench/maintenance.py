"""Compress's same-fact and contradiction decisions on the labelled pairs (issue 15 §2):
precision / recall / F1 of memcli.logic.similarity at the shipped thresholds on the tune
and the held-out half of bench/data/duplicates.jsonl and contradictions.jsonl, and a
sweep of each threshold on the tune half.

    .venv/bin/python bench/maintenance.py [--errors] [--json] [--set duplicate_threshold=0.7 ...]

The code is tests/support/maintenance.py: a test (tests/integration/test_compress.py)
asserts on the same figures, and tests never import bench/. This is its entry point.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.maintenance import main  # noqa: E402

if __name__ == "__main__":
    main()
