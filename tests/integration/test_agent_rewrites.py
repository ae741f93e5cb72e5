"""An entry a program rewrites (extract's UPDATE, through `memcli extract`) carries the
program's provenance: what put the person's entry first (a correction, a pin, an
importance ≥ 0.9) waits in `memcli review`, and confirming there gives it back (DESIGN
§4). The old text goes to archive.md as superseded. An agent's repeat of the same text
through MCP `add_memory` changes no text, so the entry stays the person's:
tests/integration/test_poisoning.py and test_agent_forget.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from tests.support.cli import as_json, invoke

SAID = [{"role": "user", "content": "I moved, I live in Leipzig now, not Munich"}]
CREATED = "created=2026-06-01T10:00:00Z"


def workspace_with(root: Path, section: str, meta: str) -> None:
    memory = root / "memory.md"
    line = f"- Lives in Munich <!-- id=mmuc {meta}{CREATED} -->\n"
    text = memory.read_text()
    if f"## {section}\n" not in text:
        text += f"\n## {section}\n"
    memory.write_text(text.replace(f"## {section}\n", f"## {section}\n{line}"))


# section and metadata of "Lives in Munich" -> the rewritten entry's type, importance,
# pin and what waits for review (extract's statement asks for importance 0.75)
CASES = [
    ("Facts", "", "fact", 0.75, False, None),  # by hand, nothing elevated
    ("Facts", "imp=0.8 by=person ", "fact", 0.8, False, None),  # a person's add
    ("Facts", "imp=0.95 pin=true ", "fact", 0.75, False, "imp:0.95,pin"),
    ("Facts", "imp=0.9 ", "fact", 0.75, False, "imp:0.9"),  # the boundary: held
    ("Facts", "imp=0.89 ", "fact", 0.89, False, None),  # just below: kept
    ("Corrections", "", "fact", 0.75, False, "type:correction"),
    ("Facts", "by=agent review=imp:1 ", "fact", 0.75, False, "imp:1"),  # still waits
]


@pytest.mark.slow  # embeds with the real model
@pytest.mark.parametrize(("section", "meta", "kind", "importance", "pinned", "held"), CASES)
def test_extract_update_gives_the_entry_agent_provenance_and_holds_its_standing(
    empty_workspace: Path,
    tmp_path: Path,
    exported,  # noqa: ANN001 - the bundled model, exported once
    section: str,
    meta: str,
    kind: str,
    importance: float,
    pinned: bool,
    held: str | None,
) -> None:
    root = empty_workspace
    workspace_with(root, section, meta)
    said = tmp_path / "said.json"
    said.write_text(json.dumps(SAID))
    runner = CliRunner()
    (decision,) = as_json(invoke(runner, root, "extract", "--messages", str(said), "--json"))[
        "decisions"
    ]
    assert (decision["action"], decision["id"]) == ("UPDATE", "mmuc")
    entry = Memory(root).get("mmuc").entry
    assert entry.text == "Lives in Leipzig" and entry.meta["by"] == "extract"
    assert entry.provenance == "machine" and entry.meta["src"] == "said"
    assert (entry.type, entry.importance, entry.pinned) == (kind, importance, pinned)
    assert entry.meta.get("review") == held
    archived = [e for e in Memory(root).store.load("archive.md").entries() if e.text.endswith("Munich")]
    assert [e.meta["replaced_by"] for e in archived] == ["mmuc"]  # the old text, superseded
    waiting = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert [w["id"] for w in waiting] == (["mmuc"] if held else [])


@pytest.mark.slow
def test_confirming_the_rewrite_in_review_gives_its_standing_back(
    empty_workspace: Path, tmp_path: Path, exported  # noqa: ANN001
) -> None:
    root = empty_workspace
    workspace_with(root, "Corrections", "imp=0.95 pin=true ")
    said = tmp_path / "said.json"
    said.write_text(json.dumps(SAID))
    runner = CliRunner()
    as_json(invoke(runner, root, "extract", "--messages", str(said), "--json"))
    (row,) = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert row["text"] == "Lives in Leipzig"
    assert row["asked"] == "type correction, importance 0.95, pinned"
    memory = (root / "memory.md").read_text()
    assert memory.index("## Facts") < memory.index("Lives in Leipzig")  # meanwhile a fact
    (done,) = as_json(invoke(runner, root, "review", "confirm", "mmuc", "--json"))["confirmed"]
    entry = Memory(root).get("mmuc").entry
    assert (entry.type, entry.importance, entry.pinned) == ("correction", 0.95, True)
    assert entry.provenance == "person" and "review" not in entry.meta
    memory = (root / "memory.md").read_text()
    assert memory.index("## Corrections") < memory.index("Lives in Leipzig")
    assert done["id"] == "mmuc"


@pytest.mark.parametrize("said", ["lives in munich", "Lives in Munich."])
def test_an_update_to_the_same_text_is_a_repeat_and_the_entry_stays_the_persons(
    empty_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: str
) -> None:
    """An UPDATE whose text reads as the entry's own (the plan is stubbed: the offline
    rules call it a NOOP) is a repeat: no new text, so nothing changes hands."""
    from memcli.logic import extract

    def stub(found, existing, embed=None):  # noqa: ANN001, ANN202
        return [extract.Decision("UPDATE", c, "mmuc", "stub", said) for c in found]

    monkeypatch.setattr(extract, "plan", stub)
    workspace_with(empty_workspace, "Facts", "imp=0.95 pin=true ")
    transcript = tmp_path / "said.json"
    transcript.write_text(json.dumps(SAID))
    as_json(invoke(CliRunner(), empty_workspace, "extract", "--messages", str(transcript), "--json"))
    entry = Memory(empty_workspace).get("mmuc").entry
    assert entry.text == "Lives in Munich" and entry.provenance == "hand"
    assert (entry.importance, entry.pinned, entry.meta.get("review")) == (0.95, True, None)
    assert "src" not in entry.meta  # src= alone would make it a program's
    assert Memory(empty_workspace).store.load("archive.md").entries() == []
