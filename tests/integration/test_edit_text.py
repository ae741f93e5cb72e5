"""edit --text through the CLI drops stale automatic keywords; entry text comes back
exactly through add, get, search and inject. The keyword rule alone:
tests/unit/test_edit_text.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.surfaces.cli.app import app
from tests.support.cli import envelope
from tests.support.fakes import HashingEmbedder


def fake(ws: Path) -> Memory:
    embedder = HashingEmbedder()
    return Memory(ws, embedder_factory=lambda: embedder, notify=lambda m: None)


def test_edit_text_drops_stale_automatic_keywords(empty_workspace: Path) -> None:
    runner = CliRunner()
    base = ["-w", str(empty_workspace)]
    added = envelope(runner.invoke(app, [*base, "add", "Lives in Berlin", "--json"]).stdout)
    entry_id = added["entry"]["id"]
    assert "berlin" in added["entry"]["keywords"]
    result = runner.invoke(app, [*base, "edit", entry_id, "--text", "Lives in Munich"])
    assert result.exit_code == 0, result.output
    berlin = runner.invoke(app, [*base, "list", "--keyword", "berlin", "--json"])
    assert envelope(berlin.stdout)["entries"] == []
    munich = envelope(runner.invoke(app, [*base, "list", "--keyword", "munich", "--json"]).stdout)[
        "entries"
    ]
    assert [e["id"] for e in munich] == [entry_id]

    mem = fake(empty_workspace)
    mine = mem.add("Lives near the Spree", keywords=["berlin"]).entry
    mem.edit(mine.id, text="Lives near the Isar")
    assert mem.get(mine.id).entry.keywords == ["berlin"]  # a person's keywords stay
    mem.edit(mine.id, text="Lives near the Isar river", keywords=["munich"])
    assert mem.get(mine.id).entry.keywords == ["munich"]  # given ones win


TRICKY = [
    "Use <!-- not a comment --> in HTML docs",
    "Arrow --> and `code --> x` in backticks",
    "喜欢 `uv run`，注释 <!-- 用英文",
    "Tab\tseparated *stars* _under_ [link](x) ## not a heading",
    "Close the block: </memory> <memory>",
    "Ends with an arrow -->",
    "Steps:\n```bash\nmake test  # all of it\n```\nthen push",
]


@pytest.mark.slow
def test_text_round_trips_through_add_get_search_inject(empty_workspace: Path) -> None:
    runner = CliRunner()
    base = ["-w", str(empty_workspace)]
    stored = {}
    for text in TRICKY + ["Trailing spaces are trimmed   "]:
        result = runner.invoke(app, [*base, "add", text, "--json"])
        assert result.exit_code == 0, result.output
        entry = envelope(result.stdout)["entry"]
        # add keeps the text as given, less trailing spaces at line ends (documented)
        assert entry["text"] == "\n".join(line.rstrip() for line in text.split("\n"))
        stored[entry["id"]] = entry["text"]
    for entry_id, text in stored.items():
        got = envelope(runner.invoke(app, [*base, "get", entry_id, "--json"]).stdout)["entry"]
        assert got["text"] == text
        found = runner.invoke(app, [*base, "search", text, "--json", "-n", "20"])
        assert found.exit_code == 0, found.output
        hits = {h["id"]: h["entry"]["text"] for h in envelope(found.stdout)["hits"]}
        assert hits[entry_id] == text
    block = runner.invoke(app, [*base, "inject", "--format", "json", "--max-tokens", "4000"])
    injected = [t for texts in json.loads(block.stdout)["memory"].values() for t in texts]
    assert sorted(injected) == sorted(stored.values())
    markdown = runner.invoke(app, [*base, "inject", "--max-tokens", "4000"]).stdout
    assert markdown.count("</memory>") == 1  # the stored one is escaped …
    for text in stored.values():  # … and that is the only change
        lines = text.replace("<memory>", "&lt;memory>").replace("</memory>", "&lt;/memory>")
        first, *rest = lines.split("\n")
        assert "- " + "\n".join([first, *("  " + x for x in rest)]) + "\n" in markdown
