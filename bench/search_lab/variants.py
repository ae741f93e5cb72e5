"""Ranking variants for lab.py: `var(candidates, P)` -> (order values, scores, kept).

P: gate (the cosine does not vote where the model does not read the pair), kwnorm (sat:
bm25/(bm25+sat); ideal: bm25 / the query's keyword mass, gamma a power of it; minmax),
ws (the semantic weight of the balanced blend), comb (max: max(blend, cosine); mean: the
blend; softmax: max(blend, sm · cosine + (1 - sm) · share); noisyor), c0/c1 (an affine
cosine scale), damp (the keyword share times min(1, cosine / damp)), nbor/nw (neighbour
lent as noisy-or), restw (the other parts' weight),
floor. The product's formula (c376088) is
dict(gate=1, kwnorm="ideal", comb="softmax", ws=0.55, sm=0.65, nbor=1, nw=0.6)."""

import numpy as np
from lab import best_neighbour, minmax


def var(c, P):  # noqa: ANN001, ANN201, N803 - a lab function
    sem = c.sem
    if P.get("gate"):
        sem = np.where(c.ereads & c.qreads, sem, 0.0)
    c0, c1 = P.get("c0", 0.0), P.get("c1", 1.0)
    s = np.clip((sem - c0) / (c1 - c0), 0, 1)
    k = np.maximum(c.kw, 0)
    kn = P.get("kwnorm", "sat")
    if kn == "sat":
        ks = k / (k + P.get("sat", 10.0))
    elif kn == "ideal":
        ks = np.clip(k / max(c.ideal, 1e-9), 0, 1) if c.ideal > 0 else np.zeros_like(k)
        ks = ks ** P.get("gamma", 1.0)
    elif kn == "minmax":
        ks = minmax(k)
    if P.get("damp"):  # a keyword share counts in full only beside a cosine of `damp`
        ks = ks * np.clip(np.clip(sem, 0, 1) / P["damp"], 0, 1)
    ws = P.get("ws", 0.5)
    both = ws * s + (1 - ws) * ks
    comb = P.get("comb", "max")
    if comb == "max":
        rel = np.maximum(both, s)
    elif comb == "noisyor":
        rel = 1 - (1 - s) * (1 - P.get("kk", 1.0) * ks)
    elif comb == "softmax":
        rel = np.maximum(both, P.get("sm", 0.8) * s + (1 - P.get("sm", 0.8)) * ks)
    else:
        rel = both
    if c.near is not None:
        nb = best_neighbour(rel, c.pos, c.near, c.size)
        rel = (
            1 - (1 - rel) * (1 - P.get("nw", 0.4) * nb)
            if P.get("nbor")
            else rel + P.get("nw", 0.4) * nb
        )
    rest = 0.05 * c.rec + 0.05 * c.imp + 0.02 * c.conf + 0.1 * c.dated
    score = rel + P.get("restw", 1.0) * rest
    keep = (rel >= P.get("floor", 0.25)) | (c.dated > 0)
    return score, score, keep
