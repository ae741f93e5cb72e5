"""Dates in search: how an entry's date is spelled for the keyword side, and
which periods a query names ("on 14 August 2023", "in August 2023", "in 2022", "last
May", "yesterday", "2023年8月") relative to now.

Hand-written on purpose: the grammar is small and fixed (English and Chinese day, month
and year forms, a few relative words), it must not guess (a general date finder reads
words such as "may" or "second" in any sentence as dates), and it runs on every query,
so it costs a few regular expressions and no import beyond the standard library.
"""

from __future__ import annotations

import datetime as dt
import functools
import re

#: English month names, whatever the locale (the keyword side spells dates this way)
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
MONTHS = {name.lower(): i for i, name in enumerate(MONTH_NAMES, 1)}
MONTHS |= {name[:3].lower(): i for i, name in enumerate(MONTH_NAMES, 1)}
MONTHS["sept"] = 9

_MONTH = (
    r"(January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                 "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_COUNT = r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"

#: (pattern, kind), tried in order; text a match covered is not matched again
_SOURCES: list[tuple[str, int, str]] = [
    (rf"\b{_YEAR}-(\d\d)-(\d\d)\b", 0, "iso"),
    (rf"\b{_DAY}\s+{_MONTH},?\s*{_YEAR}\b", re.I, "dmy"),
    (rf"\b{_MONTH}\s+{_DAY},?\s*{_YEAR}\b", re.I, "mdy"),
    (rf"\b{_MONTH},?\s+{_YEAR}\b", re.I, "my"),
    (rf"\b{_YEAR}-(\d\d)\b", 0, "iso-month"),
    (r"((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", 0, "zh-dmy"),
    (r"((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月", 0, "zh-my"),
    (r"((?:19|20)\d\d)\s*年", 0, "y"),
    (rf"\b{_YEAR}\b", 0, "y"),
    (rf"\blast\s+{_MONTH}(?!\w)", re.I, "last-month-name"),
    (rf"\b(?:in|during|of|this)\s+{_MONTH}(?!\w)", re.I, "month-name"),
    (rf"\b{_COUNT}\s+(day|week|month|year)s?\s+ago\b", re.I, "ago"),
    (r"\b(yesterday|today|tonight|this morning)\b", re.I, "day-word"),
    (r"\b(last|this|past)\s+(week|month|year)\b", re.I, "relative"),
    (r"(昨天|今天|前天|上周|本周|这周|上个月|这个月|本月|去年|今年)", 0, "zh-relative"),
]


@functools.cache
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    """The patterns, compiled on the first query that needs them (not at import: a
    one-off search pays for what it uses)."""
    return [(re.compile(source, flags), kind) for source, flags, kind in _SOURCES]


class Period:
    """Days from `start` to `end` (inclusive), or, with `month` and no start, that month
    of any year ("in December")."""

    __slots__ = ("start", "end", "month")

    def __init__(self, start: dt.date | None, end: dt.date | None, month: int | None = None):
        self.start, self.end, self.month = start, end, month

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Period) and (self.start, self.end, self.month) == (
            other.start,
            other.end,
            other.month,
        )

    def __hash__(self) -> int:
        return hash((self.start, self.end, self.month))

    def __repr__(self) -> str:
        return f"Period({self.describe()})"

    def describe(self) -> str:
        if self.start is None:
            return MONTH_NAMES[(self.month or 1) - 1]
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()}..{self.end.isoformat() if self.end else ''}"


def date_spellings(moment: dt.datetime | dt.date | None) -> str:
    """An entry's date as the keyword side spells it: '2023-08-14 14 August 2023 August
    2023' (empty when undated)."""
    if moment is None:
        return ""
    month = MONTH_NAMES[moment.month - 1]
    return f"{moment:%Y-%m-%d} {moment.day} {month} {moment.year} {month} {moment.year}"


#: what an ASCII query that names a period holds, in lower case, when it has no digit:
#: one of these (the patterns' own words; a month's first three letters)
_CUES = (
    *(name[:3].lower() for name in MONTH_NAMES),
    *("ago", "yesterday", "today", "tonight", "morning", "week", "month", "year"),
)


def may_name_a_period(query: str) -> bool:
    """False when no pattern can match `query`: ASCII (a non-ASCII letter may match an
    ASCII one case-insensitively: ſ, ı, the Kelvin sign; and the Chinese forms), no
    digit and none of _CUES. Most queries: compiling the patterns (≈ 5 ms of a one-off
    search) is skipped."""
    if not query.isascii() or any(c.isdigit() for c in query):
        return True
    lowered = query.lower()
    return any(cue in lowered for cue in _CUES)


