"""Extract's decisions on a labelled set of chat turns (DESIGN §7, issue 15 §5):
bench/data/extract.jsonl against the fixed memory bench/data/extract_memory.md, each turn
decided by Memory.extract (dry run: what the CLI decides, offline rules and the
embedding model the Memory is given). bench/extract_quality.py prints the tables;
tests/integration/test_extract.py asserts on the held-out half.

Each line holds one user turn (`say`), its `split` (tune: the half the rules and
thresholds were tuned on; test: the other half), `lang` and the expected decisions: ADD
with the stored text, UPDATE with the entry id and the stored text, NOOP with the entry
id, or none at all (questions, hypotheticals, other people, small talk, hedged
statements). A predicted decision matches an expected one of the same action (and entry,
for UPDATE and NOOP); precision and recall are over decisions, text match over matched
ADD/UPDATE (exact, and normalized: case, spaces and end punctuation).

bench/data/extract_targets.jsonl (issue 26 §1) holds target-choice cases: each its own
small memory (`memory`: id, text, created; several entries of one slot, oldest first)
and a turn that gives the slot a new value, naming the old one or not; the decision
expected is one UPDATE of the entry named, else of the newest of the slot. `run_targets`
scores them like the turns above, plus target accuracy (the one UPDATE goes to the entry
expected) and text accuracy (its stored text, normalized).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.core.models import normalize_text
from memcli.services.memory import Memory

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"
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


def run(
    workspace: Path, memory: Callable[[Path], Memory], splits: tuple[str, ...] = ("tune", "test")
) -> dict[str, dict[str, Any]]:
    """The labelled turns of `splits` decided in a workspace made at `workspace` (the fixed
    memory), scored per split. `memory` opens the Memory (the model is the caller's)."""
    items = [i for i in load(DATA / "extract.jsonl") if i["split"] in splits]
    workspace.mkdir(parents=True)
    (workspace / ".memcli").mkdir()
    shutil.copy(DATA / "extract_memory.md", workspace / "memory.md")
    mem = memory(workspace)
    results = {item["id"]: predict(mem, item["say"]) for item in items}
    return {split: score([i for i in items if i["split"] == split], results) for split in splits}


def _memory_md(entries: list[list[str]]) -> str:
    lines = [
        f"- {text} <!-- id={entry_id} created={created} -->" for entry_id, text, created in entries
    ]
    return "# Memory\n\n## Facts\n" + "\n".join(lines) + "\n"


def run_targets(
    root: Path, memory: Callable[[Path], Memory], splits: tuple[str, ...] = ("tune", "test")
) -> dict[str, dict[str, Any]]:
    """The target-choice cases of `splits`, each decided in a workspace of its own made
    under `root` holding its memory, scored per split (see the module docstring)."""
    items = [i for i in load(DATA / "extract_targets.jsonl") if i["split"] in splits]
    results = {}
    for item in items:
        workspace = root / item["id"]
        (workspace / ".memcli").mkdir(parents=True)
        (workspace / "memory.md").write_text(_memory_md(item["memory"]), encoding="utf-8")
        results[item["id"]] = predict(memory(workspace), item["say"])
    report = {}
    for split in splits:
        mine = [i for i in items if i["split"] == split]
        scored = score(mine, results)
        target = text = 0
        for item in mine:
            _, want_id, want_text = item["expect"][0]
            updates = [g for g in results[item["id"]] if g[0] == "UPDATE"]
            if len(updates) == 1 and updates[0][1] == want_id:
                target += 1
                text += normalize_text(updates[0][2] or "") == normalize_text(want_text)
        scored["target_accuracy"] = round(target / len(mine), 3) if mine else 1.0
        scored["target_and_text"] = round(text / len(mine), 3) if mine else 1.0
        report[split] = scored
    return report
