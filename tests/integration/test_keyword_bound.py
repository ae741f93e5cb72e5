"""An entry's keywords together are one metadata value, bounded by the same 1,024
characters as every other (issue 35, item 11: one agent add wrote a 196 KB `kw=` line,
4 MB with 20,000 keywords). A caller's list above it is refused, naming it, with nothing
written; a writer that merges keywords (a repeated add, compress, a model's answer)
keeps the keywords that fit. Every writer, as a table; the serializer as a property."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from memcli.core.errors import ValidationError
from memcli.core.validate import MAX_META_CHARS, bound_keywords, check_keywords
from memcli.store.metadata import format_meta, parse_meta
from tests.support.cli import invoke
from tests.support.fakes import fake_memory

MANY = [f"keyword{i:05d}" for i in range(200)]  # 2,599 characters together
#: (how many keywords, refused): a list whose stored form passes the bound is refused
LISTS = [(1, False), (77, False), (78, False), (79, True), (200, True), (20_000, True)]


@pytest.mark.parametrize(("count", "refused"), LISTS)
def test_a_callers_keywords_together_are_bounded(count: int, refused: bool) -> None:
    words = [f"kw{i:010d}" for i in range(count)]  # 12 characters each, 13 with a comma
    assert (len(",".join(words)) > MAX_META_CHARS) == refused
    if refused:
        with pytest.raises(ValidationError, match=r"--keywords: .* above the 1,024"):
            check_keywords("--keywords", words)
    else:
        check_keywords("--keywords", words)


def _kw_line(root: Path) -> str:
    lines = [ln for ln in (root / "memory.md").read_text().splitlines() if "kw=" in ln]
    return max(lines, key=len, default="")


#: each writer a caller reaches, with MANY keywords
WRITERS = {
    "api add": lambda mem, _: mem.add("Uses ruff", keywords=MANY),
    "api edit": lambda mem, _: mem.edit("m8f3a2c1", keywords=MANY),
    "cli add": lambda _, ws: _cli(ws, "add", "Uses ruff", "-k", ",".join(MANY)),
    "cli edit": lambda _, ws: _cli(ws, "edit", "m8f3a2c1", "-k", ",".join(MANY)),
}


def _cli(ws: Path, *args: str) -> None:
    done = invoke(CliRunner(), ws, *args)
    if done.exit_code:
        raise ValidationError(done.output)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_refuses_too_many_keywords_and_writes_nothing(
    workspace: Path, writer: str
) -> None:
    before = (workspace / "memory.md").read_bytes()
    with pytest.raises(ValidationError, match="above the 1,024"):
        WRITERS[writer](fake_memory(workspace), workspace)
    assert (workspace / "memory.md").read_bytes() == before


def test_a_repeated_add_merges_keywords_only_up_to_the_bound(workspace: Path) -> None:
    mem = fake_memory(workspace)
    for start in range(0, 200, 50):  # each call within the bound, together far above
        mem.add("Uses ruff for linting", keywords=MANY[start : start + 50])
    (entry,) = [e for e in mem.store.entries() if e.text == "Uses ruff for linting"]
    assert 0 < len(entry.meta["kw"]) <= MAX_META_CHARS
    assert entry.keywords == MANY[: len(entry.keywords)]  # the first ones, in order
    assert len(_kw_line(workspace)) < MAX_META_CHARS + 200


@given(st.lists(st.text("abcdefghij ", min_size=1, max_size=300), max_size=40))
def test_a_stored_kw_is_the_keywords_that_fit(words: list[str]) -> None:
    value = ",".join(w.strip() or "x" for w in words)
    kept = bound_keywords(value)
    assert len(kept) <= MAX_META_CHARS
    assert value.startswith(kept) and (kept == value or value[len(kept)] == ",")
    parsed = parse_meta(format_meta({"id": "m1", "kw": value}))
    assert parsed.get("kw", "") == kept
