"""Relevance on an absolute scale (issue 29, DESIGN §3): an entry's relevance depends on
its own signals only, never on what else a query found, so a floor means the same for
every query and an off-topic query returns nothing."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pytest

from memcli.core.models import Entry
from memcli.logic.search import Signals, absolute_relevance, keyword_share, rank
from memcli.store.config import SearchSettings

SETTINGS = SearchSettings()
NOW = dt.datetime(2026, 11, 26, tzinfo=dt.UTC)


def saturated(bm25: float) -> float:
    return bm25 / (bm25 + SETTINGS.keyword_saturation)


@pytest.mark.parametrize(
    "bm25, ideal, expected",
    [
        (0.0, 8.0, 0.0),
        (4.0, 8.0, 0.5),  # half the query's keyword mass
        (8.0, 8.0, 1.0),  # every query word once, at average length
        (20.0, 8.0, 1.0),  # more (repeated words, a short entry): still 1
        (5.0, 0.0, 0.0),  # a query without keywords (only stop words)
        (SETTINGS.keyword_saturation, None, 0.5),  # mass unknown (Milvus): saturated
        (1e9, None, 1.0),
    ],
)
def test_keyword_share(bm25: float, ideal: float | None, expected: float) -> None:
    got = keyword_share(np.array([bm25]), ideal, SETTINGS)
    assert got[0] == pytest.approx(expected, abs=1e-6)


LEAD = SETTINGS.semantic_lead
SW, KW = SETTINGS.semantic_weight, SETTINGS.keyword_weight  # (they sum to 1)


@pytest.mark.parametrize(
    "cosine, share, mode, read, expected",
    [
        (0.6, 0.0, "semantic", True, 0.6),
        (-0.2, 0.0, "semantic", True, 0.0),  # below 0 counts as 0
        (1.2, 0.0, "semantic", True, 1.0),  # never above 1
        (0.6, 0.0, "semantic", False, 0.0),  # the model does not read it: no vote
        (0.9, 0.0, "keyword", True, 0.0),
        (0.9, 0.5, "keyword", True, 0.5),
        (0.4, 0.0, "hybrid", True, LEAD * 0.4),  # a semantic match needs no shared word
        (0.4, 0.4, "hybrid", True, 0.4),  # both blends agree
        (0.2, 0.8, "hybrid", True, SW * 0.2 + KW * 0.8),  # rare words shared: balanced
        (0.8, 0.2, "hybrid", True, LEAD * 0.8 + (1 - LEAD) * 0.2),  # the semantic-led one
        (0.9, 0.3, "hybrid", False, KW * 0.3),  # not read: the keyword side alone votes
        (0.6, 0.0, "hybrid", 0.5, LEAD * 0.3),  # read in part (a mixed note): half a vote
        # a word shared by texts the model reads as unrelated counts in proportion to the
        # cosine below keyword_cosine (0.2): half at 0.1, nothing at or below 0
        (0.1, 0.8, "hybrid", True, max(SW * 0.1 + KW * 0.4, LEAD * 0.1 + (1 - LEAD) * 0.4)),
        (-0.2, 0.6, "hybrid", True, 0.0),
        (0.1, 0.8, "hybrid", False, KW * 0.8),  # not read: the cosine says nothing
        (0.1, 0.8, "hybrid", 0.5, max(SW * 0.05 + KW * 0.6, LEAD * 0.05 + (1 - LEAD) * 0.6)),
        (0.1, 0.8, "keyword", True, 0.8),  # keyword mode: the words alone
        (1.0, 1.0, "hybrid", True, 1.0),
    ],
)
def test_relevance_of_one_candidate(
    cosine: float, share: float, mode: str, read: float, expected: float
) -> None:
    got = absolute_relevance(
        np.array([cosine]), np.array([share]), mode, SETTINGS, np.array([read])
    )
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


def test_the_order_is_the_score_and_it_falls_within_0_and_1() -> None:
    """One score: hits come in the order of the score they show, every score between 0
    and 1, and it is the weighted share of a perfect match (relevance 1, new, important,
    confident, of a period the query names, a correction)."""
    cosines, bm25s = np.array([0.55, 0.50, 0.20, 0.95]), np.array([5.0, 3.0, 150.0, 9.0])
    found = rank(
        entries(4), Signals(np.array([0, 1, 2, 3]), cosines, bm25s, keyword_ideal=10.0),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10, floor=0.0,
    )  # fmt: skip
    scores = [h.score for h in found]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    # a little less relevant but far more important: the score, not relevance, orders
    pair = [Entry("a", "x", "fact", "memory.md", 1, {"imp": "0.0"}),
            Entry("b", "y", "fact", "memory.md", 2, {"imp": "1.0"})]  # fmt: skip
    close = rank(
        pair, Signals(np.array([0, 1]), np.array([0.50, 0.49]), np.zeros(2), 10.0),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10,
    )  # fmt: skip
    assert [h.entry.id for h in close] == ["b", "a"]
    assert close[0].components["relevance"] < close[1].components["relevance"]
    parts = ("relevance", "recency", "importance", "confidence", "date")
    weights = [getattr(SETTINGS, f"{p}_weight") for p in parts]
    for h in found:
        weighted = sum(w * h.components[p] for w, p in zip(weights, parts, strict=True))
        relevance = h.components["relevance"]
        corrected = SETTINGS.correction_weight * relevance * (1 - relevance)
        assert h.score == pytest.approx((weighted + corrected * h.components["correction"])
                                        / sum(weights))  # fmt: skip
    perfect = rank(
        [Entry("p", "x", "correction", "memory.md", 1, {"imp": "1", "conf": "1",
                                                   "created": NOW.isoformat()})],
        Signals(np.array([0]), np.array([1.0]), np.array([50.0]), keyword_ideal=10.0),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10,
        periods=[_today()],
    )  # fmt: skip
    assert perfect[0].score == pytest.approx(1.0)


def _today():  # noqa: ANN202 - a Period of NOW's day
    from memcli.core.dates import Period

    return Period(start=NOW.date(), end=NOW.date())


@pytest.mark.parametrize(
    "read, share, kept",
    [
        (True, 0.0, False),  # read: the cosine 0.1 is under the relevance floor
        (False, SETTINGS.keyword_floor - 0.01, False),  # not read: the keyword floor
        (False, SETTINGS.keyword_floor, True),
        (True, 0.5, True),
    ],
)
def test_a_hit_the_model_does_not_read_needs_the_keyword_floor(
    read: bool, share: float, kept: bool
) -> None:
    found = rank(
        entries(1),
        Signals(np.array([0]), np.array([0.1]), np.array([share * 10.0]), 10.0,
                np.array([read])),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10,
    )  # fmt: skip
    assert bool(found) is kept


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


@pytest.mark.parametrize(
    "corrected_cosine, first",
    [
        (0.50, "c"),  # as relevant as the fact it puts right: the correction first
        (0.47, "c"),  # a little less relevant: still first
        (0.30, "f"),  # far less relevant: the fact stays first
    ],
)
def test_a_relevant_correction_comes_before_the_fact_it_corrects(
    corrected_cosine: float, first: str
) -> None:
    """"which Go version are the services on now": "Correction: all services moved to Go
    1.23" before "Backend services are written in Go 1.22" when both are as relevant;
    the bonus is a share of the correction's own relevance, so an unrelated correction
    gains next to nothing, and of its distance to 1, so no score passes 1."""
    pair = [Entry("f", "written in Go 1.22", "fact", "memory.md", 1),
            Entry("c", "moved to Go 1.23", "correction", "memory.md", 2)]  # fmt: skip
    found = rank(
        pair, Signals(np.array([0, 1]), np.array([0.50, corrected_cosine]), np.zeros(2), 10.0),
        settings=SETTINGS, mode="hybrid", now=NOW, limit=10, floor=0.0,
    )  # fmt: skip
    assert found[0].entry.id == first
    assert [h.components["correction"] for h in found if h.entry.id == "c"] == [1.0]
