"""What every index backend must do (memcli.index.backend.IndexBackend), checked with
real FAISS and deterministic vectors. A new backend adds one line to BACKENDS below."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from memcli.core.errors import ConfigError
from memcli.index.backend import open_backend
from memcli.index.keyword import KeywordIndex
from memcli.index.protocol import IndexBackend, IndexDamaged
from memcli.index.tokenize import tokenize
from memcli.store.config import IndexSettings

DIM = 16
MODEL = "test/model"


@dataclass(frozen=True)
class Flavour:
    name: str
    settings: IndexSettings
    #: BM25 equal to memcli's own (memcli.index.keyword): the local backend. Milvus scores
    #: with its own analyzer and formula: the same entries match, in the same order.
    exact_bm25: bool = True


#: backend flavours: (name, settings); the local backend both below and above the
#: threshold where it switches from an exact matrix to an HNSW graph
BACKENDS = [
    Flavour("local-flat", IndexSettings(backend="local")),
    Flavour("local-hnsw", IndexSettings(backend="local", ann_threshold=1, hnsw_ef_search=64)),
    # Milvus Lite, embedded (a file under the test's tmp_path: see the fixture)
    Flavour("milvus-lite", IndexSettings(backend="milvus"), exact_bm25=False),
]
# A Milvus server: MEMCLI_TEST_MILVUS_URI when one is at hand, else the run's own
# `milvus-lite server` process (the milvus_server fixture; skipped without the extra)
BACKENDS.append(
    Flavour(
        "milvus-server",
        IndexSettings(backend="milvus", uri=os.environ.get("MEMCLI_TEST_MILVUS_URI", "")),
        exact_bm25=False,
    )
)


Factory = Callable[[], IndexBackend]


def _params() -> list:
    """Milvus flavours run in the whole suite, not the fast tier (≈ 1.6 s each)."""
    slow = pytest.mark.slow
    return [pytest.param(f, marks=slow) if f.name.startswith("milvus") else f for f in BACKENDS]


@pytest.fixture(params=_params(), ids=lambda f: f.name)
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Factory:
    flavour: Flavour = request.param
    settings = flavour.settings
    if settings.backend == "milvus":
        pytest.importorskip("pymilvus")
        if flavour.name == "milvus-server" and not settings.uri:
            settings = replace(settings, uri=request.getfixturevalue("milvus_server").uri)
        if not settings.uri:  # Milvus Lite: a file of this test's own
            settings = replace(settings, uri=str(tmp_path / "milvus.db"))
        # each test its own collection and workspace (a server is shared)
        settings = replace(settings, collection=f"contract_{tmp_path.name[-12:]}".replace("-", "_"))
    opened: list[IndexBackend] = []

    def factory() -> IndexBackend:
        backend = open_backend(settings, tmp_path / "index", bm25=(1.2, 0.75))
        opened.append(backend)
        return backend

    factory.exact_bm25 = flavour.exact_bm25  # type: ignore[attr-defined]
    yield factory
    for backend in opened:
        backend.close()


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


TEXTS = {
    "a": "postgres backups run nightly",
    "b": "pytest fixtures instead of setUp",
    "c": "deploy with terraform plan first",
    "d": "postgres vacuum settings tuned",
    "e": "redis cache for sessions",
}


def fill(backend: IndexBackend, ids: list[str] | None = None) -> None:
    ids = ids or list(TEXTS)
    backend.reset(MODEL, DIM)
    backend.upsert(
        ids,
        np.vstack([vec(i) for i, _ in enumerate(ids)]),
        [TEXTS[i] for i in ids],
        [f"key-{i}" for i in ids],
    )


def check_bm25(make: Factory, got: dict[str, float], reference: dict[str, float]) -> None:
    """`got` (id -> score) agrees with memcli's BM25 over the same documents: equal for a
    backend that promises it, else the same entries score > 0, in the same order."""
    if getattr(make, "exact_bm25", True):
        for entry_id, score in got.items():
            assert score == pytest.approx(reference[entry_id], rel=1e-5, abs=1e-7), entry_id
        return
    assert {i for i, v in got.items() if v > 0} == {i for i in got if reference[i] > 0}
    by_got = sorted((i for i in got if got[i] > 0), key=lambda i: (-got[i], i))
    by_ref = sorted((i for i in got if reference[i] > 0), key=lambda i: (-reference[i], i))
    assert by_got == by_ref, (got, reference)


def bm25(docs: dict[str, str], query: str) -> dict[str, float]:
    """Reference BM25 of a fresh index over exactly `docs`."""
    ids = list(docs)
    index = KeywordIndex.build([tokenize(docs[i]) for i in ids], 1.2, 0.75)
    return dict(zip(ids, index.scores(query).tolist(), strict=True))


def test_empty_index(make: Factory) -> None:
    backend = make()
    fp = backend.fingerprint()
    assert fp.empty and fp.keys == {} and fp.damaged is None
    backend.reset(MODEL, DIM)
    assert backend.count() == 0
    assert backend.dense_search(vec(0), 5).ids == []
    assert backend.keyword_search("postgres", 5).ids == []
    assert backend.dense_scores(vec(0), ["x"]).tolist() == [0.0]
    assert backend.keyword_scores("postgres", ["x"]).tolist() == [0.0]
    assert make().fingerprint().model == MODEL and make().count() == 0


def test_upsert_and_search(make: Factory) -> None:
    backend = make()
    fill(backend)
    assert backend.count() == 5
    for i, entry_id in enumerate(TEXTS):
        found = backend.dense_search(vec(i), 1)
        assert found.ids == [entry_id]
        assert math.isclose(float(found.scores[0]), 1.0, rel_tol=1e-4)
    hits = backend.keyword_search("postgres", 10)
    assert set(hits.ids) == {"a", "d"} and list(hits.scores) == sorted(hits.scores, reverse=True)
    reference = bm25(TEXTS, "postgres nightly")
    hits = backend.keyword_search("postgres nightly", 10)
    assert hits.ids[0] == "a"
    check_bm25(make, dict(zip(hits.ids, hits.scores.tolist(), strict=True)), reference)
    assert backend.keyword_search("nothing matches this", 10).ids == []


def test_allowed_ids_restrict_both_searches(make: Factory) -> None:
    backend = make()
    fill(backend)
    allowed = {"b", "c", "d"}
    dense = backend.dense_search(vec(0), 5, allowed)  # "a" is the nearest, not allowed
    assert set(dense.ids) == allowed and "a" not in dense.ids
    assert backend.keyword_search("postgres", 5, allowed).ids == ["d"]
    assert backend.keyword_search("postgres", 5, set()).ids == []
    assert backend.dense_search(vec(0), 5, {"zz"}).ids == []
    assert len(backend.dense_search(vec(0), 2)) == 2


def test_scores_for_ids(make: Factory) -> None:
    backend = make()
    fill(backend)
    q = vec(2)
    dense = backend.dense_scores(q, ["c", "a", "unknown"])
    assert math.isclose(float(dense[0]), 1.0, rel_tol=1e-4)
    assert math.isclose(float(dense[1]), float(vec(0) @ q), rel_tol=1e-4, abs_tol=1e-6)
    assert dense[2] == 0.0
    reference = bm25(TEXTS, "postgres vacuum")
    kw = backend.keyword_scores("postgres vacuum", ["d", "a", "b", "nope"])
    check_bm25(make, {"d": float(kw[0]), "a": float(kw[1]), "b": float(kw[2])}, reference)
    assert kw[2] == 0.0 and kw[3] == 0.0
    # the same scale as keyword_search's: the ranking formula mixes candidates of both
    found = backend.keyword_search("postgres vacuum", 5)
    assert found.scores[found.ids.index("d")] == pytest.approx(float(kw[0]), rel=1e-5)


def test_delete_and_reupsert(make: Factory) -> None:
    backend = make()
    fill(backend)
    revision = backend.revision()
    assert revision and make().revision() == revision  # the same state, seen by another
    backend.delete(["a", "unknown"])
    assert backend.revision() != revision
    assert backend.count() == 4 and "a" not in backend.fingerprint().keys
    assert "a" not in backend.dense_search(vec(0), 5).ids
    assert backend.keyword_search("postgres", 5).ids == ["d"]
    assert backend.dense_scores(vec(0), ["a"]).tolist() == [0.0]
    # BM25 statistics are those of the live entries only
    live = {k: v for k, v in TEXTS.items() if k != "a"}
    if getattr(make, "exact_bm25", True):
        assert backend.keyword_scores("postgres", ["d"])[0] == pytest.approx(
            bm25(live, "postgres")["d"], rel=1e-5
        )
    # re-upsert with another vector and text: the old ones are gone
    revision = backend.revision()
    backend.upsert(["a"], vec(99)[None, :], ["kubernetes upgrade notes"], ["key-a2"])
    assert backend.revision() != revision
    backend.upsert(["b"], vec(98)[None, :], ["kubernetes rollout"], ["key-b2"])
    assert backend.count() == 5
    assert backend.dense_search(vec(99), 1).ids == ["a"]
    assert backend.dense_search(vec(0), 5).scores.max() < 0.99  # the old "a" vector
    assert backend.keyword_search("postgres", 5).ids == ["d"]
    assert set(backend.keyword_search("kubernetes", 5).ids) == {"a", "b"}
    assert backend.keyword_search("pytest", 5).ids == []
    assert backend.fingerprint().keys["a"] == "key-a2"
    new = dict(live, a="kubernetes upgrade notes", b="kubernetes rollout")
    ids = list(new)
    got = backend.keyword_scores("kubernetes upgrade", ids).tolist()
    check_bm25(make, dict(zip(ids, got, strict=True)), bm25(new, "kubernetes upgrade"))


def test_fingerprint_round_trip_and_persistence(make: Factory) -> None:
    backend = make()
    fill(backend)
    backend.delete(["c"])
    backend.upsert(["f"], vec(7)[None, :], ["fresh entry about postgres"], ["key-f"])
    expected = {i: f"key-{i}" for i in TEXTS if i != "c"} | {"f": "key-f"}
    fp = backend.fingerprint()
    assert fp.keys == expected and fp.model == MODEL and fp.dim == DIM
    q = vec(3)
    before = (
        backend.dense_search(q, 3),
        backend.keyword_search("postgres", 3),
        backend.keyword_scores("postgres fresh", list(expected)),
    )
    again = make()  # another process opening the same directory
    assert again.fingerprint().keys == expected and again.count() == 5
    after = (
        again.dense_search(q, 3),
        again.keyword_search("postgres", 3),
        again.keyword_scores("postgres fresh", list(expected)),
    )
    assert before[0].ids == after[0].ids and before[1].ids == after[1].ids
    np.testing.assert_allclose(before[2], after[2], rtol=1e-6)
    again.flush()  # compaction keeps everything
    third = make()
    assert third.fingerprint().keys == expected
    np.testing.assert_allclose(
        third.keyword_scores("postgres fresh", list(expected)), before[2], rtol=1e-5
    )
    assert third.dense_search(vec(7), 1).ids == ["f"]
    # a reader notices another writer's later changes (one writer at a time: the first
    # hands over by closing; Milvus holds a writer lease until then)
    backend.close()
    again.delete(["f"])
    assert "f" not in backend.fingerprint().keys and backend.count() == 4


def test_reset_forgets_everything(make: Factory) -> None:
    backend = make()
    fill(backend)
    backend.reset("other/model", DIM)
    fp = make().fingerprint()
    assert fp.model == "other/model" and fp.keys == {}


def test_unknown_backend_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        open_backend(replace(IndexSettings(), backend="qdrant"), tmp_path)
    text = str(info.value)
    assert "[index] backend" in text and "'qdrant'" in text and "local" in text


# ---------------------------------------------------------------------- local only


def local(tmp_path: Path) -> IndexBackend:
    return open_backend(IndexSettings(), tmp_path / "index")


def test_local_torn_log_record_is_never_seen(tmp_path: Path) -> None:
    """A writer killed in the middle of an append leaves bytes past `log_size`: readers
    ignore them and the next writer overwrites them."""
    backend = local(tmp_path)
    fill(backend)
    backend.upsert(["f"], vec(7)[None, :], ["fresh postgres entry"], ["key-f"])
    manifest = json.loads((tmp_path / "index" / "local.json").read_text())
    log = tmp_path / "index" / manifest["log"]
    assert manifest["log_size"] == log.stat().st_size > 0  # appended, not compacted
    with log.open("ab") as handle:
        handle.write(b"MLG1\xff\xff\x00\x00half a record")
    reader = local(tmp_path)
    assert reader.count() == 6 and "f" in reader.fingerprint().keys
    reader.upsert(["g"], vec(8)[None, :], ["another one"], ["key-g"])
    assert local(tmp_path).fingerprint().keys["g"] == "key-g"
    assert local(tmp_path).dense_search(vec(8), 1).ids == ["g"]


def test_local_missing_log_bytes_are_damage(tmp_path: Path) -> None:
    backend = local(tmp_path)
    fill(backend)
    backend.delete(["a"])
    manifest = json.loads((tmp_path / "index" / "local.json").read_text())
    (tmp_path / "index" / manifest["log"]).write_bytes(b"")
    reader = local(tmp_path)
    assert reader.fingerprint().damaged == "the index files were unreadable"
    with pytest.raises(IndexDamaged):
        reader.dense_search(vec(0), 3)
    reader.reset(MODEL, DIM)  # a rebuild starts over
    assert local(tmp_path).fingerprint().damaged is None


def test_local_compaction_keeps_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_LOG_ROWS appended rows the state is written as a new generation; the old
    generation's files go, and the answers stay."""
    monkeypatch.setattr("memcli.index.local.MAX_LOG_ROWS", 3)
    backend = local(tmp_path)
    fill(backend)
    first = json.loads((tmp_path / "index" / "local.json").read_text())["generation"]
    for n in range(6):
        backend.upsert([f"n{n}"], vec(50 + n)[None, :], [f"note {n} postgres"], [f"k{n}"])
    backend.delete(["n0"])
    manifest = json.loads((tmp_path / "index" / "local.json").read_text())
    assert manifest["generation"] != first
    assert not list((tmp_path / "index").glob(f"*{first}*"))
    reader = local(tmp_path)
    assert reader.fingerprint().keys == backend.fingerprint().keys
    assert reader.dense_search(vec(53), 1).ids == ["n3"]
    np.testing.assert_allclose(
        reader.keyword_scores("postgres note", ["a", "n1", "n5"]),
        backend.keyword_scores("postgres note", ["a", "n1", "n5"]),
        rtol=1e-5,
    )


