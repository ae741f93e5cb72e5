"""How many of reflect's offline proposals a reader would keep (DESIGN §6, issue 26 §3),
on the labelled clusters of bench/data/reflect_themes.jsonl: each cluster is a few
entries, English or Chinese, labelled a theme (entries about one subject: marathon
training, learning Japanese) or not (unrelated entries, or entries that only share a
word). The clusters of one half are mixed into one pool, as in a workspace, and go
through memcli.logic.reflect.extractive_insights with the bundled model's vectors.

A proposal is kept when at least three of its evidence entries, and two thirds of them,
come from one theme cluster. Precision: kept / proposals; recall: theme clusters with a
kept proposal / theme clusters. bench/reflect_quality.py prints the tables (and a sweep of
the cohesion thresholds on the tune half); tests/integration/test_reflect.py asserts on
the held-out half.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memcli.core.models import Entry
from memcli.logic import reflect
from memcli.store.config import ReflectSettings

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def load() -> list[dict[str, Any]]:
    path = DATA / "reflect_themes.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def pool_of(clusters: Sequence[dict[str, Any]]) -> list[Entry]:
    """The clusters' entries as one workspace's, ids "<cluster>-<n>"."""
    out = []
    for cluster in clusters:
        for n, text in enumerate(cluster["entries"]):
            entry_id = f"{cluster['id']}-{n}"
            meta = {"id": entry_id, "created": "2026-11-01T10:00:00Z"}
            out.append(Entry(entry_id, text, "fact", "memory.md", 0, meta, True))
    return out


def score(
    clusters: Sequence[dict[str, Any]],
    embed: Callable[[Sequence[str]], np.ndarray],
    cfg: ReflectSettings,
    cjk_overlap: float | None = None,
) -> dict[str, Any]:
    """Proposals, kept ones, precision and recall over `clusters` in one pool."""
    pool = pool_of(clusters)
    vectors = embed([e.text for e in pool])
    cfg = dataclasses.replace(cfg, max_insights=1000)
    saved = reflect.THEME_OVERLAP_CJK
    if cjk_overlap is not None:
        reflect.THEME_OVERLAP_CJK = cjk_overlap
    try:
        insights, why = reflect.extractive_insights(pool, vectors, cfg, embed)
    finally:
        reflect.THEME_OVERLAP_CJK = saved
    themes = {c["id"] for c in clusters if c["theme"]}
    found: set[str] = set()
    kept = 0
    shown = []
    for insight in insights:
        origin = Counter(e.id.split("-")[0] for e in insight.evidence)
        cluster, count = origin.most_common(1)[0]
        good = cluster in themes and count >= 3 and count * 3 >= 2 * len(insight.evidence)
        kept += good
        if good:
            found.add(cluster)
        shown.append({"kept": good, "text": insight.text, "from": dict(origin)})
    proposals = len(insights)
    return {
        "clusters": len(clusters),
        "themes": len(themes),
        "proposals": proposals,
        "kept": kept,
        "precision": round(kept / proposals, 3) if proposals else 1.0,
        "recall": round(len(found) / len(themes), 3) if themes else 1.0,
        "insights": shown,
        "why_not": why,
    }


def run(
    embed: Callable[[Sequence[str]], np.ndarray],
    cfg: ReflectSettings | None = None,
    splits: Sequence[str] = ("tune", "test"),
) -> dict[str, dict[str, Any]]:
    """score() per half (and per language within it) at the shipped settings."""
    cfg = cfg or ReflectSettings()
    clusters = load()
    report = {}
    for split in splits:
        mine = [c for c in clusters if c["split"] == split]
        report[split] = score(mine, embed, cfg)
        for lang in ("en", "zh"):
            report[f"{split} {lang}"] = score([c for c in mine if c["lang"] == lang], embed, cfg)
    return report
