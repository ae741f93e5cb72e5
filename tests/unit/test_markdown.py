"""Parsing and serializing Markdown: byte-exact round trips and local edits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcli.store.markdown import (
    EntryBlock,
    Parsed,
    derived_id,
    format_meta,
    parse,
    parse_file,
    parse_meta,
)
from memcli.store.reparse import reparse

SAMPLE = """---
memcli: 1
---
# Memory

## Preferences
- Prefers pytest <!-- id=m8f3a2c1 imp=0.8 conf=0.9 created=2026-11-20T10:02:00Z kw=python,testing -->
- Likes dark editor themes

## Facts
- Works at TechCorp <!-- id=m1b2c3d4 created=2026-10-02 custom=kept -->
  Joined in 2024 as a backend engineer.

  ```py
  x = 1
  ```
- 喜欢喝茶 🍵
```
- inside a fence, not an entry
```
## Hobbies
- plain text with a <!-- TODO note --> comment
"""


def test_types_ids_and_text() -> None:
    doc = parse(SAMPLE, "memory.md")
    entries = {e.text.split("\n")[0]: e for e in doc.entries()}
    assert [e.type for e in doc.entries()] == [
        "preference",
        "preference",
        "fact",
        "fact",
        "hobbies",
    ]
    pytest_entry = entries["Prefers pytest"]
    assert pytest_entry.id == "m8f3a2c1" and pytest_entry.id_explicit
    assert pytest_entry.importance == 0.8 and pytest_entry.keywords == ["python", "testing"]
    techcorp = entries["Works at TechCorp"]
    assert techcorp.text == (
        "Works at TechCorp\nJoined in 2024 as a backend engineer.\n\n```py\nx = 1\n```"
    )
    assert techcorp.meta["custom"] == "kept"
    themes = entries["Likes dark editor themes"]
    assert not themes.id_explicit and themes.id == derived_id("m", "Likes dark editor themes")
    assert themes.importance == 0.5 and themes.confidence == 1.0
    assert "plain text with a <!-- TODO note --> comment" in entries
    assert not any("inside a fence" in e.text for e in doc.entries())
    assert doc.serialize() == SAMPLE


def test_items_before_first_section_default_by_file() -> None:
    assert parse("- a\n", "memory.md").entries()[0].type == "fact"
    assert parse("- a\n", "learnings.md").entries()[0].type == "lesson"
    assert parse("- a\n", "episodes/2026-11-01.md").entries()[0].type == "episode"


def test_derived_ids_distinct_for_repeated_text() -> None:
    doc = parse("- same\n- same\n", "memory.md")
    first, second = doc.entries()
    assert first.id != second.id
    assert parse("- same\n- same\n", "memory.md").entries()[1].id == second.id


@pytest.mark.parametrize(
    "line, problem",
    [
        ("- x <!-- id=ok junk -->", "cannot read 'junk'"),
        ("- x <!-- created=yesterday -->", "not a date"),
        ("- x <!-- imp=0.1 imp=0.2 -->", "appears twice"),
        ("- x <!-- id=a/b -->", "not a valid id"),
    ],
)
def test_malformed_metadata_is_reported_with_line(line: str, problem: str) -> None:
    doc = parse(f"# T\n\n{line}\n- fine\n", "memory.md")
    assert len(doc.problems) == 1
    assert doc.problems[0].line == 3 and problem in doc.problems[0].message
    assert doc.problems[0].message.startswith("memory.md:3:")
    assert [e.text for e in doc.entries()] == ["fine"]


@pytest.mark.parametrize(
    "line, problem",
    [
        ("- x <!-- imp=abc -->", "importance must be a number"),
        ("- x <!-- imp=high kw=a -->", "importance must be a number"),
        ("- x <!-- imp=1.5 -->", "between 0 and 1"),
        ("- x <!-- conf=-1 -->", "between 0 and 1"),
    ],
)
def test_a_bad_importance_or_confidence_is_read_as_the_default(line: str, problem: str) -> None:
    """The entry is read (importance/confidence at their defaults), a warning names the
    line and does not stop writes, and the file serializes byte for byte."""
    text = f"# T\n\n{line}\n- fine\n"
    doc = parse(text, "memory.md")
    [warning] = doc.problems
    assert warning.line == 3 and problem in warning.message
    assert not warning.skipped and not warning.blocks_writes
    first, _ = doc.entries()
    assert first.text == "x" and first.importance == 0.5 and first.confidence == 1.0
    assert doc.serialize() == text


def test_meta_round_trip_with_quoting() -> None:
    meta = {"id": "m1", "src": "a b", "note": 'say "hi" -->', "kw": "x,y"}
    assert parse_meta(format_meta(meta)) == meta


def test_replace_keeps_continuation_and_line_ending_style() -> None:
    text = "## Facts\r\n- one\r\n  more\r\n- two"
    doc = parse(text, "memory.md")
    one = doc.entries()[0]
    doc.replace_entry(one.id, replace(one, meta={"id": one.id, "imp": "0.9"}))
    assert doc.serialize() == f"## Facts\r\n- one <!-- id={one.id} imp=0.9 -->\r\n  more\r\n- two"
    two = doc.entries()[1]
    doc.replace_entry(two.id, replace(two, text="two\nlines"))
    assert doc.serialize().endswith("- two\r\n  lines")  # still no final newline


def test_insert_creates_section_and_remove_restores_text() -> None:
    text = "# Memory\n\n## Facts\n- a\n"
    doc = parse(text, "memory.md")
    entry = replace(doc.entries()[0], id="m1", text="b", type="skill", meta={"id": "m1"})
    doc.insert_entry(entry)
    assert doc.serialize() == "# Memory\n\n## Facts\n- a\n\n## Skills\n- b <!-- id=m1 -->\n"
    reparsed = parse(doc.serialize(), "memory.md")
    assert [(e.type, e.text) for e in reparsed.entries()] == [("fact", "a"), ("skill", "b")]


# ----------------------------------------------------------------------------- properties

_words = st.text(
    alphabet=st.sampled_from(
        list("abcxyz ABC09_.,:;!?()[]") + ["喜", "欢", "测", "🍵", "é", "\t", "<", ">", "-", "="]
    ),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() != "")
_meta = st.builds(
    lambda i, imp, kw: f" <!-- id=m{i} imp={imp} kw={kw} -->",
    st.integers(0, 10_000),
    st.sampled_from(["0", "0.5", "1", "0.25"]),
    st.sampled_from(["a", "a,b", "测试,x"]),
)
_line = st.one_of(
    st.builds(lambda w: f"- {w}", _words),
    st.builds(lambda w, m: f"- {w}{m}", _words, _meta),
    st.builds(lambda w: f"  {w}", _words),
    st.builds(lambda w: f"\t{w}", _words),
    st.builds(lambda w: f"## {w}", _words),
    st.builds(lambda w: f"# {w}", _words),
    st.builds(lambda w: f"* {w}", _words),
    st.just(""),
    st.just("```"),
    st.just("~~~~"),
    st.just("---"),
    st.just("- <!-- imp=abc -->"),
    st.just("<!-- a comment -->"),
    _words,
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_line, max_size=40))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    mixed = draw(st.booleans())
    text = ""
    for line in lines:
        text += line + (draw(st.sampled_from(["\n", "\r\n"])) if mixed else eol)
    if draw(st.booleans()) and text:
        text = text.rstrip("\r\n")
    if draw(st.booleans()):
        text = "---\nmemcli: 1\n---\n" + text
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_round_trip_is_byte_exact(text: str) -> None:
    assert parse(text, "memory.md").serialize() == text


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_editing_one_entry_changes_only_its_lines(text: str, data: st.DataObject) -> None:
    doc = parse(text, "memory.md")
    blocks = list(doc.entry_blocks())
    if not blocks:
        return
    block = data.draw(st.sampled_from(blocks))
    start, count = block.start_line, len(block.lines)
    entry = block.entry
    new_text = data.draw(st.one_of(st.none(), _words.map(str.strip).filter(bool)))
    meta = dict(entry.meta, id=entry.id, imp="0.75")
    doc.replace_block(block, replace(entry, meta=meta, text=new_text or entry.text))
    after_text = doc.serialize()
    new_count = len(block.lines)
    body = after_text[len(doc.bom) :]
    old_lines = text[len(doc.bom) :].split("\n")
    new_lines = body.split("\n")
    # Lines before the entry are identical, and so are the lines after it.
    assert new_lines[: start - 1] == old_lines[: start - 1]
    tail_old = old_lines[start - 1 + count :]
    tail_new = new_lines[start - 1 + new_count :]
    assert tail_new == tail_old
    reparsed = parse(after_text, "memory.md")
    changed = [e for e in reparsed.entries() if e.line == start]
    assert changed and changed[0].importance == 0.75 and changed[0].id == entry.id


FRONT = "---\nmemcli: 1\ntype: lesson\ntitle: My notes\n---\n- Check the backups first\n\n## Facts\n- Lives in Lyon\n"


def test_front_matter_sets_the_default_type_and_is_kept_byte_for_byte() -> None:
    doc = parse(FRONT, "memory.md")
    assert not doc.problems
    assert doc.front == {"memcli": 1, "type": "lesson", "title": "My notes"}
    assert [(e.text, e.type) for e in doc.entries()] == [
        ("Check the backups first", "lesson"),
        ("Lives in Lyon", "fact"),
    ]
    assert doc.serialize() == FRONT


@pytest.mark.parametrize(
    ("front", "line", "problem"),
    [
        ("---\ntype: [unclosed\n---\n", 2, "front matter"),
        ("---\n- just\n- a list\n---\n", 1, "key: value"),
        ("---\nmemcli: 2\n---\n", 1, "memcli format 2"),
        ("---\nmemcli: one\n---\n", 1, "not a format version"),
        ("---\ntype: 3\n---\n", 1, "not a type name"),
        ("---\nnote: " + "x" * 20_000 + "\n---\n", 1, "larger than 16 KB"),
    ],
)
def test_front_matter_that_cannot_be_read_stops_writes_not_reads(
    front: str, line: int, problem: str
) -> None:
    doc = parse(front + "- An entry\n", "memory.md")
    assert [e.text for e in doc.entries()] == ["An entry"]  # still read
    assert len(doc.problems) == 1 and not doc.problems[0].skipped
    assert doc.problems[0].line == line and problem in str(doc.problems[0])
    assert doc.serialize() == front + "- An entry\n"


def test_a_write_refuses_a_file_from_a_newer_memcli(tmp_path: Path) -> None:
    from memcli.core.errors import ParseError
    from memcli.services.memory import Memory

    (tmp_path / "memory.md").write_text("---\nmemcli: 9\n---\n- Old entry\n", encoding="utf-8")
    mem = Memory(tmp_path)
    assert [e.text for e in mem.entries()] == ["Old entry"]
    with pytest.raises(ParseError, match="memcli format 9"):
        mem.add("New entry")
    assert (tmp_path / "memory.md").read_text(
        encoding="utf-8"
    ) == "---\nmemcli: 9\n---\n- Old entry\n"


# ----------------------------------------------------------------------------- reparse

_few = st.sampled_from(["a", "b", "a b"])  # repeated texts: derived ids numbered by occurrence
_edit_line = st.one_of(
    _line,
    st.builds(lambda w: f"- {w}", _few),
    st.builds(lambda w: f"  {w}", _few),
    st.just("## Skills"),
    st.just("## Facts"),
    st.just("- a <!-- id=mdup -->"),
    st.just("- b <!-- id=mdup -->"),
    st.just("---"),
    st.just("type: lesson"),
)


@st.composite
def edits(draw: st.DrawFn, text: str) -> str:
    """`text` after a few line-level edits: replace, insert, delete, move or duplicate
    lines, change characters inside a line, change a line ending."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        n = len(lines)
        at = draw(st.integers(0, n))
        kind = draw(st.sampled_from(["replace", "insert", "delete", "move", "dup", "chars", "eol"]))
        if kind == "insert" or not n:
            lines[at:at] = draw(st.lists(_edit_line, min_size=1, max_size=3))
            continue
        at = min(at, n - 1)
        if kind == "replace":
            lines[at] = draw(_edit_line)
        elif kind == "delete":
            del lines[at : at + draw(st.integers(1, 3))]
        elif kind == "move":
            moved = lines.pop(at)
            lines.insert(draw(st.integers(0, len(lines))), moved)
        elif kind == "dup":
            lines.insert(draw(st.integers(0, n)), lines[at])
        elif kind == "chars":
            line = lines[at]
            cut = draw(st.integers(0, len(line)))
            end = draw(st.integers(cut, len(line)))
            lines[at] = (
                line[:cut]
                + draw(st.sampled_from(["", " ", "x", "-", "<!-- id=q -->"]))
                + line[end:]
            )
        else:
            lines[at] = lines[at] + "\r" if not lines[at].endswith("\r") else lines[at][:-1]
    return "\n".join(lines)


