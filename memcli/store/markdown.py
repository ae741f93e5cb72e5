"""Parsing a memcli Markdown file into a Document (memcli.store.document): the front
matter, then line by line raw lines, headings (which set the type of the items below
them), fences and entries (a top-level list item with its continuation lines, read into
its text and metadata). `parse_file` keeps what memcli.store.reparse needs to re-read
the file after a change from this parse. Pure, no I/O.

The rest of the format lives beside it: memcli.store.document (blocks, the Document and
its changes), memcli.store.metadata (the metadata comment, derived ids, the lines memcli
writes) and memcli.store.frontmatter (file-level settings). Their public names are
re-exported here, where callers have always imported them from.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Callable
from dataclasses import field
from operator import attrgetter
from typing import Any

from memcli.core.errors import ParseError
from memcli.core.models import Entry
from memcli.core.records import record
from memcli.core.registry import BUILTIN, Registry
from memcli.core.validate import MAX_ENTRY_CHARS
from memcli.store.document import (
    _FENCE_RE,
    _HEADING_RE,
    Document,
    EntryBlock,
    RawBlock,
    _strip_eol,
    split_lines,
)
from memcli.store.frontmatter import FORMAT_VERSION, FRONT_MATTER_MAX, read_front_matter
from memcli.store.metadata import (
    DERIVED_ID_HEX,
    _trailing_comment,
    derived_id,
    format_meta,
    id_prefix_for,
    parse_meta,
    parse_meta_safe,
    render_entry_lines,
    soft_meta_problem,
    validate_meta,
)

__all__ = [
    "BOM",
    "DERIVED_ID_HEX",
    "FORMAT_VERSION",
    "FRONT_MATTER_MAX",
    "Document",
    "EntryBlock",
    "Parsed",
    "RawBlock",
    "derived_id",
    "format_meta",
    "id_prefix_for",
    "parse",
    "parse_file",
    "parse_meta",
    "parse_meta_safe",
    "read_front_matter",
    "render_entry_lines",
    "split_lines",
    "validate_meta",
]

BOM = "\ufeff"
_ITEM_RE = re.compile(r"^(?P<marker>[-*+][ \t]+)(?P<rest>.*)$")
#: a metadata comment opened and not closed on its line (`- text <!-- id=x kw=a`)
_UNCLOSED_META_RE = re.compile(r"<!--\s*[A-Za-z_][\w-]*=(?!.*-->)")
_START = attrgetter("start_line")
_LINE = attrgetter("line")


#: an id's count in a file, and the ids more than one entry carries
_Ids = tuple[dict[str, int], set[str]]


@record(eq=False)
class Parsed:
    """One parse of a file's text, with what `reparse` starts from. Read-only."""

    doc: Document
    text: str
    lines: list[str]  # the lines after the BOM, each with its ending
    entries: list[Entry]  # doc.entries()
    default: str  # the type of items outside a `##` section
    front_end: int  # lines of front matter; 0: none; -1: a first line '---' never closed
    eols: tuple[int, int]  # lines ending in CRLF, lines ending in a bare LF
    #: (the previous parse's ids, entries gone since, entries new since)
    _delta: tuple[_Ids, list[Entry], list[Entry]] | None = field(default=None, repr=False)
    _ids: _Ids | None = field(default=None, repr=False)

    def id_counts(self) -> dict[str, int]:
        """How many entries of the file carry each id."""
        return self._id_state()[0]

    def repeated_ids(self) -> set[str]:
        """Ids more than one entry of the file carries."""
        return self._id_state()[1]

    def _id_state(self) -> _Ids:
        """Counted once per file, then carried from parse to parse by what changed."""
        if self._ids is None:
            if self._delta is not None:
                (base, repeated), gone, new = self._delta
                counts, repeated = dict(base), set(repeated)
                for entry in gone:
                    counts[entry.id] -= 1
                for entry in new:
                    counts[entry.id] = counts.get(entry.id, 0) + 1
                for entry_id in {e.id for e in gone} | {e.id for e in new}:
                    left = counts[entry_id]
                    if left > 1:
                        repeated.add(entry_id)
                    else:
                        repeated.discard(entry_id)
                        if not left:
                            del counts[entry_id]
            else:
                counts = dict(Counter(e.id for e in self.entries))
                repeated = {i for i, n in counts.items() if n > 1}
            self._ids, self._delta = (counts, repeated), None
        return self._ids


def parse(text: str, filename: str, files: Registry = BUILTIN) -> Document:
    """Parse a file's text. Malformed entries are kept as raw lines and reported in
    `Document.problems` (the caller decides whether that is fatal). `files`: the
    workspace's registry (its types' headings, its files' default types)."""
    return parse_file(text, filename, files).doc


