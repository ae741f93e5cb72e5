"""A person's edit that lands between a program reading an entry and writing it back
stays (memcli.services.review._rewrite): an agent's forget, `memcli review confirm` and
`reject` stop with "changed or disappeared" instead of writing the entry as they read it
over the person's words; an agent's edit of the person's entry writes nothing of theirs
(its version waits beside it). Found by trying to
break what landed (helper "breaker")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memcli.core.errors import MemcliError
from memcli.services import review
from memcli.services.memory import Memory


def listed(mem: Memory) -> str:
    """The fingerprint `memcli review` shows for mone (read as it is before the edit)."""
    (shown,) = review.waiting(mem.runtime)
    return shown.fingerprint


BEFORE, AFTER = "Lives in Munich", "Lives in Munich, Schwabing, by the Englischer Garten"

# the entry as the program finds it, what it does, the file it sits in
CASES: list[tuple[str, Callable[[Memory], object], str]] = [
    ("<!-- id=mone -->", lambda m: m.forget("mone"), "memory.md"),  # a request to forget
    ("<!-- id=mone -->", lambda m: m.edit("mone", text="Lives in Berlin"), "memory.md"),
    (
        "<!-- id=mone by=agent review=imp:1 -->",
        lambda m: review.confirm(m.runtime, [f"mone@{listed(m)}"]),
        "memory.md",
    ),
    ("<!-- id=mone review=pin -->", lambda m: review.reject(m.runtime, ["mone"]), "memory.md"),
    (  # confirm moves a correction to its own section: the person's edit stays too
        "<!-- id=mone by=agent review=type:correction -->",
        lambda m: review.confirm(m.runtime, [f"mone@{listed(m)}"]),
        "learnings.md",
    ),
]


@pytest.mark.parametrize(
    ("meta", "act", "file"),
    CASES,
    ids=["agent-forget", "agent-edit", "confirm", "reject", "confirm-moves-it"],
)
def test_a_persons_edit_after_the_read_is_never_written_over(
    empty_workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    meta: str,
    act: Callable[[Memory], object],
    file: str,
) -> None:
    root = empty_workspace
    memory_md = root / "memory.md"
    memory_md.write_text(
        memory_md.read_text().replace("## Facts\n", f"## Facts\n- {BEFORE} {meta}\n", 1)
    )
    read = review.find

    def find_then_the_person_edits(rt, entry_id):  # noqa: ANN001, ANN202 - find's own
        found = read(rt, entry_id)
        memory_md.write_text(memory_md.read_text().replace(BEFORE, AFTER))
        return found

    monkeypatch.setattr(review, "find", find_then_the_person_edits)
    if act is CASES[1][1]:
        act(Memory(root))  # the agent's edit writes nothing of the person's: a proposal
        assert "- Lives in Berlin <!-- " in memory_md.read_text()
        assert "review=rewrite:mone" in memory_md.read_text()
    else:
        with pytest.raises(MemcliError, match="changed or disappeared"):
            act(Memory(root))
    assert f"- {AFTER} " in memory_md.read_text()
    if file != "memory.md":
        assert "mone" not in (root / file).read_text()
