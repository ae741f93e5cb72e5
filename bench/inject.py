"""Inject benchmark: budgets are never exceeded, budgets are used well where there is
enough relevant material, nothing unrelated fills a block, and how long a whole
`memcli inject` process takes.

    python bench/inject.py [--contexts 200] [--entries 5000] [--runs 10] [--json]

For the sample workspace and a generated one, over budgets 100..8000 and many contexts
(plus no context): the largest overshoot (goal: 0 tokens); the mean utilization where
the entries that may go into the block (pinned, profile entries, relevant corrections and
entries above the relevance floor for that context; every entry without context) hold
≥ 1.2 × the budget (goal: ≥ 97%); what fills the block for off-topic contexts ("what's
the capital of Peru"); the cosine similarities the relevance floor was chosen from; and
the wall time of `memcli inject --max-tokens 2000` as a separate process (median, p95).
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

from memcli.adapters.tokens import get_counter  # noqa: E402
from memcli.index.embedder import SentenceTransformerEmbedder  # noqa: E402
from memcli.logic.inject import render_block, render_item  # noqa: E402
from memcli.logic.inject_choice import is_profile, is_relevant  # noqa: E402
from memcli.services.memory import Memory  # noqa: E402
from tests.support.generate import contexts, generate  # noqa: E402

BUDGETS = [100, 250, 500, 1000, 2000, 4000, 8000]
#: contexts about nothing a developer's memory holds
OFF_TOPIC = [
    "what's the capital of Peru",
    "Give me a recipe for banana bread",
    "Who won the 1998 World Cup?",
    "How tall is Mount Everest?",
    "Translate 'good morning' into French",
    "What is the weather like tomorrow?",
    "Write a haiku about autumn leaves",
    "How many moons does Jupiter have?",
    "Recommend a good sci-fi novel",
    "What time is it in Tokyo?",
    "How do I change a flat tyre?",
    "Explain photosynthesis simply",
    "hello",
    "thanks!",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def eligible_tokens(mem: Memory, context: str | None, counter) -> int:  # noqa: ANN001
    """Tokens of the entries that may go into a block for `context` (as
    memcli.logic.inject_choice.context_candidates decides: pinned, profile entries,
    entries above the relevance floor, corrections among them)."""
    if context is None:
        entries = mem.entries()
    else:
        cfg = mem.settings.inject
        mode = mem.settings.search.mode
        hits = mem.search(context, limit=10_000, touch=False)
        found = {h.entry.id for h in hits}
        entries = [
            h.entry
            for h in hits
            if h.entry.pinned
            or is_profile(h.entry, cfg)
            or is_relevant(h.components["semantic"], h.components["keyword"], mode, cfg)
        ]
        entries += [
            e
            for e in mem.entries()
            if e.id not in found and (e.pinned or is_profile(e, cfg))
        ]
    return counter.count(render_block([], "markdown")) + sum(
        counter.count_many([render_item(e, "markdown") for e in entries])
    )


def measure(ws: Path, queries: list[str], runs: int, embedder) -> dict:
    mem = Memory(ws, embedder_factory=lambda: embedder, notify=lambda m: None)
    mem.index()
    counter = get_counter("cl100k_base")
    entries = mem.entries()
    over, utilization, calls, full = 0, [], 0, 0
    cases = [(None, b) for b in BUDGETS] + [
        (q, BUDGETS[i % len(BUDGETS)]) for i, q in enumerate(queries)
    ]
    started = time.perf_counter()
    for context, budget in cases:
        packed = mem.inject(context, max_tokens=budget)
        real = counter.count(packed.text)
        over = max(over, real - budget)
        calls += 1
        utilization.append((context, budget, real))
    api_seconds = time.perf_counter() - started
    used = []
    for context, budget, real in utilization:  # outside the timing: it searches again
        if eligible_tokens(mem, context, counter) >= budget * 1.2:
            full += 1
            used.append(real / budget)
    off_topic = []
    for context in OFF_TOPIC:
        packed = mem.inject(context, max_tokens=2000, touch=False)
        off_topic.append(
            {
                "context": context,
                "tokens": packed.tokens,
                "entries": [f"{c.entry.type}: {c.entry.text[:60]}" for c in packed.chosen],
            }
        )
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
        "calls_with_enough_material": full,
        "mean_utilization_pct": round(100 * statistics.mean(used), 2) if used else None,
        "min_utilization_pct": round(100 * min(used), 2) if used else None,
        "off_topic_max_entries": max(len(o["entries"]) for o in off_topic),
        "off_topic_max_tokens": max(o["tokens"] for o in off_topic),
        "api_ms_per_call": round(1000 * api_seconds / calls, 1),
        "process_wall_ms_p50": round(1000 * statistics.median(walls), 1) if walls else None,
        "process_wall_ms_p95": round(1000 * percentile(walls, 0.95), 1) if walls else None,
        "off_topic": off_topic,
    }


def similarities(ws: Path, queries: list[str], embedder) -> dict:
    """The cosine similarities the relevance floor rests on: the best match of each
    off-topic context (English, then all) and of the benchmark's contexts."""
    mem = Memory(ws, embedder_factory=lambda: embedder, notify=lambda m: None)

    def best(context: str) -> float:
        # min_score=0: every candidate, past the relevance floor (off-topic contexts get none)
        hits = mem.search(context, limit=10_000, touch=False, min_score=0.0)
        return max((h.components["semantic"] for h in hits), default=0.0)

    off = [best(c) for c in OFF_TOPIC]
    on = sorted(best(c) for c in queries)
    return {
        "off_topic_best_cosine_max": round(max(off), 3),
        "off_topic_best_cosine_median": round(statistics.median(off), 3),
        "contexts_best_cosine_p10": round(percentile(on, 0.1), 3),
        "contexts_best_cosine_median": round(statistics.median(on), 3),
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
        results["sample"].update(similarities(sample, queries, embedder))
        big = generate(Path(tmp) / "generated", args.entries)
        results[f"generated_{args.entries}"] = measure(big, queries, args.runs, embedder)
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return 0
    keys = [k for k in results["sample"] if k != "off_topic"]
    print(f"{'':32}" + "".join(f"{name:>22}" for name in results))
    for key in keys:
        print(f"{key:32}" + "".join(f"{str(r.get(key, '')):>22}" for r in results.values()))
    for name, result in results.items():
        print(f"\n{name}: what fills a 2000-token block on an off-topic context")
        for case in result["off_topic"][:3]:
            print(f"  {case['context']!r} ({case['tokens']} tokens)")
            for line in case["entries"]:
                print(f"    - {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
