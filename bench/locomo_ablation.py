"""The issue-16 ablation on LoCoMo Track A: each change on and off, on both halves.

Every configuration runs through bench/locomo_exp.py (its defaults reproduce
`Memory.search`), on the tune and the test half of bench/locomo.py's `halves`, and is
compared with the product defaults on the same questions (paired bootstrap, 95%).
Prints Markdown tables (overall, then R@10 per category).

    python bench/locomo_ablation.py [FILE] [--only LABEL ...] [--skip LABEL ...]
        [--bootstrap N] [--seed S] [--save RUNS.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.locomo import (  # noqa: E402
    DEFAULT_FILE,
    Options,
    evaluate,
    halves,
    paired,
    summarize,
)
from bench.locomo_exp import Experiment  # noqa: E402
from memcli.store.config import Settings, load_settings  # noqa: E402

#: (label, search settings, experiment switches, options) — each row one change
CONFIGS: list[tuple[str, dict, dict, dict]] = [
    ("product defaults (neighbour 0.4, file scope)", {}, {}, {}),
    ("neighbours off", {}, {"neighbours": "off"}, {}),
    ("neighbours within a session", {}, {"neighbours": "session"}, {}),
    ("neighbour 0.2", {"neighbour_weight": 0.2}, {}, {}),
    ("shuffled order (curated-file stand-in), neighbours on", {}, {}, {"shuffle": True}),
    ("shuffled order, neighbours off", {}, {"neighbours": "off"}, {"shuffle": True}),
    ("window 1 (replace)", {}, {"window": 1}, {}),
    ("window 2 (replace)", {}, {"window": 2}, {}),
    ("window 3 (replace)", {}, {"window": 3}, {}),
    ("window 1 (mean of own and windowed cosine)", {}, {"window": 1, "window_mode": "mean"}, {}),
    ("window 2 (mean)", {}, {"window": 2, "window_mode": "mean"}, {}),
    ("window 3 (mean)", {}, {"window": 3, "window_mode": "mean"}, {}),
    (
        "window 2 (mean), neighbours off",
        {},
        {"window": 2, "window_mode": "mean", "neighbours": "off"},
        {},
    ),
    (
        "pooled window 1 (own + 0.5 × previous vector, nothing re-embedded)",
        {},
        {"window": 1, "window_mode": "pool"},
        {},
    ),
    ("pooled window 2", {}, {"window": 2, "window_mode": "pool"}, {}),
    ("pooled window 3", {}, {"window": 3, "window_mode": "pool"}, {}),
    (
        "pooled window 1, context 0.3",
        {},
        {"window": 1, "window_mode": "pool", "context_weight": 0.3},
        {},
    ),
    (
        "pooled window 1, context 1.0",
        {},
        {"window": 1, "window_mode": "pool", "context_weight": 1.0},
        {},
    ),
    (
        "pooled window 2, neighbours off",
        {},
        {"window": 2, "window_mode": "pool", "neighbours": "off"},
        {},
    ),
    ("date spellings (keyword side)", {}, {"dates": True}, {}),
    ("date preference 0.05", {}, {"date_boost": 0.05}, {}),
    ("date preference 0.1", {}, {"date_boost": 0.1}, {}),
    ("date preference 0.2", {}, {"date_boost": 0.2}, {}),
    ("dates + preference 0.1", {}, {"dates": True, "date_boost": 0.1}, {}),
    ("at most 3 of the top hits from one session", {}, {"session_cap": 3}, {}),
    ("at most 5 from one session", {}, {"session_cap": 5}, {}),
    ("no date in the text (only `created`)", {}, {}, {"with_date": False}),
    ("no date in the text + date spellings", {}, {"dates": True}, {"with_date": False}),
    ("no date in the text + preference 0.1", {}, {"date_boost": 0.1}, {"with_date": False}),
    (
        "no date in the text + spellings + preference 0.1",
        {},
        {"dates": True, "date_boost": 0.1},
        {"with_date": False},
    ),
    ("second step 0.2, keep 1", {}, {"multihop": 0.2}, {}),
    ("second step 0.5, keep 1", {}, {"multihop": 0.5}, {}),
    ("second step 0.5, keep 3", {}, {"multihop": 0.5, "keep": 3}, {}),
    ("second step 1.0, keep 1", {}, {"multihop": 1.0}, {}),
]
#: rows compared with another row than the first (same questions, paired)
BASELINES = {
    label: "no date in the text (only `created`)"
    for label, *_ in CONFIGS
    if label.startswith("no date in the text +")
} | {"shuffled order, neighbours off": "shuffled order (curated-file stand-in), neighbours on"}
CONFIGS += [
    (
        "combined A, the tune-best of each group: window 2 (replace) + date preference 0.2"
        " + second step 0.5",
        {},
        {"window": 2, "date_boost": 0.2, "multihop": 0.5},
        {},
    ),
    (
        "combined B: window 2 (mean) + neighbours within a session + date preference 0.2",
        {},
        {"window": 2, "window_mode": "mean", "neighbours": "session", "date_boost": 0.2},
        {},
    ),
]
CATS = ("single-hop", "multi-hop", "temporal", "open-domain")


def configured(base: Settings, search: dict) -> Settings:
    return replace(base, search=replace(base.search, **search)) if search else base


def fmt(summary: dict, metric: str) -> str:
    lo, hi = summary["ci95"][metric]
    return f"{summary[metric]:.1f} [{lo:.1f}, {hi:.1f}]"


def fmt_delta(summary: dict, metric: str) -> str:
    lo, hi = summary["ci95"][metric]
    return f"{summary[metric]:+.1f} [{lo:+.1f}, {hi:+.1f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT_FILE))
    parser.add_argument("--only", action="append", default=[], help="labels starting so")
    parser.add_argument("--skip", action="append", default=[], help="labels starting so")
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--halves", default="tune,test")
    parser.add_argument("--save", help="write every run's per-question figures here (JSON)")
    args = parser.parse_args(argv)

    data = json.loads(Path(args.file).read_text(encoding="utf-8"))
    split = halves(data)
    base = load_settings(Path(tempfile.gettempdir()), env={})
    from memcli.index.embedder import SentenceTransformerEmbedder

    shared = SentenceTransformerEmbedder(base.index.model, base.index.batch_size)
    wanted = [
        c
        for c in CONFIGS[1:]
        if (not args.only or any(c[0].startswith(o) for o in args.only))
        and not any(c[0].startswith(o) for o in args.skip)
    ]
    bases = {BASELINES[c[0]] for c in wanted if c[0] in BASELINES}
    configs = [CONFIGS[0]] + [c for c in CONFIGS[1:] if c in wanted or c[0] in bases]
    rows: dict[str, dict[str, dict]] = {}
    saved: dict[str, dict[str, list]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for half in args.halves.split(","):
            part = [s for s in data if str(s.get("sample_id")) in set(split[half])]
            done: dict[str, list[dict]] = {}
            for label, search, switches, opts in configs:
                options = Options(engine="bench", experiment=Experiment(**switches), **opts)
                run = evaluate(
                    part, "a", configured(base, search), Path(tmp), lambda: shared, options
                )
                records = done[label] = run["questions"]
                baseline = done.get(BASELINES.get(label, ""), done[configs[0][0]])
                saved.setdefault(label, {})[half] = records
                rows.setdefault(label, {})[half] = {
                    "abs": summarize(records, args.bootstrap, args.seed),
                    "delta": paired(baseline, records, args.bootstrap, args.seed),
                }
                print(f"  {half}: {label}", file=sys.stderr)
    if args.save:
        Path(args.save).write_text(json.dumps({"halves": split, "runs": saved}))
    hs = args.halves.split(",")
    print(f"tune = {', '.join(split['tune'])}; test = {', '.join(split['test'])}")
    print(
        f"bootstrap {args.bootstrap} resamples, seed {args.seed}; Δ: paired, vs row 1 "
        "(vs the row it extends where the label says so)\n"
    )
    head = "| configuration |" + "".join(
        f" {h} R@5 | {h} R@10 | {h} ΔR@5 | {h} ΔR@10 |" for h in hs
    )
    print(head)
    print("|---|" + "---|" * (4 * len(hs)))
    for label, by_half in rows.items():
        cells = []
        for h in hs:
            a, d = by_half[h]["abs"]["overall"], by_half[h]["delta"]["overall"]
            cells += [fmt(a, "R@5"), fmt(a, "R@10"), fmt_delta(d, "R@5"), fmt_delta(d, "R@10")]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\nR@10 per category (Δ as above, paired 95% interval)\n")
    print("| configuration |" + "".join(f" {h} {c} |" for h in hs for c in CATS))
    print("|---|" + "---|" * (len(CATS) * len(hs)))
    for label, by_half in rows.items():
        cells = []
        for h in hs:
            for c in CATS:
                d = by_half[h]["delta"].get(c)
                a = by_half[h]["abs"].get(c)
                if label == configs[0][0]:
                    cells.append(fmt(a, "R@10") if a else "–")
                else:
                    cells.append(fmt_delta(d, "R@10") if d else "–")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
