"""Pure logic of the index layer: tokens, BM25, sync planning, ranking, FAISS recall."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from memcli.core.models import Entry
from memcli.index.keyword import KeywordIndex
from memcli.index.sync import plan_sync
from memcli.index.tokenize import tokenize
from memcli.index.vectors import VectorIndex
from memcli.logic.search import EntryValues, Signals, rank, recency
from memcli.services.memory import Memory
from memcli.store.access import Access
from memcli.store.config import IndexSettings, SearchSettings, Settings
from tests.support.fakes import HashingEmbedder
from tests.support.legacy_index import save_npz


def test_tokenize_english_and_cjk() -> None:
    assert tokenize("The cats were running to the adoption agencies") == [
        "cat",
        "run",
        "adopt",
        "agenc",
    ]
    tokens = tokenize("发布前跑数据库迁移")
    assert "迁移" in tokens and "数据" in tokens and "迁" in tokens
    assert tokenize("カタカナ") == ["カ", "タ", "カ", "ナ", "カタ", "タカ", "カナ"]


def test_bm25_prefers_rarer_terms_and_round_trips(tmp_path: Path) -> None:
    docs = ["python testing with pytest", "python packaging", "docker images", "数据库迁移 发布"]
    index = KeywordIndex.build([tokenize(d) for d in docs])
    scores = index.scores("pytest python")
    assert scores.argmax() == 0 and scores[2] == 0
    assert index.scores("迁移").argmax() == 3 and index.scores("迁移")[3] > 0
    index.save(tmp_path / "k.npz")
    again = KeywordIndex.load(tmp_path / "k.npz")
    assert np.allclose(again.scores("pytest python"), scores)


def test_keyword_file_loads_in_one_read_and_refuses_damage(tmp_path: Path) -> None:
    """The keyword file is one read (no zip archive: a cold search imports no zipfile);
    an earlier memcli's .npz still loads; a cut or altered file is a ValueError (the
    local index then says it is damaged and rebuilds), never an index of other postings."""
    docs = ["python testing with pytest", "python packaging", "数据库迁移 发布", ""]
    index = KeywordIndex.build([tokenize(d) for d in docs], k1=1.5, b=0.6)
    path = tmp_path / "keyword-x.kw"
    index.save(path)
    again = KeywordIndex.load(path)
    assert again.vocab == index.vocab and (again.k1, again.b) == (1.5, 0.6)
    for name in ("indptr", "docs", "tfs", "doc_len"):
        assert np.array_equal(getattr(again, name), getattr(index, name))
        assert getattr(again, name).flags.writeable
    assert np.allclose(again.scores("python 迁移"), index.scores("python 迁移"))
    legacy = tmp_path / "keyword-old.npz"  # the form memcli wrote before
    save_npz(index, legacy)
    assert np.allclose(KeywordIndex.load(legacy).scores("python"), index.scores("python"))
    data = path.read_bytes()
    for damaged in (data[:-8], data + b"\0" * 8, data[:12], b"PK\x03\x04garbage", b"x" * 40):
        path.write_bytes(damaged)
        with pytest.raises((ValueError, EOFError)):
            KeywordIndex.load(path)
    end = 16 + int.from_bytes(data[8:16], "little")
    head = json.loads(data[16:end])
    terms, postings, rows = len(index.vocab) + 1, len(index.docs), len(index.doc_len)

    def padded(*counts: int) -> int:
        return sum(4 * c + (-4 * c) % 8 for c in counts)

    # frequencies two short, the row lengths two long: the same bytes in all
    shifted = next(
        [terms, postings, postings - k, rows + k]
        for k in (1, 2, 3, 4)
        if padded(postings - k, rows + k) == padded(postings, rows)
    )
    for sizes in ([1, 1, 1, 0], [terms, 2, 2, 4], shifted):  # postings that disagree
        raw = json.dumps({**head, "sizes": sizes}).encode()
        raw += b" " * (-(16 + len(raw)) % 8)
        path.write_bytes(data[:8] + len(raw).to_bytes(8, "little") + raw + data[end:])
        with pytest.raises(ValueError):
            KeywordIndex.load(path)


def test_plan_sync() -> None:
    plan = plan_sync(
        {"a": "1", "b": "2", "c": "3"},
        [("a", "1"), ("b", "9"), ("d", "4")],
        ["9", "4"],
    )
    assert plan.added == ["d"] and plan.changed == ["b"] and plan.removed == ["c"]
    assert plan.to_embed == ["9", "4"] and not plan.is_noop
    assert plan_sync({"a": "1"}, [("a", "1")], []).is_noop


def _entry(i: int, **meta: str) -> Entry:
    return Entry(f"m{i}", f"text {i}", "fact", "memory.md", i + 1, dict(meta))


def test_rank_weights_recency_importance_not_access_nor_reflections() -> None:
    now = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    entries = [
        _entry(0, imp="0.9", created="2026-10-23"),
        _entry(1, imp="0.1", created="2026-11-22"),
        _entry(2, imp="0.9", created="2026-10-23"),
    ]
    signals = Signals(np.array([0, 1, 2]), np.array([0.5, 0.5, 0.5]), np.array([1.0, 1.0, 1.0]))
    cfg = SearchSettings(neighbour_weight=0.0)
    hits = rank(entries, signals, settings=cfg, mode="hybrid", now=now, access={}, limit=3)
    # importance outweighs a month of recency; equal scores keep file order
    assert [h.entry.id for h in hits] == ["m0", "m2", "m1"]
    assert hits[0].components["recency"] == pytest.approx(0.5)
    # a fresh access (a search just returned m2) moves nothing, it only shows
    seen = {"m2": Access(3, "2026-11-22T00:00:00Z")}
    again = rank(entries, signals, settings=cfg, mode="hybrid", now=now, access=seen, limit=3)
    assert [(h.entry.id, h.score) for h in again] == [(h.entry.id, h.score) for h in hits]
    assert again[1].components["accesses"] == 3 and again[0].components["accesses"] == 0
    # an entry that a reflection cites keeps its relevance (no penalty)
    reflection = Entry("r", "text r", "reflection", "memory.md", 9, {"src": "m2", "by": "reflect"})
    with_reflection = rank(
        [*entries, reflection], signals, settings=cfg, mode="hybrid", now=now, limit=3
    )
    assert with_reflection[1].components["relevance"] == hits[1].components["relevance"]
    updated = _entry(6, created="2026-01-01", updated="2026-10-23")
    month = SearchSettings(half_life_days=30)
    recent = recency(
        EntryValues.of([entries[1], _entry(5, created="2026-10-23"), updated]), now, month
    )
    assert recent == pytest.approx([1.0, 0.5, 0.5])
    keyword_only = rank(
        entries,
        Signals(np.array([0, 1]), np.zeros(2), np.array([0.0, 2.0])),
        settings=cfg,
        mode="keyword",
        now=now,
        access={},
        limit=5,
    )
    assert [h.entry.id for h in keyword_only] == ["m1"]


@pytest.mark.slow  # a second or more: the whole suite runs it, the fast tier stays under a minute
def test_hnsw_recall_against_exact() -> None:
    rng = np.random.default_rng(7)
    centers = rng.normal(size=(50, 64))
    data = centers[rng.integers(0, 50, 6000)] + 0.3 * rng.normal(size=(6000, 64))
    data = (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)
    exact = VectorIndex.build(data, ann_threshold=10**9)
    approx = VectorIndex.build(data, ann_threshold=1000, ef_search=128)
    assert exact.kind == "flat" and approx.kind == "hnsw"
    recall = []
    for q in data[rng.integers(0, 6000, 200)]:
        truth = set(exact.search(q, 10)[1].tolist())
        recall.append(len(truth & set(approx.search(q, 10)[1].tolist())) / 10)
    assert np.mean(recall) >= 0.98


def test_edit_of_an_hnsw_workspace_appends_to_the_graph(workspace: Path) -> None:
    settings = Settings(index=IndexSettings(ann_threshold=10, hnsw_ef_search=64))
    mem = Memory(workspace, settings=settings, embedder_factory=HashingEmbedder, notify=print)
    mem.index()
    local = workspace / ".memcli" / "index" / "local.json"
    first = json.loads(local.read_text())
    assert first["vectors"].endswith(".faiss") and first["log_size"] == 0
    vectors = (local.parent / first["vectors"]).stat()
    path = workspace / "memory.md"
    path.write_text(path.read_text().replace("Has a cat named Miso", "Has a cat named Tofu"))
    assert mem.index().embedded == 1
    manifest = json.loads(local.read_text())
    # appended to the log and to the graph in memory; the vector file is not rewritten
    assert manifest["generation"] == first["generation"] and manifest["log_size"] > 0
    assert (local.parent / first["vectors"]).stat().st_mtime_ns == vectors.st_mtime_ns
    backend = mem.index_manager.ensure()
    assert backend.vectors.graph.ntotal == backend.count() + 1  # the old vector: one dead row
    hits = mem.search("cat named Tofu", limit=3, touch=False)
    assert "Tofu" in hits[0].entry.text
    fresh = Memory(workspace, settings=settings, embedder_factory=HashingEmbedder, notify=print)
    again = fresh.search("cat named Tofu", limit=3, touch=False)  # read back from disk
    assert [(h.entry.id, round(h.score, 6)) for h in again] == [
        (h.entry.id, round(h.score, 6)) for h in hits
    ]
    assert not any("Miso" in h.entry.text for h in fresh.search("Miso", limit=40, touch=False))


def test_incremental_sync_embeds_only_changed(workspace: Path) -> None:
    embedder = HashingEmbedder()
    mem = Memory(workspace, embedder_factory=lambda: embedder, notify=lambda m: None)
    first = mem.index()
    assert first.added == 37 and first.embedded == 37
    assert mem.index().embedded == 0
    path = workspace / "memory.md"
    path.write_text(path.read_text().replace("Has a cat named Miso", "Has a cat named Tofu"))
    report = mem.index()
    # The hand-written line has a text-derived id: its old id is removed, a new one added.
    assert (report.added, report.removed, report.embedded) == (1, 1, 1)
    mem.edit("m8f3a2c1", keywords=["python", "pytest", "fixtures"], by="person")
    report = mem.index()
    assert report.changed == 1 and report.embedded == 0  # keywords only: BM25, no embedding
    assert mem.search("fixtures", mode="keyword", touch=False)[0].entry.id == "m8f3a2c1"


def test_search_filters_and_settings(workspace: Path) -> None:
    # no relevance floor: it is chosen for the real model's cosines, not the fake's
    settings = Settings(search=SearchSettings(relevance_floor=0.0))
    mem = Memory(workspace, settings=settings, embedder_factory=HashingEmbedder, notify=print)
    only_lessons = mem.search("docker postgres testing", types=["lesson"], limit=20, touch=False)
    assert only_lessons and all(h.entry.type == "lesson" for h in only_lessons)
    tagged = mem.search("python", keywords=["typing"], touch=False)
    assert [h.entry.id for h in tagged] == ["m2a7c9e0"]
    recent = mem.search("python", since="2026-10-01", limit=50, touch=False)
    assert recent and all(
        h.entry.created >= dt.datetime(2026, 10, 1, tzinfo=dt.UTC) for h in recent
    )
    assert len(mem.search("python", limit=2, touch=False)) == 2
    assert mem.search("python", min_score=5.0, touch=False) == []


def test_a_batchs_summary_is_the_watchers_log_line() -> None:
    """What a watcher logs for a batch (its own workspace's and another layer's alike)."""
    from memcli.index.sync import SyncReport

    report = SyncReport(added=1, changed=0, removed=2, total=37, embedded=1, rebuilt=False)
    assert report.summary(12.4) == "+1 ~0 -2 (37 entries, 12 ms)"
