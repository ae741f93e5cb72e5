"""Offline ranking lab over dumped signals (dump_persona.py / dump_locomo.py): the
product's formula of before (`main_rank`) and the figures the personal benchmark's runner
and bench/locomo.py compute, from the dumps, in seconds instead of minutes. Reproduces
both exactly for the formula of dc0a7c8 (bench/README.md, "One score")."""

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT.parent / "shared" / "bench" / "personal"))
import run as R  # noqa: E402  (the personal benchmark's runner: its scoring)


def minmax(v):
    v = np.asarray(v, float)
    if len(v) == 0:
        return v
    lo, hi = v.min(), v.max()
    if hi - lo < 1e-12:
        return np.where(v > 0, 1.0, 0.0) if hi > 0 else np.zeros_like(v)
    return (v - lo) / (hi - lo)


def best_neighbour(own, pos, near, size):
    slot = np.full(size + 1, -1)
    slot[pos] = np.arange(len(pos))
    found = slot[near[pos]]
    vals = np.where(found >= 0, own[np.maximum(found, 0)], 0.0)
    return np.maximum(vals.max(axis=1), 0.0)


class Ctx:  # one query's candidates
    def __init__(s, **kw):
        s.__dict__.update(kw)


def main_rank(c, P):
    sem, kw = c.sem, c.kw
    if P.get("gate"):
        sem = np.where(c.ereads & c.qreads, sem, 0.0)
    within = 0.5 * minmax(sem) + 0.5 * minmax(kw)
    s = np.clip(sem, 0, 1)
    k = np.maximum(kw, 0)
    sat = P.get("sat", 10.0)
    ks = k / (k + sat)
    rel = np.maximum(0.5 * s + 0.5 * ks, s)
    if c.near is not None:
        within = within + 0.4 * best_neighbour(within, c.pos, c.near, c.size)
        rel = rel + 0.4 * best_neighbour(rel, c.pos, c.near, c.size)
    rest = 0.05 * c.rec + 0.05 * c.imp + 0.02 * c.conf + 0.1 * c.dated
    score = rel + rest
    ranking = within + rest
    keep = (rel >= P.get("floor", 0.25)) | (c.dated > 0)
    return ranking, score, keep


def ordered_ids(c, fn, P, limit=10):
    ranking, score, keep = fn(c, P)
    idx = np.flatnonzero(keep)
    o = idx[np.lexsort((c.pos[idx], -ranking[idx]))][:limit]
    return [c.ids[c.pos[i]] for i in o.tolist()]


def candidates(r, ids, dump, ereads, qreads, near):
    """One query's candidates (a dumped row `r`) with the values of their entries
    (`dump`'s imp, conf, rec over all entries; `ereads` over all entries)."""
    pos = np.array(r["pos"], int)
    return Ctx(
        ids=ids,
        pos=pos,
        sem=np.array(r["sem"]),
        kw=np.array(r["kw"]),
        dated=np.array(r["dated"]),
        ereads=ereads[pos],
        qreads=qreads,
        ideal=r["ideal"][0],
        qdf=r["ideal"][1],
        **{k: np.array(dump[k])[pos] for k in ("imp", "conf", "rec")},
        near=near,
        size=len(ids),
    )


def persona(path):
    d = json.loads(Path(path).read_text())
    ids = [e["id"] for e in d["entries"]]
    ereads = np.array([e["reads"] for e in d["entries"]])
    return [(r["q"], candidates(r, ids, d, ereads, r["qreads"], None)) for r in d["queries"]]


def eval_persona(data, fn, P, kinds=None):
    rows = []
    for q, c in data:
        if kinds and q["kind"] not in kinds:
            continue
        r = R.score_query(q, ordered_ids(c, fn, P))
        r["kind"] = q["kind"]
        r["lang"] = q["lang"]
        rows.append(r)
    agg = R.aggregate(rows)
    byk = {
        k: R.aggregate([r for r in rows if r["kind"] == k])
        for k in ("paraphrase", "zh", "cross", "temporal", "agent", "lexical")
    }
    offzh = [r for r in rows if "empty" in r and r["lang"] == "zh"]
    return dict(
        top1=agg["top1"],
        top3=agg["top3"],
        r5=agg["recall5"],
        para=byk["paraphrase"]["top3"],
        zh=byk["zh"]["top3"],
        cross=byk["cross"]["top3"],
        temp=byk["temporal"]["top3"],
        agent=byk["agent"]["top3"],
        lost=agg["lost"],
        empty=agg["empty"],
        zhempty=round(100 * sum(r["empty"] for r in offzh) / len(offzh), 1) if offzh else None,
    )


def locomo(path):
    convs = json.loads(Path(path).read_text())
    out = []
    for cv in convs:
        near = np.array(cv["near"], int)
        ids = list(range(len(cv["turn"])))
        reads = np.ones(len(ids), bool)  # English: every text read
        for r in cv["queries"]:
            out.append((r, cv["turn"], candidates(r, ids, cv, reads, True, near)))
    return out


def eval_locomo(data, fn, P):
    m = {1: [], 5: [], 10: []}
    for r, turn, c in data:
        got = ordered_ids(c, fn, P, 10)
        ev = set(r["ev"])
        for k in m:
            cov = {turn[i] for i in got[:k]}
            m[k].append(len(cov & ev) / len(ev))
    return {f"R@{k}": round(100 * np.mean(v), 1) for k, v in m.items()}


def fmt(d):
    return " ".join(f"{k}={v}" for k, v in d.items())
