"""Quality of `memcli extract` on a labelled set of chat turns (bench/data/extract.jsonl)
against a small fixed memory (bench/data/extract_memory.md), through Memory.extract
(dry run: what the CLI decides, with the real embedding model, offline rules).

Each line holds one user turn (`say`), its `split` (tune: the half the rules and
thresholds were tuned on; test: the other half) and the expected decisions: ADD with
the stored text, UPDATE with the entry id and the stored text, NOOP with the entry id,
or none at all (questions, hypotheticals, other people, small talk, hedged statements).
A predicted decision matches an expected one of the same action (and entry, for UPDATE
and NOOP); precision and recall are over decisions, text match over matched ADD/UPDATE
(exact, and normalized: case, spaces and end punctuation).

    python bench/extract_quality.py [--json] [--show-errors]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memcli.core.models import normalize_text  # noqa: E402
from memcli.services.memory import Memory  # noqa: E402

DATA = ROOT / "bench" / "data"
ACTIONS = ("ADD", "UPDATE", "NOOP")


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def predict(mem: Memory, say: str) -> list[tuple[str, str | None, str | None]]:
    """(action, entry id, stored text) of each decision, bookkeeping NOOPs left out."""
    decisions = mem.extract([{"role": "user", "content": say}], source="bench", dry_run=True)
    out = []
    for d in decisions:
        if d.action == "NOOP" and d.entry_id is None:
            continue  # said and corrected within the turn: nothing to count
        entry = d.entry_id if d.action in ("UPDATE", "NOOP") else None
        out.append((d.action, entry, d.stored))
    return out


def expected(item: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    out = []
    for e in item["expect"]:
        if e[0] == "ADD":
            out.append(("ADD", None, e[1]))
        elif e[0] == "UPDATE":
            out.append(("UPDATE", e[1], e[2]))
        else:
            out.append(("NOOP", e[1], None))
    return out


def score(items: list[dict[str, Any]], results: dict[str, list]) -> dict[str, Any]:
    tp: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    wanted: Counter[str] = Counter()
    exact = normalized = texts = 0
    errors = []
    for item in items:
        want = expected(item)
        got = list(results[item["id"]])
        for action, _, _ in got:
            predicted[action] += 1
        matched = []
        for w in want:
            wanted[w[0]] += 1
            same = [g for g in got if g[0] == w[0] and g[1] == w[1]]
            if not same:
                continue
            best = next((g for g in same if g[2] == w[2]), None) or same[0]
            got.remove(best)
            tp[w[0]] += 1
            matched.append((w, best))
        for w, g in matched:
            if w[0] in ("ADD", "UPDATE"):
                texts += 1
                exact += g[2] == w[2]
                normalized += normalize_text(g[2] or "") == normalize_text(w[2] or "")
        if (
            got
            or len(matched) < len(want)
            or any(
                w[0] != "NOOP" and normalize_text(g[2] or "") != normalize_text(w[2] or "")
                for w, g in matched
            )
        ):
            errors.append(
                {"id": item["id"], "say": item["say"], "want": want, "got": results[item["id"]]}
            )

    def pr(keys: tuple[str, ...]) -> dict[str, float]:
        t = sum(tp[k] for k in keys)
        p = sum(predicted[k] for k in keys)
        w = sum(wanted[k] for k in keys)
        return {
            "precision": round(t / p, 3) if p else 1.0,
            "recall": round(t / w, 3) if w else 1.0,
            "predicted": p,
            "expected": w,
        }

    nothing = [i for i in items if not i["expect"]]
    clean = sum(1 for i in nothing if not results[i["id"]])
    return {
        "utterances": len(items),
        "all": pr(ACTIONS),
        **{a: pr((a,)) for a in ACTIONS},
        "nothing_kept_clean": f"{clean}/{len(nothing)}",
        "text_exact": round(exact / texts, 3) if texts else 1.0,
        "text_normalized": round(normalized / texts, 3) if texts else 1.0,
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args()
    items = load(DATA / "extract.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        (workspace / ".memcli").mkdir()
        shutil.copy(DATA / "extract_memory.md", workspace / "memory.md")
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        mem = Memory(workspace, notify=lambda message: None)
        results = {item["id"]: predict(mem, item["say"]) for item in items}
    report = {
        split: score([i for i in items if i["split"] == split], results)
        for split in ("tune", "test")
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
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
    if args.show_errors:
        for split, r in report.items():
            for e in r["errors"]:
                print(f"[{split}] {e['id']} {e['say']}\n    want {e['want']}\n    got  {e['got']}")


if __name__ == "__main__":
    main()
