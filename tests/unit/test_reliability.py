"""Reliability (issue 8) at CI size, the part without processes: fuzzed Markdown and
metadata round trip (tests/support/reliability.py, as the benchmark runs it)."""

from __future__ import annotations

from tests.support import reliability


def test_fuzzed_markdown_and_metadata_round_trip() -> None:
    counts = reliability.fuzz(300)
    assert counts == {"markdown": 300, "metadata": 300}
