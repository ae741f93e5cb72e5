"""Imports (issue 35, item 18): every format files its memories alike (`by=`, and a
correction held for review unless --as-mine), one future-dated ChatGPT memory is
reported and the rest imported, and a 5,000-character conversation title is printed
short. Through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.cli import invoke
from tests.support.fakes import fake_memory

TITLE_SHOWN = 80  # memcli.adapters.conversations.TITLE_SHOWN

#: the same two memories in each format: a fact, and a correction (held unless --as-mine)
FILES = {
    "notes.md": "## Facts\n- Has a cat named Miso\n\n## Corrections\n- Never deploy on Fridays\n",
    "mem0.json": json.dumps({"results": [
        {"memory": "Has a cat named Miso", "metadata": {"type": "fact"}},
        {"memory": "Never deploy on Fridays", "metadata": {"type": "correction"}},
    ]}),
    "export.jsonl": json.dumps({"text": "Has a cat named Miso", "type": "fact"}) + "\n"
    + json.dumps({"text": "Never deploy on Fridays", "type": "correction"}) + "\n",
}


def _filed(ws: Path) -> dict[str, tuple[str | None, str, str | None]]:
    return {
        e.text: (e.meta.get("by"), e.type, e.meta.get("review"))
        for e in fake_memory(ws).store.entries()
        if e.text in ("Has a cat named Miso", "Never deploy on Fridays")
    }


@pytest.mark.parametrize("mine", [False, True], ids=["import", "as-mine"])
def test_every_format_files_its_memories_alike(
    tmp_path: Path, empty_workspace: Path, mine: bool
) -> None:
    seen = {}
    for name, text in FILES.items():
        ws = tmp_path / name.replace(".", "-")
        ws.mkdir()
        (ws / "memory.md").write_bytes((empty_workspace / "memory.md").read_bytes())
        (tmp_path / name).write_text(text)
        args = ["import", str(tmp_path / name), *(["--as-mine"] if mine else [])]
        done = invoke(CliRunner(), ws, *args)
        assert done.exit_code == 0, done.output
        seen[name] = _filed(ws)
    assert seen["mem0.json"] == seen["notes.md"] == seen["export.jsonl"], seen
    cat, fridays = seen["notes.md"]["Has a cat named Miso"], seen["notes.md"]["Never deploy on Fridays"]
    assert cat[0] == "person"
    assert (fridays[1], fridays[2] is None) == (("correction", True) if mine else ("fact", False))


def test_one_future_dated_chatgpt_memory_is_reported_and_the_rest_imported(
    tmp_path: Path, empty_workspace: Path
) -> None:
    source = tmp_path / "chatgpt.txt"
    source.write_text(
        "1. [2024-05-02]. Prefers concise answers.\n"
        "2. [2999-01-01]. Lives in the future.\n"
        "3. [2024-06-11]. Has a cat named Miso.\n"
    )
    done = invoke(CliRunner(), empty_workspace, "import", str(source), "--format", "chatgpt")
    assert done.exit_code == 0, done.output
    assert "chatgpt.txt:2: its date '2999-01-01' lies ahead; imported as of today" in done.output
    created = {e.text: e.meta.get("created") for e in fake_memory(empty_workspace).store.entries()}
    assert created["Prefers concise answers."] == "2024-05-02"
    assert created["Has a cat named Miso."] == "2024-06-11"
    assert created["Lives in the future."].startswith(("20",)) and created[
        "Lives in the future."
    ] < "2999"


def test_a_long_conversation_title_is_printed_short(tmp_path: Path, empty_workspace: Path) -> None:
    title = "A very long title " * 278  # 5,004 characters
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps([{
        "title": title,
        "create_time": 1714636800,
        "mapping": {
            "a": {"id": "a", "message": None, "parent": None, "children": ["b"]},
            "b": {"id": "b", "parent": "a", "children": [], "message": {
                "author": {"role": "user"}, "create_time": 1714636800,
                "content": {"content_type": "text", "parts": ["I keep bees."]}}},
        },
    }]))
    done = invoke(CliRunner(), empty_workspace, "import", "--conversation", str(source))
    assert done.exit_code == 0, done.output
    assert max(len(line) for line in done.output.splitlines()) < TITLE_SHOWN + 140, done.output
    assert "A very long title" in done.output and "…" in done.output
