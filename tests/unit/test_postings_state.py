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
