"""Pure parse/serialize of memcli Markdown files, byte-exact for untouched content.

A document is a sequence of raw blocks (prose, headings, blank lines, fences, front
matter) and entry blocks (a top-level list item with its continuation lines). Raw blocks
keep their bytes; an entry block keeps its original lines until it is changed, so
serializing an untouched document gives back the exact input (BOM, CRLF, tabs, missing
final newline included).
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from memcli.core.errors import ParseError
from memcli.core.models import (
    CONVERSATIONS_DIR,
    EPISODES_DIR,
    LEARNINGS_FILE,
    MEMORY_FILE,
    Entry,
    heading_type,
    is_valid_id,
    parse_time,
    section_title,
)
from memcli.core.validate import MAX_ENTRY_CHARS

BOM = "\ufeff"
_ITEM_RE = re.compile(r"^(?P<marker>[-*+][ \t]+)(?P<rest>.*)$")
_HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<title>.*?)[ \t#]*$")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})")
_TOKEN_RE = re.compile(r'\s*(?P<key>[A-Za-z_][\w-]*)=(?P<value>"(?:[^"\\]|\\.)*"|[^\s"]*)')
_NEEDS_QUOTES = re.compile(r'[\s"\\]|-->|<!--')
#: what str.splitlines breaks at: never written inside a metadata comment
_LINE_BREAKS = re.compile(r"[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def split_lines(text: str) -> list[str]:
    """Split keeping each line's ending; joining the result gives `text` back."""
    return [piece for piece in re.split(r"(?<=\n)", text) if piece]


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


def _file_kind(filename: str) -> str:
    """memory, learnings, episode, conversation or other, from a workspace-relative
    name."""
    name = filename.replace("\\", "/")
    if name.startswith(EPISODES_DIR + "/"):
        return "episode"
    if name.startswith(CONVERSATIONS_DIR + "/"):
        return "conversation"
    return {MEMORY_FILE: "memory", LEARNINGS_FILE: "learnings"}.get(
        name.rsplit("/", 1)[-1], "other"
    )


def default_type_for(filename: str) -> str:
    """Type of items that sit before the first `##` heading of a file."""
    kinds = {"learnings": "lesson", "episode": "episode", "conversation": "turn"}
    return kinds.get(_file_kind(filename), "fact")


def id_prefix_for(filename: str) -> str:
    """First letter of ids minted for entries of this file."""
    return {"learnings": "l", "episode": "e", "conversation": "c"}.get(_file_kind(filename), "m")


#: hex digits of a derived id: 64 bits, so that two lines of one workspace never share
#: an id by chance (28 bits gave 16 collisions per 100k lines) and matching a given line's
#: id takes 2^64 tries
DERIVED_ID_HEX = 16


def derived_id(prefix: str, text: str, occurrence: int = 0) -> str:
    """Stable id of a hand-written entry, from its text (and its occurrence number when
    the same text appears more than once in a file)."""
    payload = text if occurrence == 0 else f"{text}\x00{occurrence}"
    return prefix + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:DERIVED_ID_HEX]


# ----------------------------------------------------------------------------- metadata


def parse_meta(body: str) -> dict[str, str] | None:
    """Parse the inside of a metadata comment into ordered key/value strings.

    Returns None when the comment holds no `key=value` at all (a plain comment, which is
    part of the entry's text). Raises ValueError when it mixes pairs with junk.
    """
    if "=" not in body:
        return None
    meta: dict[str, str] = {}
    pos = 0
    stripped_end = len(body.rstrip())
    while pos < stripped_end:
        match = _TOKEN_RE.match(body, pos)
        if not match:
            junk = body[pos:].split()[0]
            raise ValueError(f"cannot read {junk!r} in the metadata comment (expected key=value)")
        value = match.group("value")
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        key = match.group("key")
        if key in meta:
            raise ValueError(f"metadata key {key!r} appears twice")
        meta[key] = value
        pos = match.end()
    return meta


def validate_meta(meta: dict[str, str]) -> None:
    """Check the known keys' values; raises ValueError naming the key."""
    if "id" in meta and not is_valid_id(meta["id"]):
        raise ValueError(f"id={meta['id']!r} is not a valid id (letters, digits, _ . : -)")
    for key, label in (("imp", "importance"), ("conf", "confidence")):
        if key in meta:
            try:
                value = float(meta[key])
            except ValueError:
                raise ValueError(f"{key}={meta[key]!r}: {label} must be a number") from None
            if not 0.0 <= value <= 1.0 or value != value:
                raise ValueError(f"{key}={meta[key]}: {label} must be between 0 and 1")
    for key in ("created", "updated", "expires"):
        if key in meta:
            try:
                parse_time(meta[key])
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None


