"""edit --text recomputes automatic keywords and leaves a person's alone: the pure rule.
Through the CLI: tests/integration/test_edit_text.py."""

from __future__ import annotations

import pytest

from memcli.logic.keywords import recomputed_keywords


@pytest.mark.parametrize(
    ("stored", "old", "new", "expected"),
    [
        # what add derived from the old text: replaced by the new text's
        (["berlin", "lives"], "Lives in Berlin", "Lives in Munich", ["munich", "lives"]),
        # derived ones, then keywords a later duplicate add brought: those stay
        (
            ["berlin", "lives", "home"],
            "Lives in Berlin",
            "Lives in Munich",
            ["munich", "lives", "home"],
        ),
        # set by a person: stay as they are
        (["city", "home"], "Lives in Berlin", "Lives in Munich", None),
        (["drinks"], "Prefers tea", "Prefers coffee", None),  # the old text gives none
        # nothing derived from either text, nothing set
        ([], "喜欢喝茶", "喜欢喝咖啡", []),
    ],
)
def test_recomputed_keywords(
    stored: list[str], old: str, new: str, expected: list[str] | None
) -> None:
    assert recomputed_keywords(stored, old, new) == expected