# ---------------------------------------------------------------------- milvus only


def milvus(tmp_path: Path, workspace: str) -> IndexBackend:
    pytest.importorskip("pymilvus")
    from memcli.index.milvus import MilvusBackend

    return MilvusBackend(str(tmp_path / "shared.db"), workspace, collection="team")


@pytest.mark.slow
def test_milvus_one_writer_per_workspace_many_workspaces_per_collection(tmp_path: Path) -> None:
    from memcli.index.milvus import WriterConflict

    first, second = milvus(tmp_path, "alice"), milvus(tmp_path, "alice")
    fill(first)
    with pytest.raises(WriterConflict, match="one writer per workspace"):
        second.upsert(["z"], vec(9)[None, :], ["intruder"], ["key-z"])
    assert second.dense_search(vec(0), 1).ids == ["a"]  # reading needs no lease
    other = milvus(tmp_path, "bob")  # another workspace in the same collection
    other.reset(MODEL, DIM)
    other.upsert(["a"], vec(5)[None, :], ["bob's own postgres note"], ["key-bob"])
    assert other.count() == 1 and first.count() == 5  # partitions keep them apart
    assert first.fingerprint().keys["a"] == "key-a"
    first.close()  # hands over: the lease is released
    second.upsert(["z"], vec(9)[None, :], ["now allowed"], ["key-z"])
    assert second.count() == 6
    for backend in (second, other):
        backend.close()


