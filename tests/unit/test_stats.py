"""memcli.services.stats.usage: the usage figures of `memcli stats`, a table of cases
over entries and their access counts (pure: no workspace)."""

from __future__ import annotations

import datetime as dt

import pytest

from memcli.core.models import Entry
from memcli.services.stats import usage
from memcli.store.access import Access

NOW = dt.datetime(2026, 12, 7, 12, 0, tzinfo=dt.UTC)


def entry(entry_id: str, importance: float = 0.5, kw: str = "") -> Entry:
    meta = {"imp": str(importance)} | ({"kw": kw} if kw else {})
    return Entry(entry_id, f"text of {entry_id}", "fact", "memory.md", 1, meta)


ENTRIES = [entry("a", 0.9, "x,y"), entry("b", 0.3), entry("c", 0.6, "z"), entry("d")]
CASES = [
    # (access counts, days, unused ids, most used ids)
    ({}, 30, ["a", "b", "c", "d"], []),
    ({"a": Access(3, "2026-12-06T10:00:00Z")}, 30, ["b", "c", "d"], ["a"]),
    ({"a": Access(3, "2026-10-01T10:00:00Z")}, 30, ["a", "b", "c", "d"], ["a"]),  # long ago
    ({"a": Access(3, "2026-10-01T10:00:00Z")}, 90, ["b", "c", "d"], ["a"]),
    ({"b": Access(1, "2026-12-07T11:00:00Z"), "c": Access(5, "2026-12-01T00:00:00Z")}, 7,
     ["a", "d"], ["c", "b"]),  # most used first
    ({"b": Access(2, "not a time"), "d": Access(2, None)}, 30, ["a", "b", "c", "d"], ["b", "d"]),
    ({"zz": Access(9, "2026-12-07T11:00:00Z")}, 30, ["a", "b", "c", "d"], []),  # gone entry
]


@pytest.mark.parametrize(("access", "days", "unused", "most"), CASES)
def test_usage(access: dict, days: float, unused: list[str], most: list[str]) -> None:
    got = usage(ENTRIES, access, days, NOW)
    assert got["unused"] == {"days": days, "count": len(unused), "ids": unused}
    assert [u["id"] for u in got["most_used"]] == most
    assert got["average_importance"] == round((0.9 + 0.3 + 0.6 + 0.5) / 4, 3)
    assert got["with_keywords"] == 2


def test_no_entries() -> None:
    got = usage([], {}, 30, NOW)
    assert got["average_importance"] is None and got["with_keywords"] == 0
    assert got["unused"]["count"] == 0 and got["most_used"] == []