def parse_file(text: str, filename: str, files: Registry = BUILTIN) -> Parsed:
    """`parse`, keeping what a later `reparse` of the file starts from."""
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]
    lines = split_lines(body)
    problems: list[ParseError] = []
    raw, start, front, front_end = _front_matter(lines, filename, problems)
    default = _default_type(filename, front, files)
    seen: dict[str, int] = {}

    def occurrence(text: str) -> int:
        number = seen.get(text, 0)
        seen[text] = number + 1
        return number

    run = _Run(filename, lines, default, occurrence, problems, files)
    run.run(start, default, "", raw, 1)
    eols = _eol_counts(body)
    doc = Document(filename, run.blocks, bom, _eol(eols), run.problems, front, files)
    return Parsed(doc, text, lines, run.entries, default, front_end, eols)


class _Run:
    """One pass of the parser over `lines` from a known state, collecting blocks,
    entries and problems; `stop` may end it at an item line (a reparse that found the
    previous parse again)."""

    def __init__(
        self,
        filename: str,
        lines: list[str],
        default: str,
        occurrence: Callable[[str], int],
        problems: list[ParseError],
        files: Registry = BUILTIN,
    ) -> None:
        self.filename = filename
        self.heading_type = files.heading_type
        self.lines = lines
        self.default = default
        self.occurrence = occurrence
        self.prefix = id_prefix_for(filename)
        self.blocks: list[RawBlock | EntryBlock] = []
        self.entries: list[Entry] = []
        self.problems = problems

    def run(
        self,
        i: int,
        current_type: str,
        current_section: str,
        raw: list[str],
        raw_start: int,
        stop: Callable[[int, str, str], bool] | None = None,
    ) -> None:
        lines, filename, default = self.lines, self.filename, self.default
        blocks = self.blocks

        def flush_raw(next_start: int) -> None:
            nonlocal raw, raw_start
            if raw:
                blocks.append(RawBlock(raw, raw_start))
            raw = []
            raw_start = next_start

        fence: str | None = None
        while i < len(lines):
            line = lines[i]
            content = _strip_eol(line)
            first_char = content.lstrip(" \t")[:1]
            fence_match = _FENCE_RE.match(content) if first_char in ("`", "~") else None
            if fence is not None:
                raw.append(line)
                if (
                    fence_match
                    and fence_match.group("fence")[0] == fence[0]
                    and len(fence_match.group("fence")) >= len(fence)
                ):
                    fence = None
                i += 1
                continue
            if fence_match:
                fence = fence_match.group("fence")
                raw.append(line)
                i += 1
                continue
            heading = _HEADING_RE.match(content) if first_char == "#" else None
            if heading:
                level = len(heading.group("hashes"))
                if level == 1:
                    current_type, current_section = default, ""
                elif level == 2:
                    current_section = heading.group("title")
                    current_type = self.heading_type(current_section)
                raw.append(line)
                i += 1
                continue
            item = _ITEM_RE.match(content) if content[:1] in ("-", "*", "+") else None
            if not item:
                if current_section and _prose_starts(content, raw):
                    self.problems.append(_not_an_entry(filename, i + 1))
                raw.append(line)
                i += 1
                continue
            if stop is not None and stop(i, current_type, current_section):
                flush_raw(i + 1)
                return
            # An entry: the item line plus indented continuation lines (blank lines inside
            # count when an indented line follows them).
            end = i + 1
            j = i + 1
            while j < len(lines):
                nxt = _strip_eol(lines[j])
                if nxt.strip() == "":
                    j += 1
                    continue
                if nxt[:1] in (" ", "\t"):
                    end = j + 1
                    j += 1
                    continue
                break
            entry_lines = lines[i:end]
            line_no = i + 1
            try:
                if sum(map(len, entry_lines)) > MAX_ENTRY_CHARS:
                    _check_size(entry_lines, item.group("marker"))
                text, meta, soft = _text_and_meta(entry_lines, item.group("marker"))
            except ValueError as exc:
                self.problems.append(
                    ParseError(
                        filename,
                        line_no,
                        str(exc),
                        hint="split it into smaller entries, or move the long text out of the "
                        "workspace's Markdown files"
                        if isinstance(exc, _TooLong)
                        else "fix the <!-- ... --> comment at the end of that line "
                        "(key=value pairs, e.g. imp=0.8 kw=a,b), or remove it",
                    )
                )
                raw.extend(entry_lines)
                i = end
                continue
            if soft:  # read with the default; the comment stays as written
                warning = ParseError(
                    filename, line_no, soft, hint="write a number from 0 to 1, e.g. imp=0.8"
                )
                warning.skipped = warning.blocks_writes = False
                self.problems.append(warning)
            if "id" in meta:
                entry = Entry(meta["id"], text, current_type, filename, line_no, meta, True)
            else:
                entry_id = derived_id(self.prefix, text, self.occurrence(text))
                entry = Entry(entry_id, text, current_type, filename, line_no, meta, False)
            flush_raw(line_no)
            blocks.append(
                EntryBlock(entry_lines, line_no, entry, item.group("marker"), current_section)
            )
            self.entries.append(entry)
            raw_start = end + 1
            i = end
        flush_raw(len(lines) + 1)


