"""A parsed Markdown file as blocks of lines, and the changes memcli makes to it.

A document is a sequence of raw blocks (prose, headings, blank lines, fences, front
matter) and entry blocks (a top-level list item with its continuation lines). Raw blocks
keep their bytes; an entry block keeps its original lines until it is changed, so
serializing an untouched document gives back the exact input (BOM, CRLF, tabs, missing
final newline included). Parsing lives in memcli.store.markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from memcli.core.errors import ParseError
from memcli.core.models import Entry
from memcli.core.records import record
from memcli.core.registry import BUILTIN, Registry
from memcli.store.metadata import (
    _render_first_line,
    _trailing_comment,
    parse_meta_safe,
    render_entry_lines,
)

_HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<title>.*?)[ \t#]*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})")


def split_lines(text: str) -> list[str]:
    """Split keeping each line's ending; joining the result gives `text` back."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _strip_eol(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith("\n"):
        return line[:-1]
    return line


def _eol_of(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return ""


# ----------------------------------------------------------------------------- blocks


@dataclass
class RawBlock:
    """Lines that are not an entry, kept byte for byte."""

    lines: list[str]
    start_line: int


@dataclass
class EntryBlock:
    """A top-level list item and its continuation lines."""

    lines: list[str]
    start_line: int
    entry: Entry
    marker: str
    section: str  # heading title it sits under ("" before the first heading)


@record
class Document:
    """A parsed Markdown file. `blocks` joined back give the file's text; `front` is
    its front matter's settings (read_front_matter)."""

    filename: str
    blocks: list[RawBlock | EntryBlock]
    bom: str = ""
    eol: str = "\n"
    problems: list[ParseError] = field(default_factory=list)
    front: dict[str, Any] = field(default_factory=dict)
    #: the workspace's files: the headings of its types (memcli.core.registry)
    files: Registry = field(default=BUILTIN, repr=False, compare=False)

    # -- reading

    def serialize(self) -> str:
        return self.bom + "".join(line for block in self.blocks for line in block.lines)

    def entries(self) -> list[Entry]:
        return [b.entry for b in self.blocks if isinstance(b, EntryBlock)]

    def entry_blocks(self) -> Iterator[EntryBlock]:
        for block in self.blocks:
            if isinstance(block, EntryBlock):
                yield block

    def find(self, entry_id: str) -> EntryBlock | None:
        for block in self.entry_blocks():
            if block.entry.id == entry_id:
                return block
        return None

    def copy(self) -> Document:
        """A copy to change: blocks, their lines and the lists copied, entries shared
        (they are frozen)."""
        blocks = [replace(block, lines=list(block.lines)) for block in self.blocks]
        return Document(
            self.filename,
            blocks,
            self.bom,
            self.eol,
            list(self.problems),
            dict(self.front),
            self.files,
        )

    # -- changing

    def replace_entry(self, entry_id: str, new: Entry) -> Entry:
        """Re-render the entry with this id in place; returns the entry as now stored."""
        block = self.find(entry_id)
        if block is None:
            raise KeyError(entry_id)
        return self.replace_block(block, new)

    def replace_block(self, block: EntryBlock, new: Entry) -> Entry:
        """Re-render one entry block in place (text unchanged: only its first line)."""
        old = block.entry
        last_eol = _eol_of(block.lines[-1])
        if new.text == old.text:
            head = _head_text(block.lines[0], block.marker)
            first = _render_first_line(block.marker, head, new.meta) + (
                _eol_of(block.lines[0]) or last_eol
            )
            lines = [first] + block.lines[1:]
        else:
            lines = render_entry_lines(new.text, new.meta, self.eol, block.marker)
            if not last_eol:
                lines[-1] = _strip_eol(lines[-1])
        block.lines = lines
        block.entry = replace(new, line=block.start_line, file=self.filename)
        self._renumber()
        return block.entry

    def remove_entry(self, entry_id: str) -> Entry:
        block = self.find(entry_id)
        if block is None:
            raise KeyError(entry_id)
        index = self.blocks.index(block)
        if not _eol_of(block.lines[-1]) and index > 0:
            # The removed entry ended the file without a newline: keep that property.
            prev = self.blocks[index - 1]
            prev.lines[-1] = _strip_eol(prev.lines[-1])
        del self.blocks[index]
        self._renumber()
        return block.entry

    def insert_entry(self, entry: Entry) -> Entry:
        """Append an entry to the end of its type's section (created if missing)."""
        lines = render_entry_lines(entry.text, entry.meta, self.eol, "- ")
        self._ensure_final_newline()
        position = self._section_end(entry.type)
        if position is None:
            title = self.files.section_title(entry.type)
            tail: list[str] = []
            if self.blocks and not self.serialize().endswith(self.eol * 2):
                tail.append(self.eol)
            tail += [f"## {title}{self.eol}"]
            self.blocks.append(RawBlock(tail, 0))
            position = len(self.blocks)
        block = EntryBlock(lines, 0, entry, "- ", self.files.section_title(entry.type))
        self.blocks.insert(position, block)
        following = self.blocks[position + 1] if position + 1 < len(self.blocks) else None
        if isinstance(following, RawBlock) and _HEADING_RE.match(_strip_eol(following.lines[0])):
            self.blocks.insert(position + 1, RawBlock([self.eol], 0))  # keep a gap before it
        self._renumber()
        return block.entry

    # -- helpers

    def _ensure_final_newline(self) -> None:
        if self.blocks and not _eol_of(self.blocks[-1].lines[-1]):
            self.blocks[-1].lines[-1] += self.eol

    def _section_end(self, entry_type: str) -> int | None:
        """Block index right after the last entry of `entry_type`, or right after its
        `##` heading when the section has no entries yet; None when neither exists."""
        last_entry: int | None = None
        heading_at: tuple[int, int] | None = None
        in_fence = False
        for index, block in enumerate(self.blocks):
            if isinstance(block, EntryBlock):
                if block.entry.type == entry_type:
                    last_entry = index + 1
                continue
            for line_index, line in enumerate(block.lines):
                text = _strip_eol(line)
                if _FENCE_RE.match(text):
                    in_fence = not in_fence
                    continue
                heading = None if in_fence else _HEADING_RE.match(text)
                if (
                    heading
                    and heading_at is None
                    and len(heading.group("hashes")) == 2
                    and self.files.heading_type(heading.group("title")) == entry_type
                ):
                    heading_at = (index, line_index)
        if last_entry is not None:
            return last_entry
        if heading_at is not None:
            return self._split_after_heading(*heading_at)
        return None

    def _split_after_heading(self, index: int, line_index: int) -> int:
        """Split raw block `index` after its heading line (and the blank lines right
        below it); return the block index where a new entry goes."""
        block = self.blocks[index]
        cut = line_index + 1
        while cut < len(block.lines) and not _strip_eol(block.lines[cut]).strip():
            cut += 1
        before, after = block.lines[:cut], block.lines[cut:]
        if after:
            block.lines = before
            self.blocks.insert(index + 1, RawBlock(after, 0))
        return index + 1

    def _renumber(self) -> None:
        line_no = 1
        for block in self.blocks:
            block.start_line = line_no
            if isinstance(block, EntryBlock) and block.entry.line != line_no:
                block.entry = replace(block.entry, line=line_no)
            line_no += len(block.lines)


def _head_text(first_line: str, marker: str) -> str:
    """The first line's text without bullet, metadata comment or line end."""
    rest = _strip_eol(first_line)[len(marker) :]
    start, body = _trailing_comment(rest)
    if body is not None and parse_meta_safe(body) is not None:
        rest = rest[:start]
    return rest.rstrip()
