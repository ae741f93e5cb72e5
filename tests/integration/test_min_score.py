"""An explicit --min-score replaces search.relevance_floor (docs/search.md): with the
bundled model on the sample workspace, the hits of each threshold — unset, 0, below the
floor, above it — are exactly those the scores and relevances of every candidate say,
through the CLI's real entry point, a real MCP stdio client and the Python API."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.store.config import SearchSettings
from tests.integration.test_mcp import _session_run, payload
from tests.support.cli import as_json, invoke

pytestmark = pytest.mark.slow  # the real model

QUERY = "python testing"
FLOOR = SearchSettings().relevance_floor


def cli_hits(ws: Path, *args: str) -> list[dict]:
    out = invoke(CliRunner(), ws, "search", QUERY, "--json", "--explain", "--no-touch", "-n", "50", *args)
    return as_json(out)["hits"]


# min-score given -> which candidates are kept: (score, relevance) -> bool
CASES = [
    (None, lambda score, relevance: relevance >= FLOOR),  # unset: the floor
    (0.0, lambda score, relevance: True),  # everything found
    (FLOOR - 0.05, lambda score, relevance: score >= FLOOR - 0.05),  # below the floor
    (0.5, lambda score, relevance: score >= 0.5),  # above it
]


@pytest.fixture(scope="module")
def candidates(tmp_path_factory: pytest.TempPathFactory, exported) -> tuple[Path, dict]:  # noqa: ANN001
    """The sample workspace and every candidate of QUERY: id -> (score, relevance)."""
    import shutil

    from tests.support.env import SAMPLE

    ws = tmp_path_factory.mktemp("minscore") / "ws"
    shutil.copytree(SAMPLE, ws, ignore=shutil.ignore_patterns(".memcli"))
    every = {
        h.entry.id: (h.score, h.components["relevance"])
        for h in Memory(ws).search(QUERY, limit=50, floor=0.0, touch=False)
    }
    assert len(every) < 50  # every candidate, not the best 50 of them
    return ws, every


def expected(every: dict, keep) -> set[str]:  # noqa: ANN001
    return {i for i, (score, relevance) in every.items() if keep(score, relevance)}


def test_the_cases_reach_both_sides_of_the_floor(candidates) -> None:  # noqa: ANN001
    _, every = candidates
    below = [i for i, (_, relevance) in every.items() if relevance < FLOOR]
    assert below and len(below) < len(every)  # the floor leaves some out
    assert any(s >= FLOOR - 0.05 for s, r in every.values() if r < FLOOR)  # 0.2 takes some
    assert any(s < 0.5 for s, r in every.values() if r >= FLOOR)  # 0.5 drops some


@pytest.mark.parametrize(("given", "keep"), CASES)
def test_cli_min_score_replaces_the_floor(candidates, given, keep) -> None:  # noqa: ANN001
    ws, every = candidates
    args = () if given is None else ("--min-score", str(given))
    assert {h["id"] for h in cli_hits(ws, *args)} == expected(every, keep)


@pytest.mark.parametrize(("given", "keep"), CASES)
def test_api_min_score_replaces_the_floor(candidates, given, keep) -> None:  # noqa: ANN001
    ws, every = candidates
    hits = Memory(ws).search(QUERY, limit=50, min_score=given, touch=False)
    assert {h.entry.id for h in hits} == expected(every, keep)


def test_mcp_min_relevance_score_replaces_the_floor(candidates) -> None:  # noqa: ANN001
    ws, every = candidates

    async def steps(session):  # noqa: ANN001, ANN202
        found = {}
        for given, _ in CASES:
            args = {"query": QUERY, "limit": 20}
            if given is not None:
                args["min_relevance_score"] = given
            result = payload(await session.call_tool("search_memories", args))
            found[given] = {r["memory_key"] for r in result["results"]}
        return found

    found = anyio.run(_session_run, ws, steps)
    for given, keep in CASES:
        wanted = expected(every, keep)
        if len(wanted) > 20:  # the tool returns at most 20: the best of them
            assert len(found[given]) == 20 and found[given] <= wanted, given
        else:
            assert found[given] == wanted, given
