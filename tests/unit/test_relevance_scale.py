"""Relevance on an absolute scale (issue 29, DESIGN §3): an entry's relevance depends on
its own signals only, never on what else a query found, so a floor means the same for
every query and an off-topic query returns nothing."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pytest

from memcli.core.models import Entry
from memcli.logic.search import Signals, absolute_relevance, rank
from memcli.store.config import SearchSettings

SETTINGS = SearchSettings()
NOW = dt.datetime(2026, 11, 26, tzinfo=dt.UTC)


def saturated(bm25: float) -> float:
    return bm25 / (bm25 + SETTINGS.keyword_saturation)


@pytest.mark.parametrize(
    "cosine, bm25, mode, expected",
    [
        (0.6, 0.0, "semantic", 0.6),
        (-0.2, 0.0, "semantic", 0.0),  # below 0 counts as 0
        (1.2, 0.0, "semantic", 1.0),  # never above 1
        (0.0, 0.0, "keyword", 0.0),
        (0.9, SETTINGS.keyword_saturation, "keyword", 0.5),  # the saturation point
        (0.0, 1e9, "keyword", 1.0),
        (0.4, 0.0, "hybrid", 0.5 * 0.4),
        (0.4, 5.0, "hybrid", 0.5 * 0.4 + 0.5 * saturated(5.0)),
        (1.0, 1e9, "hybrid", 1.0),
    ],
)
def test_relevance_of_one_candidate(cosine: float, bm25: float, mode: str, expected: float) -> None:
    got = absolute_relevance(np.array([cosine]), np.array([bm25]), mode, SETTINGS)
    assert got[0] == pytest.approx(expected, abs=1e-6)


def entries(n: int) -> list[Entry]:
    return [Entry(f"e{i}", f"entry {i}", "fact", "memory.md", i + 1) for i in range(n)]


def relevance_of(found: list, entry_id: str) -> float:
    return next(h.components["relevance"] for h in found if h.entry.id == entry_id)


def test_relevance_does_not_depend_on_the_other_candidates() -> None:
    """The same entry with the same signals has the same relevance whether the query also
    found a much better or a much worse entry (min-max scaling within the query would
    make it 1.0 in one case and 0.0 in the other)."""
    pool = entries(3)
    alone_with_worse = rank(
        pool,
        Signals(np.array([0, 1]), np.array([0.3, 0.05]), np.array([2.0, 0.0])),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10,
    )  # fmt: skip
    with_better = rank(
        pool,
        Signals(np.array([0, 2]), np.array([0.3, 0.9]), np.array([2.0, 30.0])),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10,
    )  # fmt: skip
    assert relevance_of(alone_with_worse, "e0") == pytest.approx(relevance_of(with_better, "e0"))


@pytest.mark.parametrize(
    "cosines, bm25s, floor, kept",
    [
        ([0.10, 0.08], [0.0, 0.0], 0.15, []),  # off-topic: nothing, not the best of nothing
        ([0.10, 0.08], [0.0, 0.0], 0.0, ["e0", "e1"]),  # floor off: every candidate
        ([0.55, 0.10], [8.0, 0.0], 0.15, ["e0"]),
        ([0.30, 0.31], [0.0, 0.0], 0.15, ["e1", "e0"]),  # exactly at the floor: kept
    ],
)
def test_the_floor_keeps_only_relevant_hits(
    cosines: list[float], bm25s: list[float], floor: float, kept: list[str]
) -> None:
    found = rank(
        entries(2),
        Signals(np.array([0, 1]), np.array(cosines), np.array(bm25s)),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10, floor=floor,
    )  # fmt: skip
    assert [h.entry.id for h in found] == kept


def test_min_score_filters_on_the_same_scale_in_every_query() -> None:
    """A hit's score is relevance_weight · relevance plus small terms: a weak best match
    stays weak (min-max scaling would have lifted it to the top of the scale)."""
    settings = dataclasses.replace(SETTINGS, recency_weight=0.0, importance_weight=0.0,
                                   confidence_weight=0.0)  # fmt: skip
    weak = rank(
        entries(1), Signals(np.array([0]), np.array([0.1]), np.array([0.0])),
        settings=settings, mode="hybrid", now=NOW, limit=10, min_score=0.3,
    )  # fmt: skip
    strong = rank(
        entries(1), Signals(np.array([0]), np.array([0.7]), np.array([12.0])),
        settings=settings, mode="hybrid", now=NOW, limit=10, min_score=0.3,
    )  # fmt: skip
    assert weak == [] and len(strong) == 1