def _same_parse(got: Parsed, want: Parsed) -> None:
    """Everything a reader of a parse sees is the same."""
    assert got.doc.serialize() == want.doc.serialize() == want.text
    shape = lambda p: [  # noqa: E731
        (type(b).__name__, b.lines, b.start_line, getattr(b, "entry", None))
        + ((b.marker, b.section) if isinstance(b, EntryBlock) else ())
        for b in p.doc.blocks
    ]
    assert shape(got) == shape(want)
    assert got.entries == want.entries == got.doc.entries()
    problems = lambda p: [(x.line, x.message, x.hint, x.skipped) for x in p.doc.problems]  # noqa: E731
    assert problems(got) == problems(want)
    assert (got.doc.front, got.doc.bom, got.doc.eol) == (want.doc.front, want.doc.bom, want.doc.eol)
    assert (got.lines, got.default, got.front_end, got.eols) == (
        want.lines,
        want.default,
        want.front_end,
        want.eols,
    )
    assert got.id_counts() == want.id_counts()
    assert got.repeated_ids() == want.repeated_ids()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_reparse_after_edits_equals_a_full_parse(text: str, data: st.DataObject) -> None:
    """Edits that move lines, split or merge items, change sections, front matter, ids
    and line endings: the incremental reparse gives what a parse from scratch gives,
    also after a chain of edits (each reparse starting from the previous one)."""
    prev = parse_file(text, "memory.md")
    if data.draw(st.booleans()):
        prev.id_counts()  # counts carried from parse to parse from here on
    for _ in range(data.draw(st.integers(1, 3))):
        text = data.draw(edits(text))
        got = reparse(prev, text)
        _same_parse(got, parse_file(text, "memory.md"))
        prev = got


