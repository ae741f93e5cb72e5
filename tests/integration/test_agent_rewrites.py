"""A program's new text for an entry (extract's UPDATE, through `memcli extract`): the
person's entry stays as it is, live, and the program's text waits beside it as a
proposal (`review=rewrite:ID`, memcli.core.review) whose standing (a correction, a pin,
an importance ≥ 0.9) waits too (DESIGN §4). Confirming applies it to the person's entry
(their version archived as superseded); rejecting archives the proposal (`memcli undo`
takes either back). A program's own entry is rewritten in place. An agent's repeat of
the same text through MCP `add_memory` changes no text, so the entry stays the person's:
tests/integration/test_poisoning.py and test_agent_forget.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.core.models import Entry
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


def proposal(root: Path) -> Entry:
    """The one entry with the new text."""
    (found,) = [e for e in Memory(root).entries() if e.text == "Lives in Leipzig"]
    return found


# section and metadata of "Lives in Munich" -> the new text's type, importance, pin and
# what waits for review (extract's statement asks for importance 0.75), besides the
# rewrite of the person's entry (`rewrite:mmuc`: every row but an agent's entry, which is
# rewritten in place)
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
def test_extract_update_proposes_its_text_beside_the_persons_entry(
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
    line = workspace_with(root, section, meta)
    runner = CliRunner()
    decision = extract_leipzig(root, tmp_path, runner)
    assert decision["action"] == "UPDATE"
    entry = proposal(root)
    assert entry.meta["by"] == "extract" and entry.provenance == "machine"
    assert entry.meta["src"] == "said" and decision["id"] == "mmuc"  # what it updates
    assert (entry.type, entry.importance, entry.pinned) == (kind, importance, pinned)
    persons = "by=agent" not in meta
    rewrite = "rewrite:mmuc" if persons else ""
    assert entry.meta.get("review") == ",".join(x for x in (held, rewrite) if x)
    waiting = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert [w["id"] for w in waiting] == [entry.id]
    if persons:  # the person's line as it was, live; nothing archived yet
        assert line in (root / "memory.md").read_text() and entry.id != "mmuc"
        assert waiting[0]["was"] == {"id": "mmuc", "text": "Lives in Munich"}
        assert archived(root) == {}
    else:  # a program's own entry: rewritten in place, its old text superseded
        assert entry.id == "mmuc" and "was" not in waiting[0]
        assert archived(root) == {"Lives in Munich": ["superseded by mmuc"]}


@pytest.mark.slow  # embeds with the real model
def test_undo_takes_an_extract_back(
    empty_workspace: Path, tmp_path: Path, exported  # noqa: ANN001
) -> None:
    """Extract's writes are one operation of the history, as every command's: `memcli
    undo` after it takes its proposal away."""
    root = empty_workspace
    workspace_with(root, "Facts", "pin=true ")
    before = (root / "memory.md").read_text()
    runner = CliRunner()
    assert extract_leipzig(root, tmp_path, runner)["action"] == "UPDATE"
    assert "Leipzig" in (root / "memory.md").read_text()
    undone = as_json(invoke(runner, root, "undo", "--yes", "--json"))
    assert undone["op"] == "extract", undone
    assert (root / "memory.md").read_text() == before and archived(root) == {}


# what the person's entry was -> its section, untouched by a proposal and its reject
REJECTED = [
    ("Facts", "pin=true ", "## Facts"),
    ("Facts", "imp=0.95 ", "## Facts"),
    ("Corrections", "", "## Corrections"),
    ("Facts", "", "## Facts"),  # a plain fact
    ("Facts", "imp=0.3 by=person ", "## Facts"),  # a person's add
]


@pytest.mark.slow  # embeds with the real model
@pytest.mark.parametrize(("section", "meta", "heading"), REJECTED)
def test_rejecting_a_proposal_archives_it_and_the_persons_entry_never_moved(
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
    def persons() -> tuple:
        entry = Memory(root).get("mmuc").entry
        return entry.text, entry.type, entry.meta

    before = persons()
    assert extract_leipzig(root, tmp_path, runner)["action"] == "UPDATE"
    assert persons() == before  # the person's, live, meanwhile
    new_id = proposal(root).id
    (row,) = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert row["was"]["text"] == "Lives in Munich"
    proposed = (root / "memory.md").read_text()
    (done,) = as_json(invoke(runner, root, "review", "reject", new_id, "--json"))["rejected"]
    assert (done["id"], done["text"], done["archived"]) == (new_id, "Lives in Leipzig", True)
    memory = (root / "memory.md").read_text()
    assert line in memory and "Leipzig" not in memory  # the person's line, as it was
    assert memory.index(heading) < memory.index(line)
    assert persons() == before
    assert archived(root) == {"Lives in Leipzig": ["rejected in review"]}
    assert as_json(invoke(runner, root, "review", "--json")) == {"waiting": []}

    undone = as_json(invoke(runner, root, "undo", "--yes", "--json"))
    assert undone["op"] == "review reject", undone
    assert (root / "memory.md").read_text() == proposed  # the proposal, waiting again
    assert archived(root) == {}
    (row,) = as_json(invoke(runner, root, "review", "--json"))["waiting"]
    assert row["text"] == "Lives in Leipzig" and row["was"]["text"] == "Lives in Munich"


@pytest.mark.slow
def test_confirming_the_proposal_gives_the_persons_entry_its_text_and_standing(
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
    assert row["asked"] == (
        "its new text for your entry mmuc, type correction, importance 0.95, pinned"
    )
    memory = (root / "memory.md").read_text()
    assert memory.index("## Facts") < memory.index("Lives in Leipzig")  # meanwhile a fact
    (done,) = as_json(invoke(runner, root, "review", "confirm", row["id"], "--json"))[
        "confirmed"
    ]
    entry = Memory(root).get("mmuc").entry
    assert entry.text == "Lives in Leipzig" and done["id"] == "mmuc"
    assert (entry.type, entry.importance, entry.pinned) == ("correction", 0.95, True)
    assert entry.provenance == "person" and "review" not in entry.meta
    assert [e.id for e in Memory(root).entries() if "Leipzig" in e.text] == ["mmuc"]
    memory = (root / "memory.md").read_text()
    assert memory.index("## Corrections") < memory.index("Lives in Leipzig")
    assert archived(root) == {"Lives in Munich": ["superseded by mmuc"]}


@pytest.mark.parametrize("said", ["lives in munich", "Lives in Munich."])
def test_an_update_to_the_same_text_is_a_repeat_and_the_entry_stays_the_persons(
    empty_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: str
) -> None:
    """An UPDATE whose text reads as the entry's own (the plan is stubbed: the offline
    rules call it a NOOP) is a repeat: no new text, so nothing changes hands."""
    from memcli.logic import extract

    def stub(found, existing, embed=None):  # noqa: ANN001, ANN202
        # the statement only: "I moved" beside it is a drop the real plan answers NONE
        return [extract.Decision("UPDATE", c, "mmuc", "stub", said) for c in found if not c.drop]

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