def named_periods(query: str, now: dt.datetime) -> list[Period]:
    """The periods a query names, relative to `now` for "yesterday", "last May", "3 weeks
    ago" and the like. Empty for most queries."""
    if not may_name_a_period(query):
        return []
    found: list[Period] = []
    taken: list[tuple[int, int]] = []
    today = now.date()
    for pattern, kind in _patterns():
        for match in pattern.finditer(query):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            try:
                period = _period(kind, match.groups(), today)
            except ValueError:  # 2023-02-30, month 13: names no day, and no year either
                taken.append(match.span())
                continue
            if period is not None:
                taken.append(match.span())
                found.append(period)
    return found


def _period(kind: str, g: tuple[str, ...], today: dt.date) -> Period | None:
    """The period of one match; ValueError when it is no date (2023-02-30, month 13)."""
    if kind in ("iso", "zh-dmy"):
        return _day(dt.date(int(g[0]), int(g[1]), int(g[2])))
    if kind == "dmy":
        return _day(dt.date(int(g[2]), _month(g[1]), int(g[0])))
    if kind == "mdy":
        return _day(dt.date(int(g[2]), _month(g[0]), int(g[1])))
    if kind == "my":
        return _month_of(int(g[1]), _month(g[0]))
    if kind in ("iso-month", "zh-my"):
        if not 1 <= int(g[1]) <= 12:
            raise ValueError(f"month {g[1]}")
        return _month_of(int(g[0]), int(g[1]))
    if kind == "y":
        return Period(dt.date(int(g[0]), 1, 1), dt.date(int(g[0]), 12, 31))
    if kind in ("month-name", "last-month-name") and g[0].casefold() == "may" and g[0] != "May":
        return None  # "this may help", "last may be": the verb, not the month
    if kind == "month-name":
        return Period(None, None, _month(g[0]))
    if kind == "last-month-name":
        month = _month(g[0])  # the latest such month before this one
        year = today.year if month < today.month else today.year - 1
        return _month_of(year, month)
    if kind == "ago":
        count = _NUMBER_WORDS.get(g[0].casefold()) or int(g[0])
        return _ago(today, count, g[1].casefold())
    if kind == "day-word":
        word = g[0].casefold()
        return _day(today - dt.timedelta(days=1) if word == "yesterday" else today)
    if kind == "relative":
        return _relative(today, g[0].casefold() == "this", g[1].casefold())
    return _chinese(g[0], today)


def _month(name: str) -> int:
    return MONTHS[name.casefold().rstrip(".")]


def _day(day: dt.date) -> Period:
    return Period(day, day)


def _month_of(year: int, month: int) -> Period:
    following = dt.date(year + month // 12, month % 12 + 1, 1)
    return Period(dt.date(year, month, 1), following - dt.timedelta(days=1))


def _ago(today: dt.date, count: int, unit: str) -> Period:
    if unit == "day":
        return _day(today - dt.timedelta(days=count))
    if unit == "week":
        start = today - dt.timedelta(days=today.weekday() + 7 * count)
        return Period(start, start + dt.timedelta(days=6))
    if unit == "month":
        index = today.year * 12 + today.month - 1 - count
        return _month_of(index // 12, index % 12 + 1)
    year = today.year - count
    return Period(dt.date(year, 1, 1), dt.date(year, 12, 31))


def _relative(today: dt.date, this: bool, unit: str) -> Period:
    if this:
        if unit == "week":
            start = today - dt.timedelta(days=today.weekday())
            return Period(start, start + dt.timedelta(days=6))
        if unit == "month":
            return _month_of(today.year, today.month)
        return Period(dt.date(today.year, 1, 1), dt.date(today.year, 12, 31))
    return _ago(today, 1, unit)


def _chinese(word: str, today: dt.date) -> Period:
    if word in ("昨天", "前天"):
        return _day(today - dt.timedelta(days=1 if word == "昨天" else 2))
    if word == "今天":
        return _day(today)
    if word in ("上周", "本周", "这周"):
        return _relative(today, word != "上周", "week")
    if word in ("上个月", "这个月", "本月"):
        return _relative(today, word != "上个月", "month")
    return _relative(today, word == "今年", "year")
