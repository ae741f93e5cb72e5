"""Which entries extract may rewrite (issue 25): an UPDATE targets an entry of any type
but a reflection (memcli.logic.extract.plan leaves reflections out of what it compares:
they are memcli's own conclusions, rewritten by `reflect`, never by one sentence). For
every type, the three ways a statement updates an entry (a correction, a new value for
its subject, a new detail): the entry is updated, or for a reflection left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.core.models import KNOWN_TYPES, Entry
from memcli.logic.extract import plan
from memcli.logic.statements import candidates
from tests.support.fakes import HashingEmbedder

#: (existing entry's text, what the user says, the updated text)
UPDATES = [
    (
        "The staging database is Postgres 16",
        "No, the staging database is Postgres 17.",
        "The staging database is Postgres 17",
    ),  # a correction
    ("Lives in Berlin", "I moved to Lisbon last month.", "Lives in Lisbon"),  # a new value
    ("Lives in Berlin", "I live in Berlin, near Tempelhof.", "Lives in Berlin, near Tempelhof"),
]
TYPES = [*KNOWN_TYPES, "episode", "custom-kind"]


def _plan(entry_type: str, text: str, said: str) -> list[tuple[str, str | None, str | None]]:
    existing = [
        Entry("mtarget", text, entry_type, "memory.md", 1, {"id": "mtarget"}),
        Entry("mother", "Has a cat named Miso", "fact", "memory.md", 2, {"id": "mother"}),
    ]
    found = candidates([{"role": "user", "content": said}])
    assert found, said
    return [
        (d.action, d.entry_id, d.stored) for d in plan(found, existing, HashingEmbedder().embed)
    ]


def test_the_table_covers_every_known_type() -> None:
    assert set(KNOWN_TYPES) <= set(TYPES) and "reflection" in TYPES


@pytest.mark.parametrize(("text", "said", "stored"), UPDATES)
@pytest.mark.parametrize("entry_type", TYPES)
def test_updates_target_every_type_but_a_reflection(
    entry_type: str, text: str, said: str, stored: str
) -> None:
    decisions = _plan(entry_type, text, said)
    if entry_type == "reflection":
        assert all(action != "UPDATE" for action, _, _ in decisions), decisions
        assert [a for a, _, _ in decisions] == ["ADD"]  # said anew, the reflection intact
    else:
        assert decisions == [("UPDATE", "mtarget", stored)]


def test_a_reflection_with_the_same_text_is_a_noop_not_an_update() -> None:
    decisions = _plan("reflection", "Lives in Berlin", "I live in Berlin.")
    assert [(a, i) for a, i, _ in decisions] == [("NOOP", "mtarget")]


def test_extract_through_memory_leaves_a_reflection_byte_for_byte(tmp_path: Path) -> None:
    from memcli.services.memory import Memory
    from memcli.store.workspace import init_workspace

    init_workspace(tmp_path)
    memory = tmp_path / "memory.md"
    line = "- The staging database is Postgres 16 <!-- id=mrefl imp=0.8 -->\n"
    memory.write_text(f"# Memory\n\n## Reflections\n{line}", encoding="utf-8")
    mem = Memory(tmp_path, embedder_factory=HashingEmbedder, notify=lambda m: None)
    decisions = mem.extract(
        [{"role": "user", "content": "No, the staging database is Postgres 17."}]
    )
    assert [d.action for d in decisions] == ["ADD"]
    assert line in memory.read_text(encoding="utf-8")  # the reflection's line as it was
    assert mem.get("mrefl").entry.text == "The staging database is Postgres 16"
