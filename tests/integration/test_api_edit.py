"""Who edits decides what an edit does (docs/agents.md, Python API): `Memory.edit` is an
agent's, as `Memory.add` and `Memory.forget` are (`by="agent"`, the default). What a
program wrote and nobody confirmed changes at once; an entry the person stands behind
stays as it is and the agent's version waits beside it as a proposal, as extract's
(memcli.services.review.rewrite): `review reject` archives the proposal, `review confirm`
gives the person's entry its text. A request alone (a pin, an importance ≥ 0.9) stays a
request on the person's entry. `by="person"` and `memcli edit` apply everything at once,
as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memcli.core.errors import ValidationError
from memcli.services.memory import Memory
from tests.support.cli import as_json, invoke

LINES = {
    "hand": "- Lives in Munich <!-- id=mone -->",
    "person": "- Lives in Munich <!-- id=mone imp=0.95 by=person -->",
    "pinned": "- Lives in Munich <!-- id=mone by=agent pin=true -->",  # pinned by the person
    "agent": "- Lives in Munich <!-- id=mone by=agent -->",
    "extract": "- Lives in Munich <!-- id=mone by=extract src=chat-1 -->",
}


ALLERGY = "- Is allergic to penicillin <!-- id=mone imp=1 pin=true -->"


def workspace_with(root: Path, line: str, section: str = "Facts") -> str:
    memory = root / "memory.md"
    text = memory.read_text()
    if f"## {section}\n" not in text:
        text += f"\n## {section}\n"
    memory.write_text(text.replace(f"## {section}\n", f"## {section}\n{line}\n"))
    return line


def archived(root: Path) -> list[tuple[str, str]]:
    """archive.md's entries: (text, reason)."""
    return [(e.text, e.meta["reason"]) for e in Memory(root).store.load("archive.md").entries()]


def waiting(root: Path) -> list[dict[str, Any]]:
    return as_json(invoke(CliRunner(), root, "review", "--json"))["waiting"]


def persons(root: Path) -> tuple:
    """The person's entry mone: (text, type, metadata)."""
    entry = Memory(root).get("mone").entry
    return entry.text, entry.type, entry.meta


# whose entry, who edits -> the new text waits in review (else: in place at once), the
# written entry's by=, what else waits (besides `rewrite:mone`), importance and pin
CASES = [
    ("hand", {}, True, "agent", "", 0.5, False),  # the API's default: an agent's edit
    ("person", {}, True, "agent", "imp:0.95", 0.5, False),
    ("pinned", {}, True, "agent", "pin", 0.5, False),  # a program's entry, pinned
    ("agent", {}, False, "agent", "", 0.5, False),
    ("extract", {}, False, "agent", "", 0.5, False),
    ("hand", {"by": "agent"}, True, "agent", "", 0.5, False),
    ("person", {"by": "extract"}, True, "extract", "imp:0.95", 0.5, False),
    ("hand", {"by": "person"}, False, "person", "", 0.5, False),
    ("person", {"by": "person"}, False, "person", "", 0.95, False),
    ("pinned", {"by": "person"}, False, "person", "", 0.5, True),
    ("agent", {"by": "person"}, False, "person", "", 0.5, False),  # a person confirms it
]


@pytest.mark.slow  # the real model embeds the new text and the search finds it
@pytest.mark.parametrize(("kind", "how", "waits", "by", "held", "imp", "pinned"), CASES)
def test_the_apis_edit_is_an_agents_unless_it_says_person(
    empty_workspace: Path,
    exported,  # noqa: ANN001 - the bundled model, exported once
    kind: str,
    how: dict,
    waits: bool,
    by: str,
    held: str,
    imp: float,
    pinned: bool,
) -> None:
    root = empty_workspace
    workspace_with(root, LINES[kind])
    mem = Memory(root, embedder_factory=lambda: exported, notify=lambda m: None)
    assert mem.search("Munich", touch=False)[0].entry.id == "mone"
    before = persons(root)
    entry = mem.edit("mone", text="Lives in Leipzig", **how)
    assert (entry.text, entry.meta["by"]) == ("Lives in Leipzig", by)
    assert (entry.importance, entry.pinned) == (imp, pinned)
    rows = waiting(root)
    if waits:  # the person's entry as it was, the agent's version beside it
        assert entry.id != "mone" and persons(root) == before and archived(root) == []
        assert entry.meta["review"] == ",".join(x for x in (held, "rewrite:mone") if x)
        assert [(w["id"], w["was"]["text"]) for w in rows] == [(entry.id, "Lives in Munich")]
        hits = {h.entry.id: h.entry.text for h in mem.search("Munich Leipzig", touch=False)}
        assert hits == {"mone": "Lives in Munich", entry.id: "Lives in Leipzig"}
        return
    assert entry.id == "mone" and archived(root) == [] and rows == []
    assert "review" not in entry.meta
    hit = mem.search("Which city does the user live in?", touch=False)[0]
    assert (hit.entry.id, hit.entry.text) == ("mone", "Lives in Leipzig")


