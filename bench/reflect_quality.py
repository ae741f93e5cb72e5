"""How many of reflect's offline proposals a reader would keep, on the labelled themes and
non-themes of bench/data/reflect_themes.jsonl (English and Chinese), per half, with the
bundled model; and a sweep of the cohesion thresholds on the tune half.

    python bench/reflect_quality.py [--json] [--show]

The scoring is tests/support/reflect_quality.py (a test asserts on the held-out half;
tests never import bench/): see its docstring for what counts as kept.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memcli.store.config import ReflectSettings  # noqa: E402
from tests.support.reflect_quality import load, run, score  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="print every proposal")
    args = parser.parse_args()
    from memcli.index.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    report = run(embedder.embed)
    tune = [c for c in load() if c["split"] == "tune"]
    cfg = ReflectSettings()
    sweep = {
        f"{t} / {o}": score(
            tune, embedder.embed, dataclasses.replace(cfg, theme_similarity=t), cjk_overlap=o
        )
        for t in (0.2, 0.25, 0.3, 0.35, 0.4)
        for o in (0.2, 0.3, 0.4, 0.5)
    }
    if args.json:
        print(json.dumps({"halves": report, "sweep_tune": sweep}, ensure_ascii=False, indent=2))
        return
    print(f"theme_similarity {cfg.theme_similarity}\n")
    print("| half | clusters | themes | proposals | kept | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    for half, r in report.items():
        print(
            f"| {half} | {r['clusters']} | {r['themes']} | {r['proposals']} | {r['kept']} | "
            f"{r['precision']:.2f} | {r['recall']:.2f} |"
        )
    print("\nsweep on the tune half (theme_similarity / Chinese word overlap):\n")
    print("| thresholds | proposals | kept | precision | recall |")
    print("|---|---|---|---|---|")
    for key, r in sweep.items():
        print(
            f"| {key} | {r['proposals']} | {r['kept']} | {r['precision']:.2f} | {r['recall']:.2f} |"
        )
    if args.show:
        for half in ("tune", "test"):
            for insight in report[half]["insights"]:
                mark = "keep" if insight["kept"] else "drop"
                print(f"[{half}] {mark} {insight['text']}  {insight['from']}")
            for why in report[half]["why_not"]:
                print(f"[{half}] why not: {why}")


if __name__ == "__main__":
    main()
