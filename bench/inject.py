"""Inject benchmark: budgets are never exceeded, budgets are used well, and how long a
whole `memcli inject` process takes.

    python bench/inject.py [--contexts 200] [--entries 5000] [--runs 10] [--json]

For the sample workspace and a generated one, over budgets 100..8000 and many contexts
(plus no context): the largest overshoot (goal: 0 tokens), the mean utilization when the
workspace holds enough text to fill the budget (goal: ≥ 97%), and the wall time of
`memcli inject --max-tokens 2000` as a separate process (median and p95).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.generate import contexts, generate  # noqa: E402
from memcli.index.embedder import SentenceTransformerEmbedder  # noqa: E402
from memcli.inject import render_block  # noqa: E402
from memcli.memory import Memory  # noqa: E402
from memcli.tokens import get_counter  # noqa: E402

BUDGETS = [100, 250, 500, 1000, 2000, 4000, 8000]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure(ws: Path, queries: list[str], runs: int, embedder) -> dict:
    mem = Memory(ws, embedder_factory=lambda: embedder, notify=lambda m: None)
    mem.index()
    counter = get_counter("cl100k_base")
    entries = mem.entries()
    available = counter.count(render_block([], "markdown")) + sum(
        counter.count_many([f"- {e.text}\n" for e in entries])
    )
    over, utilization, calls = 0, [], 0
    cases = [(None, b) for b in BUDGETS] + [
        (q, BUDGETS[i % len(BUDGETS)]) for i, q in enumerate(queries)
    ]
    started = time.perf_counter()
    for context, budget in cases:
        packed = mem.inject(context, max_tokens=budget)
        real = counter.count(packed.text)
        over = max(over, real - budget)
        calls += 1
        if available >= budget * 1.2:
            utilization.append(real / budget)
    api_seconds = time.perf_counter() - started
    walls = []
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    memcli = [sys.executable, "-m", "memcli", "-w", str(ws), "inject", "--max-tokens", "2000", "-q"]
    for i in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            [*memcli, queries[i % len(queries)]], check=True, capture_output=True, env=env
        )
        walls.append(time.perf_counter() - t0)
    return {
        "entries": len(entries),
        "calls": calls,
        "max_tokens_over_budget": over,
        "mean_utilization_pct": round(100 * statistics.mean(utilization), 2)
        if utilization
        else None,
        "min_utilization_pct": round(100 * min(utilization), 2) if utilization else None,
        "api_ms_per_call": round(1000 * api_seconds / calls, 1),
        "process_wall_ms_p50": round(1000 * statistics.median(walls), 1) if walls else None,
        "process_wall_ms_p95": round(1000 * percentile(walls, 0.95), 1) if walls else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contexts", type=int, default=200)
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=10, help="whole-process timings per workspace")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    embedder = SentenceTransformerEmbedder()
    queries = contexts(args.contexts)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample"
        shutil.copytree(ROOT / "workspace", sample, ignore=shutil.ignore_patterns(".memcli"))
        results["sample"] = measure(sample, queries, args.runs, embedder)
        big = generate(Path(tmp) / "generated", args.entries)
        results[f"generated_{args.entries}"] = measure(big, queries, args.runs, embedder)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    keys = list(next(iter(results.values())))
    print(f"{'':32}" + "".join(f"{name:>22}" for name in results))
    for key in keys:
        print(f"{key:32}" + "".join(f"{str(r[key]):>22}" for r in results.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
