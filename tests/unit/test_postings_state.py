"""The local index's BM25 keeps each row's length normalization between queries while
its rows stay the same (memcli.index.postings.Postings.scores with `state`): the scores
after every kind of change are those of an index built afresh from the live entries."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memcli.index.keyword import KeywordIndex
from memcli.index.local import LocalBackend
from memcli.index.tokenize import tokenize
from memcli.store.config import IndexSettings
from tests.support.legacy_index import save_npz

TEXTS = {
    "a": "deploy postgres with ansible",
    "b": "postgres backups run nightly",
    "c": "pytest fixtures for the postgres tests",
    "d": "deploy on fridays never",
    "e": "a long entry about deploy deploy deploy and postgres and more words here",
}
QUERY = "deploy postgres tests"

# each step: ("u", {id: text}) upserts, ("d", [ids]) deletes; then the scores are checked
STEPS: list[tuple[str, object]] = [
    ("u", {"e": "short now"}),  # replaced: a dead row, a new length
    ("d", ["a"]),  # deleted: the average length of the live rows moves
    ("u", {"f": "deploy postgres"}),
    ("d", ["b", "c"]),
    ("u", {"a": "deploy postgres with ansible again and again"}),
]


def _fresh_scores(live: dict[str, str]) -> dict[str, float]:
    ids = sorted(live)
    index = KeywordIndex.build([tokenize(live[i]) for i in ids], 1.2, 0.75)
    scores = index.scores(QUERY)
    return {i: float(s) for i, s in zip(ids, scores, strict=True)}


@pytest.mark.parametrize("steps", range(1, len(STEPS) + 1))
def test_scores_after_changes_are_those_of_a_fresh_index(tmp_path: Path, steps: int) -> None:
    backend = LocalBackend(tmp_path / "index", IndexSettings())
    backend.reset("m", 4)
    live = dict(TEXTS)
    ids = list(live)

    def vectors(count: int) -> np.ndarray:
        return np.ones((count, 4), dtype=np.float32) / 2

    backend.upsert(ids, vectors(len(ids)), [live[i] for i in ids], [f"k{i}" for i in ids])
    backend.keyword_scores(QUERY, ids)  # the normalization computed for these rows
    for op, arg in STEPS[:steps]:
        if op == "u":
            new = dict(arg)  # type: ignore[call-overload]
            backend.upsert(list(new), vectors(len(new)), list(new.values()), list(new))
            live.update(new)
        else:
            backend.delete(list(arg))  # type: ignore[call-overload]
            for i in arg:  # type: ignore[attr-defined]
                live.pop(i)
        got = backend.keyword_scores(QUERY, sorted(live))
        expected = _fresh_scores(live)
        assert got.tolist() == pytest.approx([expected[i] for i in sorted(live)], rel=1e-5)


def test_an_earlier_memclis_npz_generation_is_rewritten_at_the_next_flush(tmp_path: Path) -> None:
    """A generation whose keyword index is an earlier memcli's .npz is read as it is, and
    the next flush (a watcher's pause) writes it anew in the one-read form, with the
    same scores; a flush of a current generation writes nothing."""
    import json

    directory = tmp_path / "index"
    backend = LocalBackend(directory, IndexSettings())
    backend.reset("m", 4)
    ids = list(TEXTS)
    vectors = np.ones((len(ids), 4), dtype=np.float32) / 2
    backend.upsert(ids, vectors, [TEXTS[i] for i in ids], [f"k{i}" for i in ids])
    backend.flush()
    manifest = json.loads((directory / "local.json").read_text())
    kw = directory / manifest["keyword"]
    assert kw.suffix == ".kw"
    old = KeywordIndex.load(kw)
    legacy = kw.with_suffix(".npz")  # as an earlier memcli wrote it
    save_npz(old, legacy)
    kw.unlink()
    (directory / "local.json").write_text(json.dumps({**manifest, "keyword": legacy.name}))
    reader = LocalBackend(directory, IndexSettings())
    expected = reader.keyword_scores(QUERY, ids)
    assert expected.tolist() == pytest.approx(list(_fresh_scores(TEXTS).values()), rel=1e-5)
    reader.flush()
    rewritten = json.loads((directory / "local.json").read_text())
    assert rewritten["keyword"].endswith(".kw") and rewritten["generation"] != manifest["generation"]
    again = LocalBackend(directory, IndexSettings())
    assert again.keyword_scores(QUERY, ids).tolist() == pytest.approx(expected.tolist())
    again.flush()  # current: no new generation
    assert json.loads((directory / "local.json").read_text()) == rewritten
