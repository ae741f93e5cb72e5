"""Extract's credential screen applies to every decision that writes (issue 35: a
planted bug screening ADD but not UPDATE passed the whole suite; a correction carrying
a token then rewrote the person's entry with a redacted token). A table of actions, and
the whole path through Memory.extract."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.logic.extract import Decision, screen
from memcli.logic.statements import Candidate
from tests.support.fakes import fake_memory

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
#: (action, whether it writes): every writing decision carrying a credential is skipped
ACTIONS = [("ADD", True), ("UPDATE", True), ("NOOP", False), ("SKIP", False)]


@pytest.mark.parametrize(("action", "writes"), ACTIONS)
@pytest.mark.parametrize("where", ["candidate", "stored"])
def test_a_credential_stops_every_writing_decision(action: str, writes: bool, where: str) -> None:
    text = f"The deploy token is {TOKEN}"
    said = text if where == "candidate" else "The deploy token changed"
    candidate = Candidate(said, "fact", 0.8, said)
    stored = text if where == "stored" else None
    (decision,) = screen([Decision(action, candidate, "m1", "", stored)])
    assert TOKEN not in str(decision.to_dict())  # redacted from every report
    if writes:
        assert decision.action == "SKIP" and "looks like it holds" in decision.reason
    else:
        assert decision.action == action


def test_a_correction_carrying_a_token_leaves_the_persons_entry_as_it_was(
    empty_workspace: Path,
) -> None:
    mem = fake_memory(empty_workspace)
    entry = mem.add("The staging database is Postgres 16", by="person").entry
    before = (empty_workspace / "memory.md").read_bytes()
    talk = [{"role": "user", "content": f"No, the staging database is Postgres 17 at {TOKEN}."}]
    decisions = mem.extract(talk, source="chat-1")
    assert [d.action for d in decisions] == ["SKIP"], [d.to_dict() for d in decisions]
    assert (empty_workspace / "memory.md").read_bytes() == before
    assert mem.get(entry.id).entry.text == "The staging database is Postgres 16"
