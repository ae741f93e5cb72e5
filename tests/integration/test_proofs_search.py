"""Search paths the default sample never reaches, with the real bundled model (issue 19,
item 8): filters on the FAISS (HNSW) path used from `[index] ann_threshold` entries on,
and the neighbour boost (`[search] neighbour_weight`, on by default)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from memcli.index.embedder import SentenceTransformerEmbedder
from memcli.services.memory import Memory
from memcli.store.config import SearchSettings

pytestmark = pytest.mark.slow


class Remembering:
    """The real model; each distinct text is embedded once (these tests repeat their
    queries and index the same texts twice)."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.memo: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, self.inner.embed(missing), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.memo[t] for t in texts])


@pytest.fixture(scope="module")
def model() -> Remembering:
    return Remembering(SentenceTransformerEmbedder())  # the bundled all-MiniLM-L6-v2


def memory(ws: Path, model: Remembering, **env: str) -> Memory:
    """These proofs are about the order of every candidate, weak ones included: no
    relevance floor (tests/integration/test_search_floor.py proves the floor)."""
    env = {"search_relevance_floor": "0", **env}
    return Memory(
        ws,
        env={**os.environ, **{f"MEMCLI_{k.upper()}": v for k, v in env.items()}},
        embedder_factory=lambda: model,
        notify=lambda m: None,
    )


# ------------------------------------------------------------------ FAISS path filters

FILTERS = [
    ("How should I write Python tests?", {"types": ["preference"]}),
    ("How should I write Python tests?", {"types": ["skill", "lesson"]}),
    ("containers and images", {"keywords": ["docker"]}),
    ("frontend performance", {"since": "2026-10-01", "until": "2026-10-31"}),
    ("frontend performance", {"until": "2026-09-01"}),
    ("where does the company work", {}),  # archived entries stay out by default
    ("where does the company work", {"include_archived": True}),
    ("python", {"types": ["fact"], "keywords": ["python"], "since": "2026-09-01"}),
]


def passes(entry, flt: dict) -> bool:  # noqa: ANN001 - an Entry
    created = entry.meta.get("created", "")[:10]
    if entry.file == "archive.md" and not flt.get("include_archived"):
        return False
    if "types" in flt and entry.type not in flt["types"]:
        return False
    if "keywords" in flt and not set(flt["keywords"]) & set(entry.keywords):
        return False
    if "since" in flt and not created >= flt["since"]:
        return False
    return "until" not in flt or bool(created) and created <= flt["until"]


def test_filters_hold_on_the_faiss_path(workspace: Path, tmp_path: Path, model) -> None:
    """The same files searched through an HNSW index (ann_threshold lowered in
    memcli.toml) and through the exact NumPy scan: every filter holds on both, and
    (the index being small enough for HNSW to be exact) both rank alike."""
    Memory(workspace, notify=lambda m: None).forget("m1b2c3d4", by="person")  # archive.md has one
    flat_ws = tmp_path / "flat"
    shutil.copytree(workspace, flat_ws)
    with (workspace / "memcli.toml").open("a") as handle:
        handle.write("\n[index]\nann_threshold = 2\n")
    hnsw, flat = memory(workspace, model), memory(flat_ws, model)
    hnsw.index()
    flat.index()
    manifest = json.loads((workspace / ".memcli" / "index" / "local.json").read_text())
    assert manifest["vectors"].endswith(".faiss"), manifest["vectors"]  # the HNSW path
    flat_manifest = json.loads((flat_ws / ".memcli" / "index" / "local.json").read_text())
    assert flat_manifest["vectors"].endswith(".npy")
    everything = hnsw.entries(include_archived=True)
    for query, flt in FILTERS:
        expected = {e.id for e in everything if passes(e, flt)}
        assert expected, (query, flt)  # each filter keeps some entries and drops others
        assert len(expected) < len(everything) or flt == {"include_archived": True}
        for mode in ("hybrid", "semantic"):
            hits = hnsw.search(query, mode=mode, limit=50, touch=False, **flt)
            got = [h.entry.id for h in hits]
            assert got and set(got) <= expected, (query, flt, mode, set(got) - expected)
            exact = flat.search(query, mode=mode, limit=50, touch=False, **flt)
            assert got == [h.entry.id for h in exact], (query, flt, mode)
            assert [h.score for h in hits] == pytest.approx([h.score for h in exact], abs=1e-4)
    archived = hnsw.search("TechCorp AI product company", include_archived=True, limit=3)
    assert "m1b2c3d4" in [h.entry.id for h in archived]


