"""The mutation list stays true (issue 25): every deliberate bug of
tests/support/mutation_list.py still applies (each snippet exactly once in its file) and
names tests that exist; the seven bugs issue 25 planted are on it. Running mutations
end to end: tests/process/test_mutations.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.mutation_list import MUTATIONS, Mutation
from tests.support.mutations import ROOT, node_exists, problems

ISSUE_25 = {
    "secrets-forget-ghs-ghr",
    "merge-driver-undoes-unpin",
    "last-month-name-this-year",
    "untrusted-index-uri-applies",
    "extract-updates-reflections",
    "front-matter-unsafe-yaml",
    "mcp-token-file-group-readable",
    "packer-empty-block",
}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda mu: mu.name)
def test_every_mutation_still_applies_and_names_real_tests(mutation: Mutation) -> None:
    assert problems(ROOT, mutation) == []


def test_the_list_holds_issue_25s_bugs_and_names_are_unique() -> None:
    names = [mu.name for mu in MUTATIONS]
    assert len(names) == len(set(names))
    assert set(names) >= ISSUE_25
    assert len(MUTATIONS) >= 35


def test_a_moved_snippet_or_a_renamed_test_is_reported(tmp_path: Path) -> None:
    (tmp_path / "memcli").mkdir()
    (tmp_path / "memcli" / "x.py").write_text("a = 1\nb = 1\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_a():\n    pass\n")
    good = Mutation("ok", "memcli/x.py", (("a = 1", "a = 2"),), ("tests/test_x.py::test_a",))
    assert problems(tmp_path, good) == []
    twice = Mutation("twice", "memcli/x.py", ((" = 1", " = 2"),), good.tests)
    assert problems(tmp_path, twice) == ["memcli/x.py: snippet 1 found 2 times, not once"]
    gone = Mutation("gone", "memcli/x.py", (("c = 1", "c = 2"),), good.tests)
    assert problems(tmp_path, gone) == ["memcli/x.py: snippet 1 found 0 times, not once"]
    renamed = Mutation("renamed", "memcli/x.py", good.edits, ("tests/test_x.py::test_b",))
    assert problems(tmp_path, renamed) == ["tests/test_x.py::test_b: no such test"]
    moved = Mutation("moved", "memcli/y.py", good.edits, good.tests)
    assert problems(tmp_path, moved) == ["memcli/y.py: no such file"]
    same = Mutation("same", "memcli/x.py", (("a = 1", "a = 1"),), good.tests)
    assert problems(tmp_path, same) == ["memcli/x.py: the patch changes nothing"]
    assert node_exists(tmp_path, "tests/test_x.py::test_a[param-1]")
    assert not node_exists(tmp_path, "tests/test_y.py")
