"""Issue 25's lower findings, each attack run on real git, real processes and real files
(tests/support/round3_harden.py); every one must leave no harm."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import round3_harden as attacks

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.mark.slow
@needs_git
@pytest.mark.parametrize("name", attacks.HOSTILE_NAMES[:2])
def test_shell_syntax_in_the_workspace_path_runs_nothing_on_merge(
    tmp_path: Path, name: str
) -> None:
    assert attacks.hook_injection(tmp_path, name) == []


@pytest.mark.slow
@needs_git
def test_percent_and_shell_syntax_in_memcli_own_path_run_only_the_driver(tmp_path: Path) -> None:
    assert attacks.driver_injection(tmp_path) == []


@needs_git
def test_an_earlier_hook_line_is_replaced_not_kept(tmp_path: Path) -> None:
    from memcli.store.gitmerge import HOOK_MARK, setup

    root = tmp_path / "ws $(touch pwned)"
    root.mkdir()
    attacks.git(root, "init", "-q")
    hook = root / ".git" / "hooks" / "post-merge"
    old = f'"{sys.executable}" -m memcli -w "{root}" index >/dev/null 2>&1 || true  {HOOK_MARK}\n'
    hook.write_text("#!/bin/sh\necho mine\n" + old, encoding="utf-8")
    setup(root)
    text = hook.read_text(encoding="utf-8")
    assert old not in text and text.count(HOOK_MARK) == 1 and "echo mine\n" in text
    subprocess.run(["sh", "-n", str(hook)], check=True)  # still a valid script
    assert "'" + str(root) + "'" in text  # single-quoted: the shell expands nothing


@pytest.mark.slow
@needs_git
@pytest.mark.parametrize("migrate", [False, True])
def test_a_docs_memory_md_conflict_is_left_to_git(tmp_path: Path, migrate: bool) -> None:
    assert attacks.unanchored_attributes(tmp_path, migrate) == []


@pytest.mark.parametrize("fraction", [0.5, 1.0])  # the scenario tries more
def test_a_driver_cut_off_while_writing_leaves_ours_whole(tmp_path: Path, fraction: float) -> None:
    assert attacks.driver_write_cut(tmp_path, fraction) == []


@pytest.mark.slow
@needs_git
@pytest.mark.parametrize(("where", "depth"), attacks.PLANTS[:2])
def test_a_planted_conflict_id_is_never_used_twice(tmp_path: Path, where: str, depth: int) -> None:
    assert attacks.planted_conflict_id(tmp_path, where, depth) == []


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["deep content", "not JSON"])
def test_a_transcript_line_that_cannot_be_read_is_passed_over_once(
    tmp_path: Path, kind: str
) -> None:
    assert attacks.bad_transcript_line(tmp_path, kind) == []


@pytest.mark.slow
def test_a_40_mb_transcript_line_is_passed_over_in_bounded_memory(tmp_path: Path) -> None:
    assert attacks.long_line_memory(tmp_path, megabytes=40, limit_mb=1.0) == []


@pytest.mark.parametrize("event", ["user-prompt-submit", "stop"])
def test_a_fifo_as_transcript_is_refused_at_once(tmp_path: Path, event: str) -> None:
    assert attacks.fifo_transcript(tmp_path, event) == []


@pytest.mark.slow  # the same inputs, in-process: tests/unit/test_hostile_readers.py
@pytest.mark.parametrize(
    "number", range(len(attacks.CLI_INPUTS)), ids=[c[0] for c in attacks.CLI_INPUTS]
)
def test_malformed_input_gets_a_clear_error_naming_the_place(tmp_path: Path, number: int) -> None:
    assert attacks.cli_reader(tmp_path, number) == []
