"""Re-reading a changed file from its previous parse (memcli.store.markdown.Parsed).

`reparse(prev, text)` gives exactly what `parse_file(text)` gives, reading again only
the lines around what changed: from the last entry before the first changed character
up to the first entry after the last changed one at which the parser is in the state the
previous parse had there (outside a fence, same type and section). The blocks after it
are reused, moved by the change in line count, with derived ids renumbered where the
number of id-less entries with their text changed before them. A long-lived watcher so
re-reads a 100k-entry file after a one-entry edit in milliseconds instead of seconds;
tests/unit/test_markdown.py compares both on random edits. Pure, no I/O.
"""

from __future__ import annotations

import bisect
from collections import Counter

from memcli.core.errors import ParseError
from memcli.core.models import Entry
from memcli.store.document import Document, EntryBlock, RawBlock, split_lines
from memcli.store.markdown import (
    _LINE,
    _START,
    BOM,
    Parsed,
    _default_type,
    _eol,
    _eol_counts,
    _front_matter,
    _Run,
    parse_file,
)
from memcli.store.metadata import derived_id, id_prefix_for


def reparse(prev: Parsed, text: str) -> Parsed:
    """The parse of `text`, from the parse of the same file's previous text: the lines
    from the last entry before the first change are parsed again, up to the first entry
    after the last change that the parser reaches in the state the previous parse had
    there (same fence, type and section); the blocks after it are reused (moved by the
    change in line count, derived ids renumbered where the texts before them changed)."""
    if text == prev.text:
        return prev
    filename = prev.doc.filename
    bom = BOM if text.startswith(BOM) else ""
    if bom != prev.doc.bom or prev.front_end < 0:
        return parse_file(text, filename, prev.doc.files)
    old_body, body = prev.text[len(bom) :], text[len(bom) :]
    old_lines, old_blocks = prev.lines, prev.doc.blocks
    p = _common_prefix(old_body, body)
    s = _common_suffix(old_body, body, min(len(old_body), len(body)) - p)
    line_p = old_body.count("\n", 0, p)  # the first changed line
    line_start = old_body.rfind("\n", 0, p) + 1
    ia = _resume_at(old_blocks, line_p, p > line_start)
    if ia is None:  # nothing to start from but the beginning (front matter included)
        ia, ea, la = 0, 0, 0
        state: tuple[str, str] = ("", "")
    else:
        first = old_blocks[ia]
        assert isinstance(first, EntryBlock)
        la = first.start_line - 1
        ea = bisect.bisect_left(prev.entries, first.start_line, key=_LINE)
        state = (first.entry.type, first.section)
        if ia > 0 and isinstance(old_blocks[ia - 1], RawBlock):
            ia -= 1  # the raw lines before it join the new ones, as a full parse has them
    c_a = line_start - sum(map(len, old_lines[la:line_p]))  # where line la starts
    shift = len(body) - len(old_body)
    e = body.find("\n", len(body) - s) + 1  # the first line start inside the common suffix
    if e:
        k = la + old_body.count("\n", c_a, e - shift)  # the same line in the old text
    else:
        e, k = len(body), len(old_lines)
    mid = split_lines(body[c_a:e])
    lines = old_lines[:la] + mid + old_lines[k:]
    tail = la + len(mid)  # new line index of old line k
    delta = tail - k
    resync: list[int] = []

    def stop(i: int, entry_type: str, section: str) -> bool:
        if i < tail:
            return False
        line = i - delta + 1
        ib = bisect.bisect_left(old_blocks, line, key=_START)
        if ib == len(old_blocks):
            return False
        block = old_blocks[ib]
        if (
            isinstance(block, EntryBlock)
            and block.start_line == line
            and block.entry.type == entry_type
            and block.section == section
        ):
            resync.append(ib)
            return True
        return False

    before: dict[str, int] = {}

    def derived_before(text: str) -> int:
        """Entries without an id and with this text before the parsed lines."""
        if text not in before:
            before[text] = sum(1 for x in prev.entries[:ea] if x.text == text and not x.id_explicit)
        return before[text]

    seen: dict[str, int] = {}

    def occurrence(text: str) -> int:
        number = seen[text] if text in seen else derived_before(text)
        seen[text] = number + 1
        return number

    problems: list[ParseError] = []
    if la == 0:
        raw, start, front, front_end = _front_matter(lines, filename, problems)
        default = _default_type(filename, front, prev.doc.files)
        if default != prev.default:
            return parse_file(text, filename, prev.doc.files)
        state, raw_start = (default, ""), 1
    else:
        start, front, front_end, default = la, prev.doc.front, prev.front_end, prev.default
        previous = old_blocks[ia]
        raw, raw_start = [], la + 1
        if isinstance(previous, RawBlock):
            raw, raw_start = list(previous.lines), previous.start_line
    run = _Run(filename, lines, default, occurrence, problems, prev.doc.files)
    run.run(start, state[0], state[1], raw, raw_start, stop)
    if resync:
        ib = resync[0]
        resumed = old_blocks[ib].start_line
        eb = bisect.bisect_left(prev.entries, resumed, key=_LINE)
    else:
        ib, eb, resumed = len(old_blocks), len(prev.entries), len(old_lines) + 2
    gone, new = prev.entries[ea:eb], run.entries
    renumber = _derived_changes(gone, new)
    blocks = old_blocks[ib:]
    entries = prev.entries[eb:]
    if delta or renumber:
        running = {t: seen[t] if t in seen else derived_before(t) for t in renumber}
        blocks, entries, renamed = _moved(blocks, delta, renumber, running, id_prefix_for(filename))
        gone = gone + [old for old, _ in renamed]
        new = new + [now for _, now in renamed]
    old_eols = _eol_counts(old_body[c_a : e - shift])
    new_eols = _eol_counts(body[c_a:e])
    eols = (
        prev.eols[0] - old_eols[0] + new_eols[0],
        prev.eols[1] - old_eols[1] + new_eols[1],
    )
    problems = (
        [x for x in prev.doc.problems if x.line <= la]
        + run.problems
        + [_moved_problem(x, delta) for x in prev.doc.problems if x.line >= resumed]
    )
    doc = Document(
        filename,
        old_blocks[:ia] + run.blocks + blocks,
        bom,
        _eol(eols),
        problems,
        front,
        prev.doc.files,
    )
    ids = prev._ids
    return Parsed(
        doc,
        text,
        lines,
        prev.entries[:ea] + run.entries + entries,
        default,
        front_end,
        eols,
        None if ids is None else (ids, gone, new),
    )