def format_meta(meta: dict[str, str]) -> str:
    """Serialize metadata as the inside of a comment: `key=value` pairs, `id` first.

    A value that holds spaces, quotes or a comment delimiter is quoted, with `-->` and
    `<!--` written as `--\\>` and `<\\!--` (parse_meta reads them back as they were), so
    no value can end the comment early or open another one. Values are one line (callers
    refuse line breaks, see memcli.core.validate); a line break that gets here anyway becomes
    a space rather than a new line of the file.
    """
    parts = []
    ordered = (["id"] if "id" in meta else []) + [k for k in meta if k != "id"]
    for key in ordered:
        value = _LINE_BREAKS.sub(" ", meta[key])
        if value == "" or _NEEDS_QUOTES.search(value):
            value = (
                '"'
                + value.replace("\\", "\\\\")
                .replace('"', '\\"')
                .replace("-->", "--\\>")
                .replace("<!--", "<\\!--")
                + '"'
            )
        parts.append(f"{key}={value}")
    return " ".join(parts)


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


@dataclass
class Document:
    """A parsed Markdown file. `blocks` joined back give the file's text; `front` is
    its front matter's settings (read_front_matter)."""

    filename: str
    blocks: list[RawBlock | EntryBlock]
    bom: str = ""
    eol: str = "\n"
    problems: list[ParseError] = field(default_factory=list)
    front: dict[str, Any] = field(default_factory=dict)

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
            title = section_title(entry.type)
            tail: list[str] = []
            if self.blocks and not self.serialize().endswith(self.eol * 2):
                tail.append(self.eol)
            tail += [f"## {title}{self.eol}"]
            self.blocks.append(RawBlock(tail, 0))
            position = len(self.blocks)
        block = EntryBlock(lines, 0, entry, "- ", section_title(entry.type))
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
                    and heading_type(heading.group("title")) == entry_type
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


def _trailing_comment(line: str) -> tuple[int, str | None]:
    """(start, inside) of the HTML comment that ends the line, or (-1, None)."""
    stripped = line.rstrip(" \t")
    if not stripped.endswith("-->"):
        return -1, None
    start = stripped.rfind("<!--")
    if start < 0:
        return -1, None
    body = stripped[start + 4 : -3]
    return (start, body) if "-->" not in body else (-1, None)


def parse_meta_safe(body: str) -> dict[str, str] | None:
    try:
        return parse_meta(body)
    except ValueError:
        return None


def _render_first_line(marker: str, head: str, meta: dict[str, str]) -> str:
    comment = f" <!-- {format_meta(meta)} -->" if meta else ""
    return f"{marker}{head}{comment}"


def render_entry_lines(text: str, meta: dict[str, str], eol: str, marker: str = "- ") -> list[str]:
    """Lines of an entry written by memcli: the first text line with the metadata
    comment, then the other text lines indented by two spaces."""
    text_lines = text.split("\n")
    lines = [_render_first_line(marker, text_lines[0], meta) + eol]
    for extra in text_lines[1:]:
        lines.append(("  " + extra if extra.strip() else "") + eol)
    return lines


# ----------------------------------------------------------------------------- front matter

FORMAT_VERSION = 1  # `memcli: N` in a file's front matter: the entry format it uses
FRONT_MATTER_MAX = 16_384  # bytes of front matter memcli reads; a bigger one is refused