@pytest.mark.slow
def test_milvus_engine_down_names_the_uri() -> None:
    pytest.importorskip("pymilvus")
    from memcli.index.milvus import IndexUnavailable, MilvusBackend

    with pytest.raises(IndexUnavailable) as info:
        MilvusBackend("http://127.0.0.1:1", "ws").count()
    assert "http://127.0.0.1:1" in str(info.value) and "MEMCLI_INDEX_BACKEND=local" in (info.value.hint or "")


@pytest.mark.slow
def test_milvus_a_stale_clone_never_deletes_entries_it_never_saw(tmp_path: Path) -> None:
    """Two clones of one workspace share its Milvus index; the one that has not pulled
    the other's new entry becomes the writer again and syncs: that entry stays indexed,
    while an entry deleted from the stale clone's own files goes. (What a clone's files
    held is what its syncs saw: `.memcli/index/seen-ids`.)"""
    pytest.importorskip("pymilvus")
    from memcli.services.memory import Memory
    from memcli.store.config import Settings
    from tests.support.fakes import HashingEmbedder

    index = IndexSettings(backend="milvus", uri=str(tmp_path / "team.db"), workspace="notes")
    settings = replace(Settings(), index=index)

    def clone(name: str) -> Memory:
        root = tmp_path / name
        root.mkdir()
        (root / "memory.md").write_text(
            "# Memory\n\n## Facts\n- Deploys go out on Tuesdays <!-- id=mshared1 -->\n"
            "- The staging database is Postgres 16 <!-- id=mshared2 -->\n",
            encoding="utf-8",
        )
        return Memory(
            root, settings=settings, embedder_factory=HashingEmbedder, notify=lambda m: None
        )

    laptop, desk = clone("laptop"), clone("desk")
    laptop.index()  # the laptop wrote the index first, then handed over
    laptop.index_manager.backend.close()
    _ = desk.index_manager.embedder  # the fake model's identity, as the laptop's
    desk.index()
    desk.add("The on-call rota lives in the wiki", type="fact")
    desk.index()
    added = next(e.id for e in desk.entries() if "on-call" in e.text)
    desk.index_manager.backend.close()  # the desk stops writing; the laptop takes over
    memory = laptop.root / "memory.md"  # on the laptop, a person deletes an entry
    text = memory.read_text(encoding="utf-8")
    memory.write_text(
        "".join(line for line in text.splitlines(True) if "mshared2" not in line),
        encoding="utf-8",
    )
    laptop.index()
    held = laptop.index_manager.backend.fingerprint().keys
    assert added in held  # never in the laptop's files: another clone's, left alone
    assert "mshared2" not in held and "mshared1" in held
    laptop.index_manager.backend.close()


def test_a_large_allowed_set(make: Factory) -> None:
    """Most ids allowed (a search that leaves out the archived): the same answer as an
    exact scan over the allowed ones, whichever way the backend reads it."""
    backend = make()
    backend.reset(MODEL, DIM)
    n = 1_100
    ids = [f"e{i}" for i in range(n)]
    vectors = np.vstack([vec(1000 + i) for i in range(n)])
    backend.upsert(ids, vectors, [f"note {i}" for i in range(n)], [f"k{i}" for i in range(n)])
    query = vec(7)
    nearest = np.argsort(-(vectors @ query))
    banned = {ids[i] for i in nearest[:20]}  # the best matches are the ones left out
    allowed = set(ids) - banned
    found = backend.dense_search(query, 5, allowed)
    expected = [ids[i] for i in nearest if ids[i] in allowed][:5]
    assert found.ids == expected
