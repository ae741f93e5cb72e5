"""Quality of `memcli extract` on a labelled set of chat turns (bench/data/extract.jsonl)
against a small fixed memory (bench/data/extract_memory.md), through Memory.extract
(dry run: what the CLI decides, with the real embedding model, offline rules), and the
target-choice cases (bench/data/extract_targets.jsonl: several entries of one slot; which
one a new value updates).

    python bench/extract_quality.py [--json] [--show-errors]

The scoring is tests/support/extract_quality.py (a test asserts on the held-out half;
tests never import bench/): see its docstring for the data and how decisions match.
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

from memcli.services.memory import Memory  # noqa: E402
from tests.support.extract_quality import ACTIONS, run, run_targets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        from memcli.index.embedder import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()  # one model for every workspace

        def memory(ws: Path) -> Memory:
            return Memory(ws, embedder_factory=lambda: embedder, notify=lambda message: None)

        report = run(Path(tmp) / "ws", memory)
        targets = run_targets(Path(tmp) / "targets", memory)
    if args.json:
        print(json.dumps({"turns": report, "targets": targets}, ensure_ascii=False, indent=2))
        return
    print(
        "| split | utterances | P (all) | R (all) | P/R ADD | P/R UPDATE | P/R NOOP "
        "| no-statement turns left alone | text exact | text normalized |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for split, r in report.items():
        cells = [f"{r[a]['precision']:.2f} / {r[a]['recall']:.2f}" for a in ACTIONS]
        print(
            f"| {split} | {r['utterances']} | {r['all']['precision']:.2f} | "
            f"{r['all']['recall']:.2f} | " + " | ".join(cells) + f" | {r['nothing_kept_clean']} "
            f"| {r['text_exact']:.2f} | {r['text_normalized']:.2f} |"
        )
    print(
        "\ntarget choice (several entries of one slot):\n\n"
        "| split | cases | P (all) | R (all) | target accuracy | target and text |\n"
        "|---|---|---|---|---|---|"
    )
    for split, r in targets.items():
        print(
            f"| {split} | {r['utterances']} | {r['all']['precision']:.2f} | "
            f"{r['all']['recall']:.2f} | {r['target_accuracy']:.2f} | {r['target_and_text']:.2f} |"
        )
    if args.show_errors:
        for split, r in [*report.items(), *(("targets " + k, v) for k, v in targets.items())]:
            for e in r["errors"]:
                print(f"[{split}] {e['id']} {e['say']}\n    want {e['want']}\n    got  {e['got']}")


if __name__ == "__main__":
    main()
