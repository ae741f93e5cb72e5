"""Agent task prompts: what an inject block for a prompt holds of the entries labelled
relevant to it, on the personal benchmark's `agent` queries (../shared/bench/personal/).

    python bench/inject_agent.py [--bench ../shared/bench/personal] [--half tune|test|all]
                                 [--work DIR] [--json]

For each agent query (an agent's task prompt such as "Add an index to the invoices table
and write a migration for it", with the lessons and facts it should see as `relevant`),
`Memory.inject(prompt)` at 2,000 and 500 tokens: the recall of the relevant entries in
the block (mean over queries), whether the primary one is in it, the block's size in
tokens and entries, and the priority entries (pinned, corrections) it holds that are not
relevant. Then what the prompt "hi" and the off-topic queries get. The halves: `tune`
is every other agent query from the first, `test` the others (report `test`).

`--work DIR` keeps the copied, indexed workspace there (reused when it exists).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEMCLI_NO_DAEMON", "1")

from memcli.services.memory import Memory  # noqa: E402

BUDGETS = (2000, 500)


def load_queries(bench: Path) -> list[dict]:
    with open(bench / "queries.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def half(queries: list[dict], which: str) -> list[dict]:
    """Every other agent query: `tune` from the first, `test` from the second."""
    agent = [q for q in queries if q["kind"] == "agent"]
    if which == "all":
        return agent
    return agent[0::2] if which == "tune" else agent[1::2]


def workspace(bench: Path, work: str | None) -> Path:
    if work:
        ws = Path(work)
        if not ws.exists():
            shutil.copytree(bench / "ws", ws)
    else:
        ws = Path(tempfile.mkdtemp(prefix="inject-agent-")) / "ws"
        shutil.copytree(bench / "ws", ws)
    for path in ws.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    ws.chmod(0o755)
    return ws


def measure(mem: Memory, queries: list[dict], budget: int) -> dict:
    recall, primary, tokens, sizes, stray = [], [], [], [], []
    per_query = []
    for q in queries:
        packed = mem.inject(q["query"], max_tokens=budget, touch=False)
        chosen = [c.entry for c in packed.chosen]
        ids = {e.id for e in chosen}
        relevant = set(q["relevant"])
        got = len(relevant & ids)
        recall.append(got / len(relevant))
        primary.append(q["primary"] in ids)
        tokens.append(packed.tokens)
        sizes.append(len(chosen))
        stray.append(
            sum(1 for e in chosen if (e.pinned or e.type == "correction") and e.id not in relevant)
        )
        per_query.append(
            {
                "id": q["id"],
                "recall": round(got / len(relevant), 3),
                "missing": sorted(relevant - ids),
            }
        )
    return {
        "budget": budget,
        "queries": len(queries),
        "recall_pct": round(100 * statistics.mean(recall), 1),
        "primary_in_block_pct": round(100 * statistics.mean(primary), 1),
        "mean_tokens": round(statistics.mean(tokens), 1),
        "mean_entries": round(statistics.mean(sizes), 1),
        "unrelated_priority_per_block": round(statistics.mean(stray), 2),
        "per_query": per_query,
    }


def off_topic(mem: Memory, queries: list[dict]) -> dict:
    """What prompts about nothing in the memory get: entries per block (corrections
    among them), over "hi" and the benchmark's off-topic queries, at 2,000 tokens."""
    prompts = ["hi"] + [q["query"] for q in queries if q["kind"] == "offtopic"]
    entries, corrections = [], []
    for prompt in prompts:
        chosen = [c.entry for c in mem.inject(prompt, max_tokens=2000, touch=False).chosen]
        entries.append(len(chosen))
        corrections.append(sum(1 for e in chosen if e.type == "correction"))
    hi = mem.inject("hi", max_tokens=2000, touch=False).chosen
    return {
        "prompts": len(prompts),
        "mean_entries": round(statistics.mean(entries), 2),
        "mean_corrections": round(statistics.mean(corrections), 2),
        "empty_pct": round(100 * sum(1 for n in entries if n == 0) / len(entries), 1),
        "hi": [f"{c.entry.type}: {c.entry.text[:50]}" for c in hi],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default=str(ROOT.parent / "shared" / "bench" / "personal"))
    parser.add_argument("--half", choices=("tune", "test", "all"), default="test")
    parser.add_argument("--work", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bench = Path(args.bench)
    if not (bench / "queries.jsonl").is_file():
        bench = Path("/work/shared/bench/personal")
    queries = load_queries(bench)
    chosen = half(queries, args.half)
    ws = workspace(bench, args.work)
    mem = Memory(ws, notify=lambda message: None)
    mem.index()
    results = {
        "half": args.half,
        "budgets": [measure(mem, chosen, b) for b in BUDGETS],
        "off_topic": off_topic(mem, queries),
    }
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
        return
    print(f"agent prompts ({args.half} half, {len(chosen)} queries)")
    print("budget  recall%  primary%  tokens  entries  unrelated-priority")
    for r in results["budgets"]:
        print(
            f"{r['budget']:>6}  {r['recall_pct']:>7}  {r['primary_in_block_pct']:>8}  "
            f"{r['mean_tokens']:>6}  {r['mean_entries']:>7}  {r['unrelated_priority_per_block']:>6}"
        )
    o = results["off_topic"]
    print(
        f"off-topic ({o['prompts']} prompts incl. 'hi'): {o['mean_entries']} entries per block, "
        f"{o['mean_corrections']} corrections, {o['empty_pct']}% empty; 'hi' gets {o['hi']}"
    )
    for r in results["budgets"]:
        misses = [p for p in r["per_query"] if p["missing"]]
        print(
            f"missing at {r['budget']}: " + "; ".join(f"{p['id']} {p['missing']}" for p in misses)
        )


if __name__ == "__main__":
    main()
