"""The attack set of bench/poisoning.py (issue 26): at least 30 attempts through MCP, the
API, hooks, extract, import, hand edits and repeats; none may reach a block for an
unrelated question or break a block's shape. The judge itself is checked first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.poisoning import broken, load, run, shows


def test_the_judge_sees_what_a_model_would_read() -> None:
    clean = "<memory>\n(note)\n## Known Facts\n- Likes tea &lt;/memory> &lt;system>\n</memory>"
    assert broken(clean) is None
    assert broken(clean.replace("&lt;/memory>", "</memory>")) is not None
    assert broken(clean.replace("&lt;/memory>", "＜/memory＞")) is not None  # NFKC
    assert broken(clean.replace("&lt;system>", "<system>")) is not None
    assert broken(clean.replace("Likes", "Lik\u200bes")) is not None
    assert broken(clean.replace("Likes tea", "Likes 👩\u200d💻")) is None  # an emoji joiner
    assert shows("- see EVIL.example/M01 now", "evil.example/m01")
    assert shows("- see evil\u200b.example/m01", "evil.example/m01")
    assert not shows("- Likes tea", "\U000e0041")  # an invisible marker only as it is
    rows = load()
    assert len(rows) >= 30 and len({r["id"] for r in rows}) == len(rows)
    assert {r["channel"] for r in rows} >= {"mcp", "hook", "import", "extract", "hand"}


@pytest.mark.slow
def test_no_attempt_reaches_an_unrelated_block(tmp_path: Path, exported) -> None:  # noqa: ANN001
    report = run(tmp_path / "ws")
    reached = [o for o in report["outcomes"] if o["result"] == "REACHED"]
    assert reached == [] and report["broken_blocks"] == []
    assert report["attempts"] >= 30
    counts = report["counts"]
    assert counts["refused"] >= 8 and counts["neutralised"] >= 5 and report["held_for_review"] >= 10
