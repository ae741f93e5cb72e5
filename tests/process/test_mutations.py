"""bench/mutations.py end to end on a few of its mutations (issue 25): each planted in a
temporary copy of the tree, its tests run there and fail; a harmless change survives
(so "caught" is not what the runner says whatever happens); the working tree is never
touched."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.mutation_list import MUTATIONS, Mutation
from tests.support.mutations import ROOT, run_one

FEW = ["secrets-forget-ghs-ghr", "last-month-name-this-year", "mcp-token-file-group-readable"]


def _tracked_state() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "memcli"],
        capture_output=True,
        text=True,
    )
    return done.stdout if done.returncode == 0 else ""


@pytest.mark.slow
def test_a_few_mutations_are_caught_in_a_copy() -> None:
    before = {p: p.read_bytes() for p in (ROOT / "memcli").rglob("*.py")}
    state = _tracked_state()
    by_name = {mu.name: mu for mu in MUTATIONS}
    outcomes = [run_one(by_name[name], timeout=600) for name in FEW]
    assert [(o.name, o.status) for o in outcomes] == [(n, "caught") for n in FEW], outcomes
    assert all(o.failed for o in outcomes)
    harmless = Mutation(
        "harmless",
        "memcli/core/dates.py",
        (("#: English month names", "#: English month names (a comment)"),),
        ("tests/unit/test_dates.py::test_date_spellings",),
    )
    assert run_one(harmless, timeout=600).status == "survived"
    assert {p: p.read_bytes() for p in (ROOT / "memcli").rglob("*.py")} == before
    assert _tracked_state() == state
