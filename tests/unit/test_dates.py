"""Dates in search: the periods a query names and the entry's date on the keyword side
(memcli.core.dates, memcli.index.sync.keyword_text, memcli.logic.search.in_periods)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memcli.core.dates import date_spellings, named_periods
from memcli.core.models import Entry
from memcli.index.sync import content_key, keyword_text
from memcli.logic.search import in_periods

NOW = dt.datetime(2026, 11, 24, 8, 0, tzinfo=dt.UTC)


def spans(query: str) -> list[str]:
    return [p.describe() for p in named_periods(query, NOW)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Caroline do on 9 November, 2022?", ["2022-11-09"]),
        ("when was it? 2023-05-07", ["2023-05-07"]),
        ("the trip on March 5th, 2021", ["2021-03-05"]),
        ("what happened in August 2023", ["2023-08-01..2023-08-31"]),
        ("books read in 2022", ["2022-01-01..2022-12-31"]),
        ("what did I fix yesterday", ["2026-11-23"]),
        ("notes from today", ["2026-11-24"]),
        ("what did we decide last week", ["2026-11-16..2026-11-22"]),
        ("this month", ["2026-11-01..2026-11-30"]),
        ("last month", ["2026-10-01..2026-10-31"]),
        ("last year", ["2025-01-01..2025-12-31"]),
        ("3 weeks ago", ["2026-11-02..2026-11-08"]),
        ("two days ago", ["2026-11-22"]),
        ("last May", ["2026-05-01..2026-05-31"]),  # the latest May before now
        ("last December", ["2025-12-01..2025-12-31"]),
        ("in December", ["December"]),  # December of any year
        ("2023年8月14日发生了什么", ["2023-08-14"]),
        ("2023年8月", ["2023-08-01..2023-08-31"]),
        ("昨天做了什么", ["2026-11-23"]),
        ("去年我在哪里工作", ["2025-01-01..2025-12-31"]),
        # letters a case-blind pattern takes for ASCII ones (long s, Kelvin sign): the
        # month and word tables are looked up case-folded, as the pattern matched
        ("in Augu\u017ft 2023", ["2023-08-01..2023-08-31"]),
        ("9 Augu\u017ft, 2022", ["2022-08-09"]),
        ("la\u017ft Augu\u017ft", ["2026-08-01..2026-08-31"]),
        ("two wee\u212as ago", ["2026-11-09..2026-11-15"]),
        ("thi\u017f month", ["2026-11-01..2026-11-30"]),
    ],
)
def test_named_periods(query: str, expected: list[str]) -> None:
    assert spans(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "How should I write Python tests?",
        "this may help with the build",  # the verb, not the month
        "it may be slow",
        "2023-02-30 is not a day",  # no such date: nothing, no error
        "port 8080 and 443",
    ],
)
def test_queries_without_a_period(query: str) -> None:
    assert named_periods(query, NOW) == []


def test_date_spellings() -> None:
    assert date_spellings(dt.date(2023, 8, 14)) == "2023-08-14 14 August 2023 August 2023"
    assert date_spellings(None) == ""


def test_keyword_text_carries_the_created_day_and_the_content_key_sees_it() -> None:
    dated = Entry("m1", "Went hiking with Mel", "fact", "memory.md", 1,
                  {"created": "2023-08-14T13:56:00Z"})
    undated = Entry("m1", "Went hiking with Mel", "fact", "memory.md", 1, {})
    bad = Entry("m1", "Went hiking with Mel", "fact", "memory.md", 1, {"created": "soon"})
    assert keyword_text(dated).endswith("2023-08-14 14 August 2023 August 2023")
    assert keyword_text(undated) == "Went hiking with Mel"
    assert keyword_text(bad) == "Went hiking with Mel"
    assert content_key(dated) != content_key(undated)  # a date change re-indexes


def test_in_periods_marks_days_months_and_undated() -> None:
    def seconds(*args: int) -> float:
        return dt.datetime(*args, tzinfo=dt.UTC).timestamp()

    created = np.array(
        [seconds(2023, 8, 14, 23, 59), float("nan"), seconds(2022, 12, 1), seconds(2023, 9, 1)]
    )
    assert in_periods(created, named_periods("in August 2023", NOW)).tolist() == [1, 0, 0, 0]
    assert in_periods(created, named_periods("in December", NOW)).tolist() == [0, 0, 1, 0]
    assert in_periods(created, named_periods("on 14 August 2023", NOW)).tolist() == [1, 0, 0, 0]
    assert in_periods(created, []).tolist() == [0, 0, 0, 0]


_WORDS = ["in", "last", "this", "past", "of", "during", "ago", "a", "two", "Jan", "MAY",
          "mAr", "Sept", "sep.", "december", "week", "Months", "YEAR", "days", "today",
          "Yesterday", "tonight", "morning", "deploy", "friday", "billing", "-", ",", "14th"]  # fmt: skip


@given(st.lists(st.sampled_from(_WORDS), max_size=6), st.sampled_from([" ", "  ", "\t"]))
@example(["this", "morning"], " ")
@example(["last", "Sept"], " ")
@example(["3", "weeks", "ago"], " ")
def test_a_query_skipped_before_the_patterns_names_no_period(words: list[str], gap: str) -> None:
    """may_name_a_period is False only where no pattern matches (the patterns are then
    not compiled, ≈ 5 ms of a one-off search): a period is never missed for it."""
    from memcli.core.dates import _patterns, may_name_a_period

    query = gap.join(words)
    if not may_name_a_period(query):
        assert not any(p.search(query) for p, _ in _patterns()), query
        assert named_periods(query, NOW) == []
    assert not may_name_a_period("how do we deploy the billing service on friday")
    assert may_name_a_period("in August") and may_name_a_period("昨天") and spans("in August")
