"""memcli export / import (issue 20 §4), the pure parts: Markdown lists become items,
the shape of an export. Through the CLI: tests/integration/test_portability.py."""

from __future__ import annotations

from memcli.adapters.portability import ImportItem, export_entries, parse_import
from tests.support.samples import CLAUDE_MD


def test_markdown_lists_become_items() -> None:
    items = parse_import(CLAUDE_MD, "CLAUDE.md")
    assert items == [
        ImportItem("Prefers pytest over unittest", "preference"),
        ImportItem("Uses ruff for linting", "preference"),
        ImportItem("Four spaces, never tabs\n(the CI checks it)", "fact"),
        ImportItem("Run the tests with:\n```\nmake test\n```", "fact"),
        ImportItem("Numbered items count too", "fact"),
    ]


def test_export_markdown_shape() -> None:
    from memcli.core.models import Entry

    entries = [
        Entry("m1", "Likes tea", "preference", "memory.md", 1),
        Entry("m2", "Two\nlines", "fact", "memory.md", 2),
    ]
    assert export_entries(entries, "markdown") == (
        "## Preferences\n- Likes tea\n\n## Facts\n- Two\n  lines\n\n"
    )


CHATGPT_DATED = """1. [2024-05-02]. Prefers concise answers without preamble.
2. [2024-06-11]. Works at TechCorp as a backend engineer.
3. [2024-06-11]. Has a cat named Miso.
"""


def test_chatgpt_memories_as_people_copy_them() -> None:
    items = parse_import(CHATGPT_DATED, "memories.txt")
    assert items == [
        ImportItem("Prefers concise answers without preamble.", created="2024-05-02"),
        ImportItem("Works at TechCorp as a backend engineer.", created="2024-06-11"),
        ImportItem("Has a cat named Miso.", created="2024-06-11"),
    ]
    # copied from the settings page: one memory per line, no numbers, blank lines between
    plain = "Prefers concise answers.\n\nHas a cat named Miso.\n"
    assert [i.text for i in parse_import(plain, "memories.txt")] == [
        "Prefers concise answers.",
        "Has a cat named Miso.",
    ]
    assert [i.text for i in parse_import(plain, "x", "chatgpt")] == [
        "Prefers concise answers.",
        "Has a cat named Miso.",
    ]
    # a document whose prose is not a list of memories gives none, not its paragraphs
    assert parse_import("# Notes\n\nSome prose here.\n", "notes.md") == []


def test_the_dates_of_imported_memories_are_read_and_checked() -> None:
    import json

    import pytest

    from memcli.core.errors import ValidationError

    jsonl = "\n".join(
        json.dumps(row)
        for row in (
            {"text": "Likes tea", "created": "2024-05-02"},
            {"text": "Moved to Lisbon", "created": "2025-01-03T09:30:00+01:00"},
            {"text": "Undated"},
        )
    )
    assert [i.created for i in parse_import(jsonl, "m.jsonl")] == [
        "2024-05-02",
        "2025-01-03T08:30:00Z",  # a date-time is kept in UTC
        None,
    ]
    mem0 = json.dumps({"results": [{"memory": "Has a cat", "created_at": "2024-06-11"}]})
    assert parse_import(mem0, "mem0.json")[0].created == "2024-06-11"
    cases = [
        (
            '{"text": "ok"}\n{"text": "Likes tea", "created": "2024-13-45"}\n',
            "m.jsonl",
            "m.jsonl:2",
        ),
        (json.dumps({"results": [{"memory": "x", "created_at": 17}]}), "e.json", "e.json: item 1"),
        ("1. [2024-05-02]. Fine.\n2. [2024-02-30]. Not a day.\n", "chat.txt", "chat.txt:2"),
    ]
    for text, name, where in cases:
        with pytest.raises(ValidationError) as caught:
            parse_import(text, name)
        assert str(caught.value).startswith(f"{where}: created "), str(caught.value)
    # a date that lies ahead fails no import (issue 35): the item comes as of today, named
    (later,) = parse_import('{"text": "Later", "created": "2999-01-01"}\n', "f.jsonl")
    assert later.created is None and later.problem == (
        "f.jsonl:1: its date '2999-01-01' lies ahead; imported as of today"
    )
