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