# ------------------------------------------------------------------ neighbour boost

LOG = """---
memcli: 1
---
# Memory

## Facts
- Project Falcon is the new payments service we started in March <!-- id=mfalcon1 imp=0.5 -->
- Its builds take forty minutes because the Rust toolchain is compiled from scratch <!-- id=mfalcon2 imp=0.5 -->
- The office coffee machine is on the third floor next to the printers <!-- id=mcoffee1 imp=0.5 -->
- Project Heron is the analytics pipeline owned by the data team <!-- id=mheron01 imp=0.5 -->
- Kubernetes clusters are upgraded every quarter by the platform team <!-- id=mkube001 imp=0.5 -->
- Payments are reconciled nightly against the bank statements <!-- id=mpay0001 imp=0.5 -->
- The team lunch is on Fridays at noon <!-- id=mlunch01 imp=0.5 -->
- Frontend builds use Vite and finish in under a minute <!-- id=mvite001 imp=0.5 -->
"""


def test_neighbour_boost_lifts_the_continuation_in_an_ordered_log(
    empty_workspace: Path, model
) -> None:
    """In an ordered log (an episode file) a line that goes on about the entry before it
    ("Its builds…") names nothing the query asks for; by default it borrows
    neighbour_weight of its neighbour's relevance and ranks right after it, ahead of a
    merely similar entry (Project Heron)."""
    (empty_workspace / "episodes").mkdir()
    body = LOG.split("## Facts\n", 1)[1].replace("id=m", "id=e")
    (empty_workspace / "episodes" / "2026-11-20.md").write_text(body)
    query = "Tell me about Project Falcon"
    boosted = memory(empty_workspace, model).search(query, limit=4, touch=False)
    plain = memory(empty_workspace, model, search_neighbour_weight="0").search(
        query, limit=4, touch=False
    )
    assert [h.entry.id for h in plain][:1] == ["efalcon1"]
    assert [h.entry.id for h in plain].index("efalcon2") > 1  # without it: behind Heron
    assert [h.entry.id for h in boosted][:2] == ["efalcon1", "efalcon2"]
    lifted = {h.entry.id: h.components["relevance"] for h in boosted}
    relevance = {h.entry.id: h.components["relevance"] for h in plain}
    # neighbour_weight × its neighbour's relevance, lent as 1 - (1 - own)(1 - lent)
    lent = SearchSettings().neighbour_weight * relevance["efalcon1"]
    expected = 1 - (1 - relevance["efalcon2"]) * (1 - lent)
    assert lifted["efalcon2"] == pytest.approx(expected, abs=1e-6)
    assert lent > 0.1


def test_curated_file_entries_never_borrow_from_neighbours(
    empty_workspace: Path, model
) -> None:
    """memory.md is curated: two adjacent bullets are unrelated, so the same lines there
    rank exactly as with neighbour_weight 0 (DESIGN §3)."""
    (empty_workspace / "memory.md").write_text(LOG)
    query = "Tell me about Project Falcon"
    default = memory(empty_workspace, model).search(query, limit=8, touch=False)
    plain = memory(empty_workspace, model, search_neighbour_weight="0").search(
        query, limit=8, touch=False
    )
    assert [(h.entry.id, round(h.score, 9)) for h in default] == [
        (h.entry.id, round(h.score, 9)) for h in plain
    ]
    assert [h.entry.id for h in default].index("mfalcon2") > 1
