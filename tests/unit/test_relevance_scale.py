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
        (0.4, 0.0, "hybrid", 0.4),  # never below the cosine alone (a clear semantic match)
        (0.4, 5.0, "hybrid", 0.4),  # 0.2 + 0.5 · 0.33 = 0.367 < the cosine
        (0.4, 30.0, "hybrid", 0.5 * 0.4 + 0.5 * saturated(30.0)),  # both sides say more
        (-0.2, 30.0, "hybrid", 0.5 * saturated(30.0)),
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


def test_the_order_is_the_tuned_one_and_the_score_the_absolute_one() -> None:
    """Hits come in the order of the ranking tuned on LoCoMo (relevance scaled within
    the query: `in_query`); the score each one shows is on the absolute scale."""
    settings = dataclasses.replace(SETTINGS, recency_weight=0.0, importance_weight=0.0,
                                   confidence_weight=0.0)  # fmt: skip
    cosines, bm25s = np.array([0.55, 0.50, 0.20]), np.array([5.0, 3.0, 150.0])
    found = rank(
        entries(3), Signals(np.array([0, 1, 2]), cosines, bm25s),
        settings=settings, mode="hybrid", now=NOW, limit=10,
    )  # fmt: skip

    def minmax(x: np.ndarray) -> np.ndarray:
        return (x - x.min()) / (x.max() - x.min())

    within = {f"e{i}": v for i, v in enumerate(0.5 * minmax(cosines) + 0.5 * minmax(bm25s))}
    assert [h.entry.id for h in found] == sorted(within, key=lambda k: -within[k])
    assert [h.components["in_query"] for h in found] == pytest.approx(
        [within[h.entry.id] for h in found]
    )
    for h in found:
        assert h.score == pytest.approx(h.components["relevance"])
    # here the absolute scale would order them otherwise: the order is not the score's
    assert [h.entry.id for h in found] != sorted(
        (h.entry.id for h in found), key=lambda k: -next(x.score for x in found if x.entry.id == k)
    )


def test_an_entry_of_the_period_a_query_names_passes_the_floor() -> None:
    """'What did they talk about in June 2023?': the turns of June 2023 are relevant by
    their date, whatever their words."""
    from memcli.core.dates import named_periods

    pool = [
        Entry(
            "june", "We repainted the kitchen", "fact", "memory.md", 1, {"created": "2023-06-03"}
        ),
        Entry("may", "We repainted the garage", "fact", "memory.md", 2, {"created": "2023-05-08"}),
    ]
    signals = Signals(np.array([0, 1]), np.array([0.1, 0.1]), np.array([0.0, 0.0]))
    periods = named_periods("What did they talk about in June 2023?", NOW)
    found = rank(
        pool, signals, settings=SETTINGS, mode="hybrid", now=NOW, limit=10, floor=0.3,
        periods=periods,
    )  # fmt: skip
    assert [h.entry.id for h in found] == ["june"]
