"""Reliability (issue 8) at CI size: the same code as tests/support/reliability.py (the
benchmark), asserting zero losses. Real processes, a real watcher, SIGKILL, real
damaged files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import editors, reliability


@pytest.mark.slow
def test_concurrent_writers_hand_edits_and_watcher_lose_nothing(tmp_path: Path) -> None:
    result = reliability.concurrency(tmp_path, ops=12, hand=8)
    assert result.acknowledged >= 12 * 2 and result.hand_edits == 16
    assert (result.lost, result.duplicated, result.problems) == (0, 0, 0), result.details
    assert result.index_consistent
    assert result.errors == []


@pytest.mark.slow
def test_kill_minus_nine_never_tears_a_file(tmp_path: Path) -> None:
    result = reliability.crashes(tmp_path, trials=8)
    assert result.writes_acknowledged > 0  # the kills hit a working writer
    assert (result.torn, result.lost) == (0, 0), result.details


@pytest.mark.slow
def test_damaged_derived_state_is_rebuilt(tmp_path: Path) -> None:
    result = reliability.derived_state(tmp_path, queries=1)
    assert result.cases >= 10
    assert result.recovered == result.cases, result.details
    assert result.access_kept_after_rebuild


#: bad-input cases run as real `memcli` processes (the rest through the CLI's entry point in
#: the test's process): a refused write, a read that warns, a usage error, the model's
#: paths (search, compress, inject), and those that need a process of their own
AS_PROCESSES = {
    "malformed metadata: add",
    "binary memory.md: search",
    "importance abc",
    "transcript not JSON",
    "read-only workspace",
    "full disk (file size limit)",
    "compress in a pipe without --yes",
    "</memory> inside an entry",
}


@pytest.mark.slow
def test_bad_input_gets_clear_errors_and_changes_nothing(tmp_path: Path) -> None:
    result = reliability.bad_input(tmp_path, processes=AS_PROCESSES)
    assert result.cases >= 25
    assert result.in_process == result.cases - len(AS_PROCESSES)  # the names are cases'
    assert result.crashed == 0
    assert result.passed == result.cases, result.details


@pytest.mark.slow
def test_security_boundaries(tmp_path: Path) -> None:
    found = reliability.security(tmp_path)
    assert found["socket_mode"] == "0o600"
    assert found["daemon_refusals"] == found["daemon_requests"] == 4
    assert found["inject_block_closings"] == {"markdown": 1, "xml": 1, "json": True}


@pytest.mark.slow
@pytest.mark.parametrize("style", ["inplace", "stale"])
def test_editors_racing_memcli_lose_nothing(tmp_path: Path, style: str) -> None:
    """An editor saving memory.md over and over (in place, or a stale buffer) while
    memcli adds, edits, forgets, extracts and compresses: every line either side was
    told was written is in the files, or (a stale buffer saved over memcli's entries)
    listed by `memcli history --removed` to bring back."""
    result = editors.trial(tmp_path, style, saves=5000, ops=6)
    assert result.editor_saves >= 5 and result.memcli_acks >= 10  # they overlapped
    lost = (result.editor_lost, result.memcli_lost, result.originals_lost, result.duplicated)
    assert lost == (0, 0, 0, 0), result.details
    assert result.problems == 0
    if style == "stale":
        assert result.memcli_removed_recorded > 0  # the stale buffer did remove some


@pytest.mark.slow
def test_issue_14_attacks_do_no_harm(tmp_path: Path) -> None:
    """Each attack of issue 14 through the real CLI (one real watcher for the daemon
    cases): refused commands change no file and name the problem, nothing reaches an
    untrusted LLM endpoint or a stranger's socket, no raw escape reaches the terminal,
    every command returns within its bound."""
    result = reliability.attacks(tmp_path)
    assert result.cases + len(result.skipped) >= 40  # two need root (another uid)
    harmful = {name for name, ok, _ in result.outcomes if not ok}
    assert harmful == set(), result.details
    assert result.harmless == result.cases
