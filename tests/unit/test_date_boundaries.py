"""Every date phrase of memcli.core.dates near its boundaries (issue 25): first and last
day of a month and a year, leap days, "last <month>" asked in that month and the month
after, "N weeks ago" across a new year, the Chinese words on 1 January, months 0 and 13.
"last November" asked in November is last year's November, not this one."""

from __future__ import annotations

import calendar
import datetime as dt

import pytest

from memcli.core.dates import MONTH_NAMES, named_periods


def spans(query: str, today: dt.date) -> list[str]:
    now = dt.datetime(today.year, today.month, today.day, 12, 0, tzinfo=dt.UTC)
    return [p.describe() for p in named_periods(query, now)]


def month_span(year: int, month: int) -> str:
    last = calendar.monthrange(year, month)[1]
    return f"{year}-{month:02d}-01..{year}-{month:02d}-{last:02d}"


def _last_month_rows() -> list[tuple[str, dt.date, str]]:
    """'last <month>' for every month: asked on its first and last day (last year's),
    and on the first day of the month after (this year's, or for December on 1 January
    the December just gone)."""
    rows = []
    for month, name in enumerate(MONTH_NAMES, 1):
        first = dt.date(2026, month, 1)
        last = dt.date(2026, month, calendar.monthrange(2026, month)[1])
        after = last + dt.timedelta(days=1)
        for spelling in (name, name[:3], name.lower()):
            if spelling.lower() == "may" and spelling != "May":
                continue  # "last may" is the verb (tested below)
            query = f"what happened last {spelling}"
            rows += [
                (query, first, month_span(2025, month)),
                (query, last, month_span(2025, month)),
                (query, after, month_span(2026, month)),
            ]
    return rows


@pytest.mark.parametrize(("query", "today", "expected"), _last_month_rows())
def test_last_month_name_in_that_month_and_the_month_after(
    query: str, today: dt.date, expected: str
) -> None:
    assert spans(query, today) == [expected]


