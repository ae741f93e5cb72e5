"""Dump what memcli's search ranks, per query, for the offline lab (lab.py): the
candidates' cosines, BM25 scores, the entries' importance, confidence and recency, which
texts the model reads, and the query's keyword mass.

    python bench/search_lab/dump.py persona PERSONA_DIR OUT.json   # ws/ + queries.jsonl
    python bench/search_lab/dump.py locomo tune|test OUT.json       # track A, product path

The persona's workspace is copied and indexed with the bundled model; LoCoMo's
conversations are imported as `memcli import --conversation` does. The candidates are
SearchService.signals' (each side's candidate_pool, plus neighbours in ordered logs).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.locomo import DEFAULT_FILE, evidence_of, halves, normalise_id, turns_of  # noqa: E402
from memcli.core.dates import named_periods  # noqa: E402
from memcli.core.filters import expand_query  # noqa: E402
from memcli.index.coverage import reads  # noqa: E402
from memcli.index.sync import keyword_text  # noqa: E402
from memcli.index.tokenize import tokenize  # noqa: E402
from memcli.logic.search import in_periods, ranking_time, recency  # noqa: E402
from memcli.services.memory import Memory  # noqa: E402


def ideal_of(ordered: list, settings: object):  # noqa: ANN201 - query -> (mass, df per term)
    """The query's keyword mass as the product computes it (Postings.ideal), and each of
    its terms' document frequency."""
    df: Counter[str] = Counter()
    for e in ordered:
        df.update(set(tokenize(keyword_text(e))))
    n = len(ordered)

    def one(query: str) -> tuple[float, dict[str, int]]:
        counts = Counter(tokenize(expand_query(query, settings.synonyms)))  # type: ignore[attr-defined]
        qdf = {t: df.get(t, 0) for t in counts}
        mass = sum(q * math.log(1 + (n - qdf[t] + 0.5) / (qdf[t] + 0.5)) for t, q in counts.items())
        return mass, qdf

    return one


def signals_of(mem: Memory, text: str, ideal, neighbours: bool) -> dict:  # noqa: ANN001
    svc = mem.searcher
    view = svc.view()
    now = ranking_time()
    periods = named_periods(text, now)
    allowed = np.ones(len(view.ordered), dtype=bool)
    near = view.arrays.near if neighbours else None
    s = svc.signals(text, "hybrid", view, allowed, None, near, periods)
    return dict(
        pos=s.positions.tolist(),
        sem=s.semantic.tolist(),
        kw=s.keyword.tolist(),
        dated=in_periods(view.arrays.created[s.positions], periods).tolist(),
        qreads=reads("", text),
        ideal=ideal(text),
    )


def entry_values(mem: Memory) -> dict:
    view = mem.searcher.view()
    values = view.arrays.values(np.arange(len(view.ordered)))
    rec = recency(values, ranking_time(), mem.settings.search)
    return dict(imp=values.importance.tolist(), conf=values.confidence.tolist(), rec=rec.tolist())


def persona(folder: Path, out: Path) -> None:
    ws = Path(tempfile.mkdtemp()) / "ws"
    shutil.copytree(folder / "ws", ws)
    mem = Memory(ws, notify=lambda m: None)
    mem.index()
    ordered = mem.searcher.view().ordered
    ideal = ideal_of(ordered, mem.settings)
    lines = (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    rows = []
    for line in filter(str.strip, lines):
        q = json.loads(line)
        rows.append(dict(q=q, **signals_of(mem, q["query"], ideal, neighbours=False)))
    entries = [dict(id=e.id, text=e.text, reads=reads("", e.text)) for e in ordered]
    out.write_text(json.dumps(dict(entries=entries, queries=rows, **entry_values(mem))))
    print("dumped", len(rows), "queries over", len(entries), "entries")


def locomo(half: str, out: Path) -> None:
    data = json.loads(Path(DEFAULT_FILE).read_text(encoding="utf-8"))
    keep = set(halves(data)[half])
    convs = []
    for sample in (s for s in data if str(s.get("sample_id")) in keep):
        sid = str(sample["sample_id"])
        ws = Path(tempfile.mkdtemp()) / sid
        ws.mkdir()
        (ws / "memory.md").write_text("# Memory\n\n## Facts\n", encoding="utf-8")
        mem = Memory(ws, notify=lambda m: None)
        mem.import_conversation(json.dumps(sample), f"{sid}.json")
        mem.index()
        view = mem.searcher.view()
        ideal = ideal_of(view.ordered, mem.settings)
        known = {normalise_id(t["dia_id"]) for t in turns_of(sample)}
        rows = []
        for question in sample.get("qa", []):
            evidence = evidence_of(question, known)
            if int(question.get("category", 0)) == 5 or not evidence:
                continue
            text = str(question["question"])
            rows.append(
                dict(q=text, cat=int(question.get("category", 0)), ev=evidence,
                     **signals_of(mem, text, ideal, neighbours=True))
            )  # fmt: skip
        convs.append(
            dict(sid=sid, turn=[normalise_id(e.meta.get("turn", "")) for e in view.ordered],
                 near=view.arrays.near.tolist(), queries=rows, **entry_values(mem))
        )  # fmt: skip
        print(sid, len(view.ordered), "turns", len(rows), "questions", flush=True)
    out.write_text(json.dumps(convs))


if __name__ == "__main__":
    kind, what, target = sys.argv[1:4]
    if kind == "persona":
        persona(Path(what), Path(target))
    else:
        locomo(what, Path(target))