REPARSE_CASES = [
    # (before, after): the seams reparse has to get right
    ("- a\n- b\n- c\n", "- a\n  b\n- c\n"),  # an item becomes the previous one's continuation
    ("- a\n  b\n- c\n", "- a\n- b\n- c\n"),  # ...and back: one item splits in two
    ("- a\n\n  x\n- b\n", "- a\n\n- x\n- b\n"),
    ("- a\n- a\n- a\n", "- a\n- a\n"),  # derived ids of repeated texts renumber
    ("- a\n- b\n- a\n- a\n", "- b\n- a\n- a\n"),
    ("- x\n- a\n- a\n", "- a\n- x\n- a\n- a\n"),
    ("## Facts\n- a\n## Skills\n- b\n", "## Facts\n- a\n## Facts\n- b\n"),  # section header
    ("- a\n```\n- b\n```\n- c\n", "- a\n```\n- b\n- c\n"),  # an unclosed fence swallows the rest
    ("---\ntype: lesson\n---\n- a\n# T\n- b\n", "---\ntype: skill\n---\n- a\n# T\n- b\n"),
    ("---\nmemcli: 1\n---\n- a\n---\n- b\n", "---\nmemcli: 1\n--\n- a\n---\n- b\n"),
    ("- a <!-- id=m1 -->\n- b <!-- id=m2 -->\n", "- a <!-- id=m1 -->\n- b <!-- id=m1 -->\n"),
    (
        "- a <!-- imp=x -->\n- b\n- c <!-- imp=y -->\n",
        "- z\n- a <!-- imp=x -->\n- b\n- c <!-- imp=y -->\n",
    ),
    ("- a\r\n- b\r\n", "- a\r\n- b\n- c\n- d\n"),
    ("\ufeff- a\n- b\n", "- a\n- b\n"),
    ("- a\n- b", "- a\n- b\n- c"),
]