# an agent's edit of the person's entry (importance 0.7) without new text -> a rewrite
# (else: the entry stays the person's), what waits, importance and pin meanwhile
REQUESTS = [
    ({"pin": True}, False, "pin", 0.7, False),  # a request alone: it waits, nothing else
    ({"importance": 0.95}, False, "imp:0.95", 0.7, False),
    ({"importance": 0.9, "pin": True}, False, "imp:0.9,pin", 0.7, False),  # the boundary
    ({"importance": 0.7}, False, "", 0.7, False),  # what it has: nothing changes
    ({"text": "Lives in Munich"}, False, "", 0.7, False),  # its own text
    ({"importance": 0.89}, True, "", 0.89, False),  # just below: a change of the person's
    ({"importance": 0.3}, True, "", 0.3, False),
    ({"keywords": ["home"]}, True, "", 0.7, False),
    ({"confidence": 0.2}, True, "", 0.7, False),
    ({"source": "chat-9"}, True, "", 0.7, False),
    ({"importance": 0.95, "keywords": ["home"]}, True, "imp:0.95", 0.5, False),
]


@pytest.mark.parametrize(("how", "rewritten", "held", "imp", "pinned"), REQUESTS)
def test_an_agents_edit_of_the_persons_metadata(
    empty_workspace: Path, how: dict, rewritten: bool, held: str, imp: float, pinned: bool
) -> None:
    root = empty_workspace
    workspace_with(root, "- Lives in Munich <!-- id=mone imp=0.7 by=person -->")
    entry = Memory(root).edit("mone", **how)
    assert (entry.text, entry.importance, entry.pinned) == ("Lives in Munich", imp, pinned)
    assert archived(root) == []
    if rewritten:  # a proposal beside the person's entry, which keeps its 0.7
        assert entry.id != "mone" and entry.meta["by"] == "agent"
        assert entry.meta["review"] == ",".join(x for x in (held, "rewrite:mone") if x)
        assert Memory(root).get("mone").entry.importance == 0.7
    else:
        assert entry.meta["by"] == "person" and entry.meta.get("review", "") == held


def test_rejecting_an_agents_edit_archives_it_and_undo_takes_it_back(
    empty_workspace: Path,
) -> None:
    root = empty_workspace
    line = workspace_with(root, ALLERGY, "Corrections")
    before = (root / "memory.md").read_text()
    entry = Memory(root).edit("mone", text="Is allergic to amoxicillin", importance=0.4)
    assert (entry.type, entry.importance, entry.pinned) == ("fact", 0.4, False)
    proposed = (root / "memory.md").read_text()
    assert line in proposed  # the person's correction, as it was
    assert Memory(root).forget(entry.id).archived is True  # the agent's own proposal
    assert Memory(root).restore(entry.id).id == entry.id
    restored = (root / "memory.md").read_text()
    runner = CliRunner()
    (done,) = as_json(invoke(runner, root, "review", "reject", entry.id, "--json"))["rejected"]
    assert (done["text"], done["archived"]) == ("Is allergic to amoxicillin", True)
    memory = (root / "memory.md").read_text()
    assert line in memory and "amoxicillin" not in memory
    assert memory.index("## Corrections") < memory.index(line)
    assert archived(root) == [("Is allergic to amoxicillin", "rejected in review")]
    assert waiting(root) == []
    undone = as_json(invoke(runner, root, "undo", "--yes", "--json"))
    assert undone["op"] == "review reject"
    assert (root / "memory.md").read_text() == restored
    assert as_json(invoke(runner, root, "undo", "--yes", "--json"))["op"] == "restore"
    assert as_json(invoke(runner, root, "undo", "--yes", "--json"))["op"] == "forget"
    undone = as_json(invoke(runner, root, "undo", "--yes", "--json"))
    assert undone["op"] == "edit"  # the agent's edit, one operation
    assert (root / "memory.md").read_text() == before and archived(root) == []


