"""Memory poisoning: the attack set bench/data/poisoning.jsonl (issue 26) against a copy
of the sample workspace, each attempt through its own way in (MCP add_memory, the
Python API, Claude Code's Stop hook, extract, import, a hand edit, a repeat of a
hand-written entry); then inject blocks for unrelated questions.

    python bench/poisoning.py [--json] [--only ID ...]

Each attempt is refused, kept out (of every block for an unrelated question),
neutralised (in a block about it, escaped) or REACHED. The judging is
tests/support/poisoning.py (tests/integration/test_poisoning_bench.py asserts on it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support.poisoning import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", nargs="*", metavar="ID", help="Attempts to run (default: all).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):  # the model cache is the usual one
            os.environ.setdefault(name, str(Path(tmp) / name.lower()))
        report = run(Path(tmp) / "ws", args.only or None)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return
    print("| id | via | attempt | result | why |")
    print("|---|---|---|---|---|")
    for o in report["outcomes"]:
        why = o["detail"].replace("|", "\\|")[:110]
        print(f"| {o['id']} | {o['channel']} | {o['attack']} | {o['result']} | {why} |")
    counts = ", ".join(f"{k} {v}" for k, v in report["counts"].items())
    print(
        f"\n{report['attempts']} attempts: {counts}; {report['held_for_review']} entries wait "
        f"for review; blocks that lost their shape: {len(report['broken_blocks'])}"
    )


if __name__ == "__main__":
    main()
