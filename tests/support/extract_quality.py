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

bench/data/said.jsonl (issue 37 §10) is how people say a change or a new fact in
conversation, English and Chinese, in several voices (`hand`: terse chat, rambling,
agent-session, formal, a dialogue with the assistant), against bench/data/said_memory_en.md
or said_memory_zh.md (`memory`). Each item is a user turn (`say`) or a short conversation
(`turns`) and the decisions expected: ADD with the normalised statement, UPDATE with the
target entry and the normalised statement, NOOP with the entry, or none (questions,
hypotheticals, plans, third parties, reported speech, the assistant's words, passing
remarks). Normalised: third person and short ("Works at Initech"); a new value of a
one-fact entry takes that entry's wording ("Uses Helix as the main editor" for "I'm on
Helix now" against "Uses Vim as the main editor"); "I left / sold / gave up X" alone is
"No longer" and the entry's wording ("No longer works at Globex"); a negation in the
person's own verb is theirs ("No longer drinks coffee"). The split is fixed by the id, not
chosen: `said_split` (sha256 of the id, even: tune, odd: test), decided before the rules
were tuned; statements written later in other voices to find the neighbours of the
phrasings tuned on (ids "t-…") are tune only. `run_said` scores ADD and UPDATE together (an UPDATE counts only with its
target entry), NOOP apart, texts normalized (spaces beside Chinese characters ignored),
and counts what must never happen: an UPDATE of a reflection, a statement from the
assistant's words.
"""

from __future__ import annotations

import hashlib
import json
import re
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


#: ids of the statements written after the halves were fixed, to tune on only ("t-e001")
TUNE_ONLY = "t-"


def said_split(item_id: str) -> str:
    """The half an item of said.jsonl belongs to, fixed by its id: sha256 even → tune;
    one written later to tune on (id starting TUNE_ONLY) → tune."""
    if item_id.startswith(TUNE_ONLY):
        return "tune"
    return "tune" if int(hashlib.sha256(item_id.encode()).hexdigest(), 16) % 2 == 0 else "test"


def said_text(text: str | None) -> str:
    """A stored text as compared: normalize_text, and no space beside a Chinese
    character ("用 VS Code 写代码" = "用VS Code写代码")."""
    cjk = r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]"
    return re.sub(rf"\s+(?={cjk})|(?<={cjk})\s+", "", normalize_text(text or ""))


def said_messages(item: dict[str, Any]) -> list[dict[str, str]]:
    return item.get("turns") or [{"role": "user", "content": item["say"]}]


def _said_predict(
    mem: Memory, item: dict[str, Any]
) -> list[tuple[str, str | None, str | None, str]]:
    """(action, entry, stored, the sentence it came from) of each decision, bookkeeping
    NOOPs (no entry) left out."""
    decisions = mem.extract(said_messages(item), source="bench", dry_run=True)
    return [
        (
            d.action,
            d.entry_id if d.action in ("UPDATE", "NOOP") else None,
            d.stored,
            d.candidate.said,
        )
        for d in decisions
        if not (d.action == "NOOP" and d.entry_id is None)
    ]


def score_said(
    items: list[dict[str, Any]], results: dict[str, list], reflections: set[str]
) -> dict[str, Any]:
    """ADD and UPDATE scored together (an UPDATE matches only with its target), NOOP apart;
    text accuracy over matched ADD / UPDATE; what must never happen counted."""
    tp = {"write": 0, "NOOP": 0}
    predicted = {"write": 0, "NOOP": 0}
    wanted = {"write": 0, "NOOP": 0}
    texts = same_text = 0
    errors = []
    never = {"reflection_updated": 0, "assistant_words": 0}
    for item in items:
        got = list(results[item["id"]])
        assistant = [m["content"] for m in said_messages(item) if m["role"] == "assistant"]
        for action, entry, _, said in got:
            predicted["NOOP" if action == "NOOP" else "write"] += action in ACTIONS
            never["reflection_updated"] += action == "UPDATE" and entry in reflections
            never["assistant_words"] += action in ("ADD", "UPDATE") and any(
                said in a for a in assistant
            )
        wrong = False
        for want in item["expect"]:
            action = want[0]
            entry = want[1] if action in ("UPDATE", "NOOP") else None
            text = want[-1] if action in ("ADD", "UPDATE") else None
            kind = "NOOP" if action == "NOOP" else "write"
            wanted[kind] += 1
            hit = [g for g in got if g[0] == action and g[1] == entry]
            if not hit:
                wrong = True
                continue
            best = next((g for g in hit if said_text(g[2]) == said_text(text)), hit[0])
            got.remove(best)
            tp[kind] += 1
            if text is not None:
                texts += 1
                same_text += said_text(best[2]) == said_text(text)
                wrong = wrong or said_text(best[2]) != said_text(text)
        if wrong or any(g[0] in ACTIONS for g in got):
            errors.append(
                {
                    "id": item["id"],
                    "say": item.get("say") or item["turns"],
                    "want": item["expect"],
                    "got": [g[:3] for g in results[item["id"]]],
                }
            )

    def pr(kind: str) -> dict[str, float]:
        return {
            "precision": round(tp[kind] / predicted[kind], 3) if predicted[kind] else 1.0,
            "recall": round(tp[kind] / wanted[kind], 3) if wanted[kind] else 1.0,
            "predicted": predicted[kind],
            "expected": wanted[kind],
        }

    nothing = [i for i in items if not i["expect"]]
    clean = sum(1 for i in nothing if not any(g[0] in ACTIONS for g in results[i["id"]]))
    return {
        "utterances": len(items),
        "add_update": pr("write"),
        "noop": pr("NOOP"),
        "nothing_kept_clean": f"{clean}/{len(nothing)}",
        "text_normalized": round(same_text / texts, 3) if texts else 1.0,
        **never,
        "errors": errors,
    }


def run_said(
    root: Path, memory: Callable[[Path], Memory], splits: tuple[str, ...] = ("tune", "test")
) -> dict[str, dict[str, Any]]:
    """said.jsonl's items of `splits`, each decided (dry run) in a workspace under `root`
    holding its memory (en or zh), scored per split and language (see the docstring)."""
    items = [i for i in load(DATA / "said.jsonl") if i["split"] in splits]
    mems, reflections = {}, set()
    for name in sorted({i["memory"] for i in items}):
        workspace = root / name
        (workspace / ".memcli").mkdir(parents=True)
        shutil.copy(DATA / f"said_memory_{name}.md", workspace / "memory.md")
        mems[name] = memory(workspace)
        reflections |= {e.id for e in mems[name].list() if e.type == "reflection"}
    results = {i["id"]: _said_predict(mems[i["memory"]], i) for i in items}
    report = {}
    for split in splits:
        mine = [i for i in items if i["split"] == split]
        report[split] = score_said(mine, results, reflections)
        for lang in sorted({i["lang"] for i in mine}):
            ours = [i for i in mine if i["lang"] == lang]
            report[f"{split} {lang}"] = score_said(ours, results, reflections)
    return report
