"""Reliability (issue 8) at CI size: the same code as bench/reliability.py, asserting
zero losses. Real processes, a real watcher, SIGKILL, real damaged files."""

from __future__ import annotations

from tests.support import reliability


def test_fuzzed_markdown_and_metadata_round_trip() -> None:
    counts = reliability.fuzz(300)
    assert counts == {"markdown": 300, "metadata": 300}
