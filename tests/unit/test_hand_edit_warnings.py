"""Hand edits that used to pass silently (issue 37, item 8): a line of plain text under
a `##` section (kept, but no entry) is named with its line and what to do; a metadata
comment left open (`- text <!-- id=x kw=a`) is a parse problem naming its line, never
the entry's text. Both additive: the file round-trips byte for byte, the entries around
them are read as before."""

from __future__ import annotations

import pytest

from memcli.store.markdown import parse

HEAD = "# Memory\n\nWhat memcli remembers about me. Edit freely.\n\n## Facts\n- Likes tea\n"

# (what follows HEAD, the lines named as plain text, the lines named as unclosed, texts)
ROWS = [
    ("Works at Globex\n", [7], [], ["Likes tea"]),
    ("Works at Globex\nsince 2025, as a backend engineer\n", [7], [], ["Likes tea"]),
    ("\n1. Drives a Tesla\n", [8], [], ["Likes tea"]),
    ("- Uses emoji in commits <!-- id=mx1 kw=emoji\n", [], [7], ["Likes tea"]),
    ("- Uses emoji <!-- id=mx1 kw=emoji -->\n", [], [], ["Likes tea", "Uses emoji"]),
    (
        "- Writes `<!--` to open a comment\n",
        [],
        [],
        ["Likes tea", "Writes `<!--` to open a comment"],
    ),
    ("- Uses <!-- and --> in HTML\n", [], [], ["Likes tea", "Uses <!-- and --> in HTML"]),
    ("\n```\nplain text in a fence\n```\n", [], [], ["Likes tea"]),
    ("\n<!-- a note -->\n| a | b |\n> quoted\n", [], [], ["Likes tea"]),
    ("  indented under the entry\n", [], [], ["Likes tea\nindented under the entry"]),
]


@pytest.mark.parametrize(("tail", "plain", "unclosed", "texts"), ROWS)
def test_hand_edits_are_named(
    tail: str, plain: list[int], unclosed: list[int], texts: list[str]
) -> None:
    text = HEAD + tail
    doc = parse(text, "memory.md")
    assert doc.serialize() == text  # nothing rewritten
    assert [e.text for e in doc.entries()] == texts
    assert all("<!--" not in e.text or "-->" in e.text or "`" in e.text for e in doc.entries())
    warned = [p.line for p in doc.problems if "plain text, not a list item" in str(p)]
    refused = [p.line for p in doc.problems if "metadata comment is not closed" in str(p)]
    assert (warned, refused) == (plain, unclosed)
    for problem in doc.problems:
        assert str(problem).startswith(f"memory.md:{problem.line}: ") and problem.hint
        # plain text: a warning only; an unclosed comment: the entry is left out
        assert problem.skipped is (problem.line in unclosed)
