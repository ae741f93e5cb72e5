"""Strong, weak, nothing (issue 38 item 4, docs/search.md "What a score means"): a query
whose best hit is not relevant enough gets its closest few, each marked weak; the level
is relevance for a query the model reads and the keyword share for one it does not."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from memcli.core.models import Entry
from memcli.logic.search import WEAK_LIMIT, Signals, is_strong, rank
from memcli.store.config import SearchSettings

S = SearchSettings()
NOW = dt.datetime(2026, 12, 7, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "relevance, share, dated, query_read, mode, strong",
    [
        ([S.strong_relevance], [0.0], [0.0], True, "hybrid", True),  # at the level
        ([S.strong_relevance - 0.01], [0.9], [0.0], True, "hybrid", False),  # relevance decides
        ([0.05], [S.strong_keyword], [0.0], False, "hybrid", True),  # unread: the share
        ([0.5], [S.strong_keyword - 0.01], [0.0], False, "hybrid", False),
        ([0.01], [0.0], [1.0], True, "hybrid", True),  # an entry of the period named
        ([0.01], [0.01], [0.0], True, "keyword", True),  # a shared word is the evidence
        ([], [], [], True, "hybrid", True),  # nothing kept: nothing to call weak
        ([S.strong_relevance - 0.01], [0.0], [0.0], False, "semantic", False),
    ],
)
def test_strength_levels(
    relevance: list[float],
    share: list[float],
    dated: list[float],
    query_read: bool,
    mode: str,
    strong: bool,
) -> None:
    got = is_strong(
        np.array(relevance), np.array(share), np.array(dated), query_read, mode, S
    )
    assert got is strong


def entries(n: int) -> list[Entry]:
    return [Entry(f"e{i}", f"entry {i}", "fact", "memory.md", i + 1) for i in range(n)]


@pytest.mark.parametrize(
    "cosine, floor, count, weak",
    [
        (0.27, None, WEAK_LIMIT, True),  # relevance 0.65 · 0.27 ≈ 0.18: weak, the closest 3
        (0.27, 0.0, 5, True),  # a floor of one's own: every hit above it, still weak
        (0.5, None, 5, False),  # strong: every hit
        (0.2, None, 0, False),  # under the floor: nothing
    ],
)
def test_a_weak_query_shows_its_three_closest(
    cosine: float, floor: float | None, count: int, weak: bool
) -> None:
    signals = Signals(np.arange(5), np.full(5, cosine), np.zeros(5), keyword_ideal=4.0)
    found = rank(entries(5), signals, settings=S, mode="hybrid", now=NOW, limit=10, floor=floor)
    assert len(found) == count
    assert all(h.weak is weak for h in found)
    assert all(h.to_dict().get("weak", False) is weak for h in found)


@pytest.mark.parametrize("weak", [True, False])
def test_an_agent_sees_which_results_are_weak(weak: bool) -> None:
    """MCP's search results say `weak` as --json does (an agent must not take the closest
    of nothing for an answer)."""
    from memcli.logic.search import Hit
    from memcli.surfaces.mcp_server import _result

    result = _result(Hit(entries(1)[0], 0.18, {}, weak))
    assert result.get("weak", False) is weak