def _resume_at(blocks: list[RawBlock | EntryBlock], line: int, inside: bool) -> int | None:
    """Index of the last entry block a change on 0-based `line` cannot reach back past:
    one that starts before it, or on it when the change is after its first character
    (the line stays an item); None when there is none."""
    index = bisect.bisect_right(blocks, line + 1, key=_START) - 1
    while index >= 0:
        block = blocks[index]
        if isinstance(block, EntryBlock) and (block.start_line - 1 < line or inside):
            return index
        index -= 1
    return None


def _derived_changes(gone: list[Entry], new: list[Entry]) -> set[str]:
    """Texts of id-less entries whose number differs between `gone` and `new`: the
    derived ids of later entries with those texts are numbered anew."""
    before = Counter(e.text for e in gone if not e.id_explicit)
    after = Counter(e.text for e in new if not e.id_explicit)
    return {t for t in before.keys() | after.keys() if before[t] != after[t]}


def _moved(
    blocks: list[RawBlock | EntryBlock],
    delta: int,
    renumber: set[str],
    running: dict[str, int],
    prefix: str,
) -> tuple[list[RawBlock | EntryBlock], list[Entry], list[tuple[Entry, Entry]]]:
    """The reused blocks moved by `delta` lines, with the derived ids of texts in
    `renumber` counted on from `running`; their entries, and (old, new) of each entry
    whose id changed."""
    out: list[RawBlock | EntryBlock] = []
    entries: list[Entry] = []
    renamed: list[tuple[Entry, Entry]] = []
    for block in blocks:
        if isinstance(block, EntryBlock):
            entry = block.entry
            entry_id = entry.id
            if renumber and not entry.id_explicit and entry.text in renumber:
                number = running[entry.text]
                running[entry.text] = number + 1
                entry_id = derived_id(prefix, entry.text, number)
            if delta or entry_id != entry.id:
                row = (entry_id, entry.text, entry.type, entry.file, entry.line + delta)
                moved = Entry.from_row((*row, entry.meta, entry.id_explicit))
                if entry_id != entry.id:
                    renamed.append((entry, moved))
                block = EntryBlock(
                    block.lines, block.start_line + delta, moved, block.marker, block.section
                )
            entries.append(block.entry)
        elif delta:
            block = RawBlock(block.lines, block.start_line + delta)
        out.append(block)
    return out, entries, renamed


def _moved_problem(problem: ParseError, delta: int) -> ParseError:
    if not delta:
        return problem
    where = f"{problem.path}:{problem.line}: "
    message = problem.message
    if message.startswith(where):
        message = message[len(where) :]
    moved = ParseError(problem.path, problem.line + delta, message, hint=problem.hint)
    moved.skipped, moved.blocks_writes = problem.skipped, problem.blocks_writes
    moved.whole_file = problem.whole_file
    return moved


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of `a` and `b`: compared by slices that
    double while they match (a few dozen C comparisons for a 9 MB file), then shrink
    to pin down the first difference."""
    n = min(len(a), len(b))
    i, step = 0, 64
    while i < n:
        j = min(i + step, n)
        if a[i:j] == b[i:j]:
            i, step = j, min(step * 2, 1 << 20)
        elif step > 64:
            step = 64
        else:
            break
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix of `a` and `b`, at most `limit` (as
    _common_prefix, from the end)."""
    la, lb = len(a), len(b)
    i, step = 0, 64
    while i < limit:
        j = min(i + step, limit)
        if a[la - j : la - i] == b[lb - j : lb - i]:
            i, step = j, min(step * 2, 1 << 20)
        elif step > 64:
            step = 64
        else:
            break
    while i < limit and a[la - i - 1] == b[lb - i - 1]:
        i += 1
    return i