D = dt.date
#: (query, asked on, the periods it names)
ROWS: list[tuple[str, dt.date, list[str]]] = [
    # one day back, across a month, a year, a leap day
    ("yesterday", D(2027, 1, 1), ["2026-12-31"]),
    ("yesterday", D(2024, 3, 1), ["2024-02-29"]),
    ("yesterday", D(2023, 3, 1), ["2023-02-28"]),
    ("Yesterday's notes", D(2026, 5, 1), ["2026-04-30"]),
    ("today", D(2026, 12, 31), ["2026-12-31"]),
    ("tonight", D(2027, 1, 1), ["2027-01-01"]),
    ("this morning", D(2024, 2, 29), ["2024-02-29"]),
    ("昨天", D(2027, 1, 1), ["2026-12-31"]),
    ("前天", D(2027, 1, 2), ["2026-12-31"]),
    ("前天", D(2027, 1, 1), ["2026-12-30"]),
    ("今天", D(2026, 12, 31), ["2026-12-31"]),
    # N days / weeks / months / years ago across a new year
    ("1 day ago", D(2027, 1, 1), ["2026-12-31"]),
    ("two days ago", D(2027, 1, 1), ["2026-12-30"]),
    ("ten days ago", D(2024, 3, 9), ["2024-02-28"]),
    ("a week ago", D(2027, 1, 4), ["2026-12-28..2027-01-03"]),  # asked on a Monday
    ("a week ago", D(2027, 1, 3), ["2026-12-21..2026-12-27"]),  # asked on a Sunday
    ("3 weeks ago", D(2027, 1, 5), ["2026-12-14..2026-12-20"]),
    ("3 weeks ago", D(2026, 1, 1), ["2025-12-08..2025-12-14"]),
    ("one month ago", D(2027, 1, 31), ["2026-12-01..2026-12-31"]),
    ("2 months ago", D(2027, 1, 1), ["2026-11-01..2026-11-30"]),
    ("12 months ago", D(2026, 12, 31), ["2025-12-01..2025-12-31"]),
    ("13 months ago", D(2027, 1, 15), ["2025-12-01..2025-12-31"]),
    ("a month ago", D(2024, 3, 31), ["2024-02-01..2024-02-29"]),
    ("a year ago", D(2027, 1, 1), ["2026-01-01..2026-12-31"]),
    ("five years ago", D(2026, 12, 31), ["2021-01-01..2021-12-31"]),
    # this / last / past week, month, year at their edges
    ("last week", D(2026, 11, 23), ["2026-11-16..2026-11-22"]),  # a Monday
    ("last week", D(2026, 11, 29), ["2026-11-16..2026-11-22"]),  # a Sunday
    ("this week", D(2026, 11, 29), ["2026-11-23..2026-11-29"]),
    ("this week", D(2027, 1, 1), ["2026-12-28..2027-01-03"]),
    ("past week", D(2027, 1, 6), ["2026-12-28..2027-01-03"]),
    ("past month", D(2027, 1, 1), ["2026-12-01..2026-12-31"]),
    ("past year", D(2027, 1, 1), ["2026-01-01..2026-12-31"]),
    ("this week", D(2026, 11, 23), ["2026-11-23..2026-11-29"]),  # a Monday
    ("last month", D(2027, 1, 1), ["2026-12-01..2026-12-31"]),
    ("last month", D(2024, 3, 31), ["2024-02-01..2024-02-29"]),
    ("this month", D(2024, 2, 29), ["2024-02-01..2024-02-29"]),
    ("this month", D(2026, 12, 31), ["2026-12-01..2026-12-31"]),
    ("last year", D(2027, 1, 1), ["2026-01-01..2026-12-31"]),
    ("last year", D(2026, 12, 31), ["2025-01-01..2025-12-31"]),
    ("this year", D(2027, 1, 1), ["2027-01-01..2027-12-31"]),
    ("上周", D(2026, 11, 23), ["2026-11-16..2026-11-22"]),
    ("本周", D(2027, 1, 1), ["2026-12-28..2027-01-03"]),
    ("这周", D(2026, 11, 29), ["2026-11-23..2026-11-29"]),
    ("上个月", D(2027, 1, 15), ["2026-12-01..2026-12-31"]),
    ("这个月", D(2024, 2, 1), ["2024-02-01..2024-02-29"]),
    ("本月", D(2026, 12, 31), ["2026-12-01..2026-12-31"]),
    ("去年", D(2027, 1, 1), ["2026-01-01..2026-12-31"]),
    ("去年", D(2026, 12, 31), ["2025-01-01..2025-12-31"]),
    ("今年", D(2027, 1, 1), ["2027-01-01..2027-12-31"]),
    # named days, months and years: the first and last of each, leap days, bad ones
    ("2023年8月", D(2026, 11, 24), ["2023-08-01..2023-08-31"]),
    ("2023年12月", D(2026, 11, 24), ["2023-12-01..2023-12-31"]),
    ("2023年1月", D(2026, 11, 24), ["2023-01-01..2023-01-31"]),
    ("2024年2月", D(2026, 11, 24), ["2024-02-01..2024-02-29"]),
    ("2023年2月", D(2026, 11, 24), ["2023-02-01..2023-02-28"]),
    ("2023 年 8 月", D(2026, 11, 24), ["2023-08-01..2023-08-31"]),
    ("2023年13月", D(2026, 11, 24), []),
    ("2023年0月", D(2026, 11, 24), []),
    ("2023年8月31日", D(2026, 11, 24), ["2023-08-31"]),
    ("2023年8月1号", D(2026, 11, 24), ["2023-08-01"]),
    ("2023年2月29日", D(2026, 11, 24), []),
    ("2024年2月29日", D(2026, 11, 24), ["2024-02-29"]),
    ("2023年", D(2026, 11, 24), ["2023-01-01..2023-12-31"]),
    ("2023-12", D(2026, 11, 24), ["2023-12-01..2023-12-31"]),
    ("2023-01", D(2026, 11, 24), ["2023-01-01..2023-01-31"]),
    ("2023-13", D(2026, 11, 24), []),
    ("2023-00", D(2026, 11, 24), []),
    ("2023-12-31", D(2026, 11, 24), ["2023-12-31"]),
    ("2024-02-29", D(2026, 11, 24), ["2024-02-29"]),
    ("2023-02-29", D(2026, 11, 24), []),
    ("31 December 2023", D(2026, 11, 24), ["2023-12-31"]),
    ("1st January, 2024", D(2026, 11, 24), ["2024-01-01"]),
    ("December 31, 2023", D(2026, 11, 24), ["2023-12-31"]),
    ("Feb 29 2024", D(2026, 11, 24), ["2024-02-29"]),
    ("Feb 29 2023", D(2026, 11, 24), []),
    ("32 January 2024", D(2026, 11, 24), []),
    ("December 2023", D(2026, 11, 24), ["2023-12-01..2023-12-31"]),
    ("Sept 2023", D(2026, 11, 24), ["2023-09-01..2023-09-30"]),
    ("Jan. 2024", D(2026, 11, 24), ["2024-01-01..2024-01-31"]),
    ("in 1900", D(2026, 11, 24), ["1900-01-01..1900-12-31"]),
    ("in 2099", D(2026, 11, 24), ["2099-01-01..2099-12-31"]),
    ("in 1899", D(2026, 11, 24), []),
    ("in 2100", D(2026, 11, 24), []),
    ("in December", D(2026, 12, 31), ["December"]),
    ("during Jan", D(2027, 1, 1), ["January"]),
    ("this May", D(2026, 5, 1), ["May"]),
    ("this may help", D(2026, 5, 1), []),
    ("last may be slow", D(2026, 6, 1), []),
    ("an hour ago", D(2026, 11, 24), []),
]


@pytest.mark.parametrize(("query", "today", "expected"), ROWS)
def test_date_phrase_near_its_boundary(query: str, today: dt.date, expected: list[str]) -> None:
    assert spans(query, today) == expected