def read_front_matter(
    block: list[str], filename: str, problems: list[ParseError]
) -> dict[str, Any]:
    """File-level settings from the YAML front matter (DESIGN §1.1), read with
    python-frontmatter's safe loader; the block itself is kept byte for byte. Known keys:
    `memcli` (the format version: a file written for a newer memcli is read but not
    written) and `type` (the type of items outside a `##` section, e.g. `type: lesson`).
    Other keys are the person's own and are left alone. What cannot be read is reported
    in `problems` (it stops writes, never reads) and gives no settings."""
    text = "".join(block)
    if len(text.encode("utf-8")) > FRONT_MATTER_MAX:
        problems.append(
            _front_problem(
                filename, 1, f"the front matter is larger than {FRONT_MATTER_MAX // 1024} KB"
            )
        )
        return {}
    import frontmatter  # python-frontmatter (+ PyYAML): only files with front matter pay it
    import yaml

    handler = frontmatter.YAMLHandler()
    try:
        yaml_text, _ = handler.split(text)
        settings = handler.load(yaml_text) if yaml_text.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1  # the YAML text starts after '---'
        reason = getattr(exc, "problem", None) or "not valid YAML"
        problems.append(_front_problem(filename, line, f"front matter: {reason}"))
        return {}
    if not isinstance(settings, dict):
        problems.append(_front_problem(filename, 1, "front matter: expected `key: value` lines"))
        return {}
    version = settings.get("memcli", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        problems.append(
            _front_problem(
                filename, 1, f"front matter: memcli: {version!r} is not a format version (1)"
            )
        )
        return {}
    if version > FORMAT_VERSION:
        problems.append(
            _front_problem(
                filename,
                1,
                f"written for memcli format {version}; this memcli knows format {FORMAT_VERSION}",
                hint="upgrade memcli before writing to this file (reading works)",
            )
        )
    entry_type = settings.get("type")
    if entry_type is not None and (not isinstance(entry_type, str) or not entry_type.strip()):
        problems.append(
            _front_problem(filename, 1, f"front matter: type: {entry_type!r} is not a type name")
        )
        settings = {k: v for k, v in settings.items() if k != "type"}
    return settings


def _front_problem(filename: str, line: int, message: str, hint: str | None = None) -> ParseError:
    problem = ParseError(
        filename, line, message, hint=hint or "fix the block between the --- lines at the top"
    )
    problem.skipped = False  # the entries are read; only writes stop
    return problem


# ----------------------------------------------------------------------------- parsing


def parse(text: str, filename: str) -> Document:
    """Parse a file's text. Malformed entries are kept as raw lines and reported in
    `Document.problems` (the caller decides whether that is fatal)."""
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]
    lines = split_lines(body)
    doc = Document(filename=filename, blocks=[], bom=bom, eol=_dominant_eol(lines))
    default = default_type_for(filename)
    prefix = id_prefix_for(filename)
    current_type, current_section = default, ""
    raw: list[str] = []
    raw_start = 1
    seen_derived: dict[str, int] = {}
    i = 0

    def flush_raw(next_start: int) -> None:
        nonlocal raw, raw_start
        if raw:
            doc.blocks.append(RawBlock(raw, raw_start))
        raw = []
        raw_start = next_start

    # Front matter: '---' on the first line up to the next '---' or '...'.
    if lines and _strip_eol(lines[0]) == "---":
        for j in range(1, len(lines)):
            if _strip_eol(lines[j]) in ("---", "..."):
                raw.extend(lines[: j + 1])
                i = j + 1
                doc.front = read_front_matter(lines[: j + 1], filename, doc.problems)
                break
    if isinstance(doc.front.get("type"), str):
        default = current_type = heading_type(doc.front["type"])

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
                current_type = heading_type(current_section)
            raw.append(line)
            i += 1
            continue
        item = _ITEM_RE.match(content) if content[:1] in ("-", "*", "+") else None
        if not item:
            raw.append(line)
            i += 1
            continue
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
            text, meta = _text_and_meta(entry_lines, item.group("marker"))
        except ValueError as exc:
            doc.problems.append(
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
        if "id" in meta:
            entry = Entry(meta["id"], text, current_type, filename, line_no, meta, True)
        else:
            occurrence = seen_derived.get(text, 0)
            seen_derived[text] = occurrence + 1
            entry_id = derived_id(prefix, text, occurrence)
            entry = Entry(entry_id, text, current_type, filename, line_no, meta, False)
        flush_raw(line_no)
        doc.blocks.append(
            EntryBlock(entry_lines, line_no, entry, item.group("marker"), current_section)
        )
        raw_start = end + 1
        i = end
    flush_raw(len(lines) + 1)
    return doc


class _TooLong(ValueError):
    """An entry above MAX_ENTRY_CHARS: kept as raw lines, left out of reads and the index."""


def _check_size(entry_lines: list[str], marker: str) -> None:
    """Raise _TooLong when the item's text is above MAX_ENTRY_CHARS (only asked for items
    whose lines are that long: the text is never longer than its lines)."""
    text, _ = _read_text_and_meta(entry_lines, marker)
    if len(text) > MAX_ENTRY_CHARS:
        raise _TooLong(
            f"this entry is {len(text):,} characters long, above the {MAX_ENTRY_CHARS:,} "
            "memcli reads; it is left out (not searched, listed or injected)"
        )


_MEMO: dict[tuple[str, ...], tuple[str, dict[str, str]]] = {}
_MEMO_LIMIT = 300_000


def _text_and_meta(entry_lines: list[str], marker: str) -> tuple[str, dict[str, str]]:
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


def _read_text_and_meta(entry_lines: list[str], marker: str) -> tuple[str, dict[str, str]]:
    """An item's text (continuation lines dedented) and its metadata comment, if any.
    Raises ValueError for malformed metadata or an empty item."""
    first = _strip_eol(entry_lines[0])[len(marker) :]
    meta: dict[str, str] = {}
    start, body = _trailing_comment(first)
    if body is not None:
        parsed = parse_meta(body)
        if parsed is not None:
            validate_meta(parsed)
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
    return text, meta


def _dominant_eol(lines: list[str]) -> str:
    crlf = sum(1 for x in lines if x.endswith("\r\n"))
    lf = sum(1 for x in lines if x.endswith("\n")) - crlf
    return "\r\n" if crlf > lf else "\n"