def _front_matter(
    lines: list[str], filename: str, problems: list[ParseError]
) -> tuple[list[str], int, dict[str, Any], int]:
    """(its lines, the line after it, its settings, its length) of the front matter:
    '---' on the first line up to the next '---' or '...' (length -1: never closed)."""
    if not lines or _strip_eol(lines[0]) != "---":
        return [], 0, {}, 0
    for j in range(1, len(lines)):
        if _strip_eol(lines[j]) in ("---", "..."):
            block = lines[: j + 1]
            return list(block), j + 1, read_front_matter(block, filename, problems), j + 1
    return [], 0, {}, -1


def _default_type(filename: str, front: dict[str, Any], files: Registry = BUILTIN) -> str:
    if isinstance(front.get("type"), str):
        return files.heading_type(front["type"])
    return files.default_type(filename)


def _eol_counts(body: str) -> tuple[int, int]:
    """(lines ending in CRLF, lines ending in a bare LF)."""
    crlf = body.count("\r\n")
    return crlf, body.count("\n") - crlf


def _eol(counts: tuple[int, int]) -> str:
    return "\r\n" if counts[0] > counts[1] else "\n"


class _TooLong(ValueError):
    """An entry above MAX_ENTRY_CHARS: kept as raw lines, left out of reads and the index."""


def _prose_starts(content: str, raw: list[str]) -> bool:
    """Whether `content` starts a paragraph of plain text (a sentence, a numbered item)
    in a section of entries: kept as written, but no entry (DESIGN 1.1)."""
    if not content[:1].isalnum():  # indented, blank, a comment, a table, a quote, …
        return False
    before = _strip_eol(raw[-1]) if raw else ""
    return not before[:1].isalnum()  # the paragraph's first line only


def _not_an_entry(filename: str, line_no: int) -> ParseError:
    """The warning for a line of plain text under a `##` section (issue 37): read as
    prose, kept byte for byte, never searched; the entries around it are read."""
    warning = ParseError(
        filename,
        line_no,
        "this line is plain text, not a list item: it is kept but is no entry (never "
        "searched or injected)",
        hint="start it with `- ` to make it an entry, or move it above the first `##` "
        "section if it is a note about the file",
    )
    warning.skipped = warning.blocks_writes = False
    return warning


def _check_size(entry_lines: list[str], marker: str) -> None:
    """Raise _TooLong when the item's text is above MAX_ENTRY_CHARS (only asked for items
    whose lines are that long: the text is never longer than its lines)."""
    text, _, _ = _read_text_and_meta(entry_lines, marker)
    if len(text) > MAX_ENTRY_CHARS:
        raise _TooLong(
            f"this entry is {len(text):,} characters long, above the {MAX_ENTRY_CHARS:,} "
            "memcli reads; it is left out (not searched, listed or injected)"
        )


_MEMO: dict[tuple[str, ...], tuple[str, dict[str, str]]] = {}
_MEMO_LIMIT = 300_000


def _text_and_meta(
    entry_lines: list[str], marker: str
) -> tuple[str, dict[str, str], str | None]:
    """An item's text and metadata, memoized by its lines: a long-lived watcher
    re-parsing a big file after a small edit re-reads only the changed entries. (The
    metadata dict is shared between equal entries; nothing changes it in place.)"""
    key = (marker, *entry_lines)
    found = _MEMO.get(key)
    if found is None:
        found = _read_text_and_meta(entry_lines, marker)
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = found
    return found


def _read_text_and_meta(
    entry_lines: list[str], marker: str
) -> tuple[str, dict[str, str], str | None]:
    """An item's text (continuation lines dedented), its metadata comment, if any, and
    what is wrong with an importance or confidence it holds (read as the default).
    Raises ValueError for malformed metadata or an empty item."""
    first = _strip_eol(entry_lines[0])[len(marker) :]
    meta: dict[str, str] = {}
    soft: str | None = None
    start, body = _trailing_comment(first)
    if body is None and _UNCLOSED_META_RE.search(first):  # never the entry's text
        raise ValueError(
            "its metadata comment is not closed: `-->` must end the line (the entry is "
            "left out until it is)"
        )
    if body is not None:
        parsed = parse_meta(body)
        if parsed is not None:
            validate_meta(parsed)
            soft = soft_meta_problem(parsed)
            meta = parsed
            first = first[:start]
    if len(entry_lines) == 1:
        text = first.rstrip()
    else:
        continuation = textwrap.dedent("".join(_strip_eol(x) + "\n" for x in entry_lines[1:]))
        text_lines = [first.rstrip()] + [x.rstrip() for x in continuation.split("\n")]
        text = "\n".join(text_lines).strip("\n")
    if not text.strip():
        raise ValueError("this list item has no text")
    return text, meta, soft
