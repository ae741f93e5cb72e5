"""An entry a program rewrites (extract's UPDATE, through `memcli extract`) carries the
program's provenance: what put the person's entry first (a correction, a pin, an
importance ≥ 0.9) waits in `memcli review`, and confirming there gives it back (DESIGN
§4). The old text goes to archive.md as superseded; when it was the person's, the rewrite
itself waits too, and rejecting it puts the person's entry back as it was (`memcli undo`
takes the reject back). An agent's repeat of the same text through MCP `add_memory`
changes no text, so the entry stays the person's: tests/integration/test_poisoning.py and
test_agent_forget.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from tests.support.cli import as_json, invoke

SAID = [{"role": "user", "content": "I moved, I live in Leipzig now, not Munich"}]
CREATED = "created=2026-06-01T10:00:00Z"


def workspace_with(root: Path, section: str, meta: str) -> str:
    """memory.md with "Lives in Munich" in `section`; returns its line."""
    memory = root / "memory.md"
    line = f"- Lives in Munich <!-- id=mmuc {meta}{CREATED} -->\n"
    text = memory.read_text()
    if f"## {section}\n" not in text:
        text += f"\n## {section}\n"
    memory.write_text(text.replace(f"## {section}\n", f"## {section}\n{line}"))
    return line


def extract_leipzig(root: Path, tmp_path: Path, runner: CliRunner) -> dict:
    said = tmp_path / "said.json"
    said.write_text(json.dumps(SAID))
    (decision,) = as_json(invoke(runner, root, "extract", "--messages", str(said), "--json"))[
        "decisions"
    ]
    return decision


def archived(root: Path) -> dict[str, list[str]]:
    """archive.md's entries: text -> their reasons."""
    found: dict[str, list[str]] = {}
    for entry in Memory(root).store.load("archive.md").entries():
        found.setdefault(entry.text, []).append(entry.meta["reason"])
    return found


# section and metadata of "Lives in Munich" -> the rewritten entry's type, importance,
# pin and what waits for review (extract's statement asks for importance 0.75), besides
# the rewrite of the person's text (`rewrite:` the archived copy: every row but an
# agent's entry)
CASES = [
    ("Facts", "", "fact", 0.75, False, ""),  # by hand, nothing elevated
    ("Facts", "imp=0.8 by=person ", "fact", 0.8, False, ""),  # a person's add
    ("Facts", "imp=0.95 pin=true ", "fact", 0.75, False, "imp:0.95,pin"),
    ("Facts", "imp=0.9 ", "fact", 0.75, False, "imp:0.9"),  # the boundary: held
    ("Facts", "imp=0.89 ", "fact", 0.89, False, ""),  # just below: kept
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
    held: str,
) -> None:
    root = empty_workspace
    workspace_with(root, section, meta)
    runner = CliRunner()
    decision = extract_leipzig(root, tmp_path, runner)
    assert (decision["action"], decision["id"]) == ("UPDATE", "mmuc")
    entry = Memory(root).get("mmuc").entry
    assert entry.text == "Lives in Leipzig" and entry.meta["by"] == "extract"
    assert entry.provenance == "machine" and entry.meta["src"] == "said"
    assert (entry.type, entry.importance, entry.pinned) == (kind, importance, pinned)
    old = [e for e in Memory(root).store.load("archive.md").entries() if e.text.endswith("Munich")]
    assert [e.meta["replaced_by"] for e in old] == ["mmuc"]  # the old text, superseded
    persons = "by=agent" not in meta
    rewrite = f"rewrite:{old[0].id}" if persons else ""
    assert entry.meta.get("review") == ",".join(x for x in (held, rewrite) if x)
    waiting = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert [w["id"] for w in waiting] == ["mmuc"]
    assert ("was" in waiting[0]) is persons


@pytest.mark.slow  # embeds with the real model
def test_undo_takes_an_extract_back(
    empty_workspace: Path, tmp_path: Path, exported  # noqa: ANN001
) -> None:
    """Extract's writes are one operation of the history, as every command's: `memcli
    undo` after it gives the person's entry back and takes its archived copy away."""
    root = empty_workspace
    workspace_with(root, "Facts", "pin=true ")
    before = (root / "memory.md").read_text()
    runner = CliRunner()
    assert extract_leipzig(root, tmp_path, runner)["action"] == "UPDATE"
    assert "Leipzig" in (root / "memory.md").read_text() and archived(root)
    undone = as_json(invoke(runner, root, "undo", "--yes", "--json"))
    assert undone["op"] == "extract", undone
    assert (root / "memory.md").read_text() == before and archived(root) == {}


# what the person's entry was -> its section after a reject
REJECTED = [
    ("Facts", "pin=true ", "## Facts"),
    ("Facts", "imp=0.95 ", "## Facts"),
    ("Corrections", "", "## Corrections"),
    ("Facts", "", "## Facts"),  # a plain fact
    ("Facts", "imp=0.3 by=person ", "## Facts"),  # a person's add
]


@pytest.mark.slow  # embeds with the real model
@pytest.mark.parametrize(("section", "meta", "heading"), REJECTED)
def test_rejecting_a_rewrite_gives_the_person_their_entry_back_and_undo_takes_it_back(
    empty_workspace: Path,
    tmp_path: Path,
    exported,  # noqa: ANN001 - the bundled model, exported once
    section: str,
    meta: str,
    heading: str,
) -> None:
    root = empty_workspace
    line = workspace_with(root, section, meta)
    runner = CliRunner()
    before = Memory(root).get("mmuc").entry
    assert extract_leipzig(root, tmp_path, runner)["action"] == "UPDATE"
    # the program's text, but the person's entry until reviewed: an agent's forget waits
    assert Memory(root).forget("mmuc").archived is False
    (row,) = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert row["was"]["text"] == "Lives in Munich" and row["asked"].endswith("forgetting")
    rewritten = (root / "memory.md").read_text()
    (done,) = as_json(invoke(runner, root, "review", "reject", "mmuc", "--json"))["rejected"]
    assert (done["id"], done["text"], done["restored"], done["archived"]) == (
        "mmuc", "Lives in Munich", True, False
    )
    memory = (root / "memory.md").read_text()
    assert line in memory and "Leipzig" not in memory  # the person's line, as it was
    assert memory.index(heading) < memory.index(line)
    entry = Memory(root).get("mmuc").entry
    assert (entry.text, entry.type, entry.importance, entry.pinned, entry.provenance) == (
        before.text, before.type, before.importance, before.pinned, before.provenance
    )
    assert archived(root) == {"Lives in Leipzig": ["rejected in review"]}
    assert as_json(invoke(runner, root, "review", "--json")) == {"waiting": []}

    undone = as_json(invoke(runner, root, "undo", "--yes", "--json"))
    assert undone["op"] == "review reject", undone
    assert (root / "memory.md").read_text() == rewritten  # the rewrite, waiting again
    assert archived(root) == {"Lives in Munich": ["superseded by mmuc"]}
    (row,) = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert row["text"] == "Lives in Leipzig" and row["was"]["text"] == "Lives in Munich"


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
    assert row["asked"] == "its new text for your entry, type correction, importance 0.95, pinned"
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