@pytest.mark.parametrize(("before", "after"), REPARSE_CASES)
def test_reparse_cases(before: str, after: str) -> None:
    for name in ("memory.md", "learnings.md"):
        prev = parse_file(before, name)
        prev.id_counts()
        _same_parse(reparse(prev, after), parse_file(after, name))
        _same_parse(reparse(parse_file(after, name), before), parse_file(before, name))


def test_reparse_reads_only_around_the_change() -> None:
    """A one-entry edit in a big file re-reads that entry's lines, not the file: the
    entries before and after it are the previous parse's own objects."""
    text = "## Facts\n" + "".join(f"- fact number {i} <!-- id=m{i} -->\n" for i in range(5000))
    prev = parse_file(text, "memory.md")
    edited = text.replace("- fact number 2500 ", "- fact two thousand five hundred ")
    got = reparse(prev, edited)
    _same_parse(got, parse_file(edited, "memory.md"))
    fresh = [
        i for i, (a, b) in enumerate(zip(prev.entries, got.entries, strict=True)) if a is not b
    ]
    assert fresh == [2500]


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 300_000), st.integers(0, 300_000), st.text(max_size=3), st.text(max_size=3))
def test_common_prefix_and_suffix_of_long_texts(size: int, at: int, x: str, y: str) -> None:
    """The galloping comparison finds the same first and last difference as a plain
    character loop, on texts long enough for its biggest slices."""
    from memcli.store.reparse import _common_prefix, _common_suffix

    base = ("abcdefghij" * (size // 10 + 1))[:size]
    at = min(at, size)
    a, b = base[:at] + x + base[at:], base[:at] + y + base[at:]
    naive = 0
    while naive < min(len(a), len(b)) and a[naive] == b[naive]:
        naive += 1
    assert _common_prefix(a, b) == naive
    limit = min(len(a), len(b)) - naive
    tail = 0
    while tail < limit and a[len(a) - tail - 1] == b[len(b) - tail - 1]:
        tail += 1
    assert _common_suffix(a, b, limit) == tail
