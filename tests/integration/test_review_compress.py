"""compress leaves a program's rewrite of the person's entry alone until they review it
(memcli.logic.compress.plan): merged away as a duplicate, it took the person's entry out
of memory.md with nothing left in `memcli review` (the person's version only in
archive.md, "superseded"). An agent's own duplicate merges as before. Found by trying to
break what landed (helper "breaker")."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from tests.support.cli import as_json, invoke

MINE = "- Prefers pytest for testing Python code <!-- id=mtwo -->"
AGENTS = "The user prefers pytest when testing Python code"  # the same fact


def rewrite_of_the_persons_entry(api: Memory) -> str:
    return api.edit("mone", text=AGENTS).id  # "Lives in Munich", the person's, rewritten


def agents_own(api: Memory) -> str:
    return api.add(AGENTS).entry.id


@pytest.mark.slow  # compress judges duplicates with the real model
@pytest.mark.parametrize(
    ("write", "stays"),
    [(rewrite_of_the_persons_entry, True), (agents_own, False)],
    ids=["a-rewrite-waiting-for-review", "an-agents-own-duplicate"],
)
def test_compress_leaves_a_rewrite_that_waits_for_review(
    empty_workspace: Path,
    exported,  # noqa: ANN001 - the bundled model, exported once
    write,  # noqa: ANN001
    stays: bool,
) -> None:
    root = empty_workspace
    memory = root / "memory.md"
    hand = f"## Facts\n- Lives in Munich <!-- id=mone -->\n{MINE}\n"
    memory.write_text(memory.read_text().replace("## Facts\n", hand, 1))
    written = write(Memory(root))

    invoke(CliRunner(), root, "compress", "--yes")
    assert (f"id={written} " in memory.read_text()) is stays
    waiting = [w["id"] for w in as_json(invoke(CliRunner(), root, "review", "--json"))["waiting"]]
    assert waiting == ([written] if stays else [])
    if stays:  # the person's entry back, whatever compress did meanwhile
        invoke(CliRunner(), root, "review", "reject", "--all")
        assert "- Lives in Munich <!-- id=mone" in memory.read_text()
    else:  # merged into the person's entry, as before
        assert f"id={written} " in (root / "archive.md").read_text()
        assert 'reason="duplicate of mtwo"' in (root / "archive.md").read_text()
