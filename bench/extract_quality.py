"""Quality of `memcli extract` on a labelled set of chat turns (bench/data/extract.jsonl)
against a small fixed memory (bench/data/extract_memory.md), through Memory.extract
(dry run: what the CLI decides, with the real embedding model, offline rules), and the
target-choice cases (bench/data/extract_targets.jsonl: several entries of one slot; which
one a new value updates), and how people say a change or a new fact (bench/data/said.jsonl,
issue 37: ≥ 300 statements in several voices, ADD / UPDATE with the right target on the
half not tuned on).

    python bench/extract_quality.py [--json] [--show-errors] [--only said]

Only the tune half's items are ever shown (--show-errors, and the errors in --json): the
half not tuned on is reported as figures alone, so that nobody tunes on it by looking.

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
from tests.support.extract_quality import ACTIONS, run, run_said, run_targets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--show-errors", action="store_true", help="the tune half's wrong decisions"
    )
    parser.add_argument("--only", choices=["said"], help="only the said.jsonl set")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        from memcli.index.embedder import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()  # one model for every workspace

        def memory(ws: Path) -> Memory:
            return Memory(ws, embedder_factory=lambda: embedder, notify=lambda message: None)

        said = run_said(Path(tmp) / "said", memory)
        report = {} if args.only else run(Path(tmp) / "ws", memory)
        targets = {} if args.only else run_targets(Path(tmp) / "targets", memory)
    for figures in (said, report, targets):
        for split, r in figures.items():
            if not split.startswith("tune"):
                r.pop("errors", None)  # the half not tuned on: figures only
    if args.json:
        print(
            json.dumps(
                {"turns": report, "targets": targets, "said": said}, ensure_ascii=False, indent=2
            )
        )
        return
    print(
        "how people say a change (said.jsonl): ADD and UPDATE (with the right target)\n\n"
        "| split | utterances | P ADD+UPDATE | R ADD+UPDATE | P/R NOOP "
        "| no-statement turns left alone | text normalized | reflection updated "
        "| assistant's words |\n|---|---|---|---|---|---|---|---|---|"
    )
    for split, r in said.items():
        w, n = r["add_update"], r["noop"]
        print(
            f"| {split} | {r['utterances']} | {w['precision']:.2f} ({w['predicted']}) | "
            f"{w['recall']:.2f} ({w['expected']}) | {n['precision']:.2f} / {n['recall']:.2f} | "
            f"{r['nothing_kept_clean']} | {r['text_normalized']:.2f} | "
            f"{r['reflection_updated']} | {r['assistant_words']} |"
        )
    print()
    if report:
        print(
            "| split | utterances | P (all) | R (all) | P/R ADD | P/R UPDATE | P/R NOOP "
            "| no-statement turns left alone | text exact | text normalized |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for split, r in report.items():
            cells = [f"{r[a]['precision']:.2f} / {r[a]['recall']:.2f}" for a in ACTIONS]
            print(
                f"| {split} | {r['utterances']} | {r['all']['precision']:.2f} | "
                f"{r['all']['recall']:.2f} | "
                + " | ".join(cells)
                + f" | {r['nothing_kept_clean']} "
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
                f"{r['all']['recall']:.2f} | {r['target_accuracy']:.2f} | "
                f"{r['target_and_text']:.2f} |"
            )
    if args.show_errors:
        for split, r in [
            *report.items(),
            *(("targets " + k, v) for k, v in targets.items()),
            *(("said " + k, v) for k, v in said.items() if " " not in k),
        ]:
            for e in r.get("errors", ()):
                print(f"[{split}] {e['id']} {e['say']}\n    want {e['want']}\n    got  {e['got']}")


if __name__ == "__main__":
    main()
