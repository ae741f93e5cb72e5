"""Search with the real bundled model, real FAISS and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.index.embedder import SentenceTransformerEmbedder
from memcli.services.memory import Memory
from memcli.surfaces.cli.app import app
from tests.support.cli import envelope

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    return embedder


def memory(
    ws: Path, model: SentenceTransformerEmbedder, notices: list[str] | None = None
) -> Memory:
    sink = notices.append if notices is not None else (lambda m: None)
    return Memory(ws, embedder_factory=lambda: model, notify=sink)


def ids(hits) -> list[str]:
    return [h.entry.id for h in hits]


def test_real_model_embeddings_are_normalized(model: SentenceTransformerEmbedder) -> None:
    vectors = model.embed(["Prefers pytest", "喜欢喝茶"])
    assert vectors.shape == (2, 384) and model.dim == 384
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-4


def test_seed_example_ranks_relevant_facts_first(workspace: Path, model) -> None:
    mem = memory(workspace, model)
    python = ids(mem.search("How should I write Python tests?", limit=3, touch=False))
    assert python[0] == "m8f3a2c1" and "l2c8a4e1" in python
    nextjs = ids(mem.search("How to optimize my Next.js app?", limit=3, touch=False))
    assert set(nextjs) <= {
        "m4f6b1d9",
        "m0a9e3c5",
        "l0d5c7f3",
        "l25ed624c7ecb725c",
        "m7a3c6e8",
        "m0f4a8b2",
    }
    assert "m4f6b1d9" in nextjs or "m0a9e3c5" in nextjs


def test_modes_and_chinese(workspace: Path, model) -> None:
    mem = memory(workspace, model)
    assert ids(mem.search("迁移", mode="keyword", touch=False))[0] == "l6a0e9c3"
    assert ids(mem.search("数据库迁移", touch=False))[0] == "l6a0e9c3"
    semantic = mem.search("feline pet", mode="semantic", limit=3, touch=False)
    assert "Has a cat named Miso" in [h.entry.text for h in semantic]
    assert mem.search("zzzz qqqq", mode="keyword", touch=False) == []


def test_explain_and_access_statistics(workspace: Path, model) -> None:
    mem = memory(workspace, model)
    hits = mem.search("docker image size", limit=2)
    assert set(hits[0].components) == {
        "semantic",
        "keyword",  # BM25
        "keyword_share",  # BM25 over the query's keyword mass
        "read",  # 1: the model reads the query and the entry (its cosine votes)
        "relevance",
        "recency",
        "importance",
        "confidence",
        "date",  # 1 when created in a period the query names
        "correction",  # 1: a correction (its score gains a share of its relevance)
        "accesses",  # shown, never part of the score
    }
    top = hits[0].entry.id
    assert mem.get(top).access.count == 1
    mem.search("docker image size", limit=2, touch=False)
    assert mem.get(top).access.count == 1
    # Access statistics survive a rebuild of the index.
    mem.index(rebuild=True)
    assert mem.get(top).access.count == 1


def test_index_is_never_stale(workspace: Path, model) -> None:
    mem = memory(workspace, model)
    mem.index()
    path = workspace / "learnings.md"
    path.write_text(
        path.read_text() + "- Always run terraform plan before apply on the prod state\n"
    )
    hits = mem.search("terraform plan", limit=1, touch=False)
    assert hits[0].entry.text.startswith("Always run terraform plan")
    mem.forget(hits[0].entry.id, by="person")
    assert "terraform" not in hits[0].entry.text.lower() or all(
        "terraform" not in h.entry.text.lower() for h in mem.search("terraform plan", touch=False)
    )
    archived = mem.search("terraform plan", include_archived=True, limit=1, touch=False)
    assert archived[0].entry.file == "archive.md"


@pytest.mark.parametrize(
    "damage", ["delete", "manifest", "vectors", "keyword", "cache", "snapshot"]
)
def test_damaged_state_is_rebuilt_with_notice(workspace: Path, model, damage: str) -> None:
    mem = memory(workspace, model)
    mem.index()
    state = workspace / ".memcli"
    if damage == "delete":
        import shutil

        shutil.rmtree(state)
    elif damage == "manifest":
        (state / "index" / "manifest.json").write_text("{not json")
    elif damage == "vectors":
        next((state / "index").glob("vectors-*.npy")).write_bytes(b"garbage")
    elif damage == "snapshot":
        next((state / "index").glob("entries-*.marshal")).write_bytes(b"garbage")
    elif damage == "keyword":
        next((state / "index").glob("keyword-*")).write_bytes(b"")
    else:
        for f in (state / "cache").iterdir():
            f.write_bytes(b"\x00" * 10)
    notices: list[str] = []
    hits = memory(workspace, model, notices).search("pytest fixtures", limit=1, touch=False)
    assert hits[0].entry.id == "m8f3a2c1"
    if damage in ("manifest", "vectors", "keyword"):
        assert notices and "rebuilt" in notices[0]


def test_model_change_forces_rebuild(workspace: Path, model) -> None:
    mem = memory(workspace, model)
    mem.index()
    manifest_path = workspace / ".memcli" / "index" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["model"] = "some/other-model"
    manifest_path.write_text(json.dumps(manifest))
    notices: list[str] = []
    report = memory(workspace, model, notices).index()
    assert report.rebuilt and "embedding model changed" in notices[0]


def test_cli_search_index_json(runner: CliRunner, workspace: Path) -> None:
    result = runner.invoke(app, ["-w", str(workspace), "index", "--json"])
    assert result.exit_code == 0, result.output
    report = envelope(result.stdout)
    assert report["total"] == 37 and report["added"] == 37
    result = runner.invoke(
        app, ["-w", str(workspace), "search", "pytest fixtures", "--explain", "--json", "-n", "2"]
    )
    assert result.exit_code == 0, result.output
    hits = envelope(result.stdout)["hits"]
    assert len(hits) == 2 and hits[0]["id"] == "m8f3a2c1"
    assert {"semantic", "keyword", "recency"} <= set(hits[0]["components"])
    assert hits[0]["entry"]["text"].startswith("Prefers pytest")
    text = runner.invoke(app, ["-w", str(workspace), "search", "pytest", "--explain", "-n", "1"])
    assert "m8f3a2c1" in text.stdout and "semantic=" in text.stdout
    bad = runner.invoke(app, ["-w", str(workspace), "search", "x", "--mode", "fuzzy"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --mode: 'fuzzy' is not one of")
    empty = runner.invoke(app, ["-w", str(workspace), "search", " "])
    assert empty.exit_code == 1 and "query is empty" in empty.stderr


def test_snapshot_follows_metadata_and_line_changes(workspace: Path, model) -> None:
    """A one-off process reads entries from the index's snapshot instead of parsing; an
    edit that keeps every text (importance, lines moved by prose) must still show."""
    memory(workspace, model).index()
    path = workspace / "memory.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("# Memory\n", "# Memory\n\nA new paragraph.\n", 1).replace(
            "id=m8f3a2c1 imp=0.8", "id=m8f3a2c1 imp=0.3"
        ),
        encoding="utf-8",
    )
    fresh = memory(workspace, model)  # as a new process would
    hit = fresh.search("pytest fixtures", limit=1, touch=False)[0]
    assert hit.entry.id == "m8f3a2c1" and hit.entry.importance == 0.3
    stored = next(e for e in fresh.entries() if e.id == "m8f3a2c1")
    assert hit.entry.line == stored.line
    fresh.index_manager.ensure()
    assert fresh.index_manager.snapshot_entries() is not None


def test_same_search_twice_same_order(runner: CliRunner, workspace: Path) -> None:
    """Recency comes from updated/created, never from the last access: the first search
    counts its hits as accessed, and the second still ranks exactly as the first."""
    args = ["-w", str(workspace), "search", "How should I write Python tests?", "--json"]

    def ranked() -> list[tuple[str, float]]:
        result = runner.invoke(app, [*args, "-n", "10"])
        assert result.exit_code == 0, result.output
        return [(hit["id"], hit["score"]) for hit in envelope(result.stdout)["hits"]]

    def same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
        # the same order and scores; the scores within 1e-5: recency is read to the
        # minute, and a minute turning between two searches moves one by ~1e-7
        return [i for i, _ in a] == [i for i, _ in b] and [s for _, s in a] == pytest.approx(
            [s for _, s in b], abs=1e-5
        )

    first = ranked()
    second = ranked()
    assert same(second, first) and first[0][0] == "m8f3a2c1"
    explained = runner.invoke(app, [*args, "-n", "1", "--explain"])
    assert envelope(explained.stdout)["hits"][0]["components"]["accesses"] == 2
    assert same(ranked(), first)
