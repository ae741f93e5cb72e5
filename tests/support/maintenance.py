"""Maintenance decisions on labelled pairs (DESIGN §5.2-5.3): how often compress would
merge two entries that are not the same fact, or supersede one that does not contradict.

    .venv/bin/python bench/maintenance.py [--errors] [--json] [--set duplicate_threshold=0.8 ...]

bench/data/duplicates.jsonl (paraphrase duplicates and look-alike distinct facts) and
bench/data/contradictions.jsonl (same subject, another value of every kind; compatible,
unrelated and paraphrased pairs), English and Chinese, hand-written; each pair has a
`split`: thresholds are chosen on "tune", "test" is reported as held out. Every pair goes
through memcli.logic.similarity.verdict with the bundled all-MiniLM-L6-v2 cosine, as compress
does. Prints precision / recall / F1 on both halves at the shipped thresholds
([compress] duplicate_threshold, contradiction_similarity) and a sweep on the tune half.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memcli.logic.similarity import PairFeatures, features, judge  # noqa: E402
from memcli.store.config import CompressSettings  # noqa: E402

DATA = ROOT / "bench" / "data"
SETS = {"duplicates": "duplicate", "contradictions": "contradiction"}


def load(name: str) -> list[dict]:
    with (DATA / f"{name}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def featurize(rows: list[dict]) -> list[PairFeatures]:
    """Features of every pair, with the cosine of the bundled model's embeddings."""
    from memcli.index.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    va = embedder.embed([r["a"] for r in rows])
    vb = embedder.embed([r["b"] for r in rows])
    cosines = np.sum(va * vb, axis=1)
    return [features(r["a"], r["b"], float(c)) for r, c in zip(rows, cosines, strict=True)]


def scores(
    rows: list[dict], feats: list[PairFeatures], positive: str, cfg: CompressSettings, split: str
) -> dict[str, float]:
    tp = fp = fn = 0
    for row, pair in zip(rows, feats, strict=True):
        if split != "all" and row["split"] != split:
            continue
        said = judge(pair, cfg.duplicate_threshold, cfg.contradiction_similarity) == positive
        truth = row["label"] == positive
        tp += said and truth
        fp += said and not truth
        fn += truth and not said
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "pairs": sum(1 for r in rows if split == "all" or r["split"] == split),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(f1, 3),
    }


def mistakes(
    rows: list[dict], feats: list[PairFeatures], positive: str, cfg: CompressSettings
) -> list[str]:
    out = []
    for row, pair in zip(rows, feats, strict=True):
        said = judge(pair, cfg.duplicate_threshold, cfg.contradiction_similarity)
        if (said == positive) != (row["label"] == positive):
            kind = "FP" if said == positive else "FN"
            out.append(
                f"{kind} {row['split']:<4} {row['kind']:<13} cos {pair.cosine:.2f} "
                f"score {pair.duplicate_score:.2f}  {row['a']}  |  {row['b']}"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--errors", action="store_true", help="list the misjudged pairs")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    cfg = CompressSettings()
    for item in args.set:
        key, _, value = item.partition("=")
        cfg = dataclasses.replace(cfg, **{key: float(value)})

    report: dict[str, object] = {
        "duplicate_threshold": cfg.duplicate_threshold,
        "contradiction_similarity": cfg.contradiction_similarity,
    }
    sweeps = {
        "duplicates": ("duplicate_threshold", [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]),
        "contradictions": ("contradiction_similarity", [0.2, 0.3, 0.4, 0.5, 0.6, 0.7]),
    }
    errors: list[str] = []
    for name, positive in SETS.items():
        rows = load(name)
        feats = featurize(rows)
        key, values = sweeps[name]
        report[name] = {
            "shipped": {s: scores(rows, feats, positive, cfg, s) for s in ("tune", "test")},
            "sweep_tune": {
                str(v): scores(rows, feats, positive, dataclasses.replace(cfg, **{key: v}), "tune")
                for v in values
            },
        }
        errors += [f"{name}: {m}" for m in mistakes(rows, feats, positive, cfg)]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"thresholds: duplicate_threshold {cfg.duplicate_threshold}, "
        f"contradiction_similarity {cfg.contradiction_similarity}\n"
    )
    print("| set | half | pairs | TP | FP | FN | precision | recall | F1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in SETS:
        for half, s in report[name]["shipped"].items():  # type: ignore[index]
            print(
                f"| {name} | {half} | {s['pairs']} | {s['tp']} | {s['fp']} | {s['fn']} | "
                f"{s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} |"
            )
    for name in SETS:
        key = sweeps[name][0]
        print(f"\nsweep of {key} on the tune half of {name}:\n")
        print(f"| {key} | precision | recall | F1 |")
        print("|---|---|---|---|")
        for value, s in report[name]["sweep_tune"].items():  # type: ignore[index]
            print(f"| {value} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} |")
    if args.errors:
        print("\nmisjudged pairs:\n" + "\n".join(errors))


if __name__ == "__main__":
    main()