@pytest.mark.parametrize(
    ("how", "pinned"),
    [({}, True), ({"pin": False}, False)],  # an unpin the agent asked for is accepted too
)
def test_confirming_an_agents_edit_makes_it_the_persons_with_its_standing(
    empty_workspace: Path, how: dict, pinned: bool
) -> None:
    root = empty_workspace
    workspace_with(root, ALLERGY, "Corrections")
    proposed = Memory(root).edit("mone", text="Is allergic to amoxicillin", **how)
    (row,) = waiting(root)
    assert row["was"]["text"] == "Is allergic to penicillin" and row["id"] == proposed.id
    invoke(CliRunner(), root, "review", "confirm", proposed.id)
    entry = Memory(root).get("mone").entry
    assert (entry.text, entry.type, entry.importance) == ("Is allergic to amoxicillin",
                                                          "correction", 1.0)
    assert entry.pinned is pinned and entry.provenance == "person"
    assert "review" not in entry.meta and waiting(root) == []
    assert [e.id for e in Memory(root).entries()] == ["mone"]
    assert archived(root) == [("Is allergic to penicillin", "superseded by mone")]


@pytest.mark.parametrize("kind", ["hand", "person", "pinned", "agent"])
@pytest.mark.parametrize("args", [["--text", "Lives in Leipzig"], ["-i", "0.95", "--pin"]])
def test_memcli_edit_is_the_persons_and_applies_at_once(
    empty_workspace: Path, kind: str, args: list[str]
) -> None:
    root = empty_workspace
    workspace_with(root, LINES[kind])
    done = as_json(invoke(CliRunner(), root, "edit", "mone", *args, "--json"))["entry"]
    entry = Memory(root).get("mone").entry
    assert done["id"] == "mone" and entry.meta["by"] == "person" and "review" not in entry.meta
    if args[0] == "--text":
        assert entry.text == "Lives in Leipzig"
    else:
        assert (entry.importance, entry.pinned) == (0.95, True)
    assert archived(root) == [] and waiting(root) == []


@pytest.mark.parametrize("by", ["bob", "", "import", None])
def test_an_edit_by_no_known_writer_is_refused_and_nothing_changes(
    empty_workspace: Path, by: str | None
) -> None:
    root = empty_workspace
    workspace_with(root, LINES["hand"])
    before = (root / "memory.md").read_text()
    with pytest.raises(ValidationError, match="is not a program's name"):
        Memory(root).edit("mone", text="Lives in Leipzig", by=by)  # type: ignore[arg-type]
    assert (root / "memory.md").read_text() == before and archived(root) == []


@pytest.mark.parametrize(
    ("by", "written"),
    [("bob", False), ("", False), ("reflect", False), ("Person", False), ("agent", True),
     ("person", True), ("extract", True), ("import", True)],
)
def test_add_takes_only_a_writer_memcli_knows(
    empty_workspace: Path, by: str, written: bool
) -> None:
    """Any other `by=` would read back as an entry written by hand (the person's)."""
    root = empty_workspace
    workspace_with(root, LINES["hand"])
    before = (root / "memory.md").read_text()
    if written:
        Memory(root).add("Keeps a spare key at the neighbours'", by=by)
        assert (root / "memory.md").read_text() != before
        return
    with pytest.raises(ValidationError, match="is not a writer memcli knows"):
        Memory(root).add("Keeps a spare key at the neighbours'", by=by)
    assert (root / "memory.md").read_text() == before
