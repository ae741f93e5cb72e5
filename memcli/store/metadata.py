"""An entry's metadata and identity: the `<!-- key=value -->` comment that ends an item's
first line (read, checked, written), the ids of items without one (derived from their
text), and the lines memcli writes for an entry. Pure, no I/O."""

from __future__ import annotations

import hashlib
import re

from memcli.core.models import is_valid_id, parse_time
from memcli.core.registry import BUILTIN
from memcli.core.validate import bound_keywords

_TOKEN_RE = re.compile(r'\s*(?P<key>[A-Za-z_][\w-]*)=(?P<value>"(?:[^"\\]|\\.)*"|[^\s"]*)')
_NEEDS_QUOTES = re.compile(r'[\s"\\]|-->|<!--')
#: what str.splitlines breaks at: never written inside a metadata comment
_LINE_BREAKS = re.compile(r"[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def id_prefix_for(filename: str) -> str:
    """First letter of ids minted for entries of this file."""
    return BUILTIN.id_prefix(filename.replace("\\", "/"))


#: hex digits of a derived id: 64 bits, so that two lines of one workspace never share
#: an id by chance (28 bits gave 16 collisions per 100k lines) and matching a given line's
#: id takes 2^64 tries
DERIVED_ID_HEX = 16


def derived_id(prefix: str, text: str, occurrence: int = 0) -> str:
    """Stable id of a hand-written entry, from its text (and its occurrence number when
    the same text appears more than once in a file)."""
    payload = text if occurrence == 0 else f"{text}\x00{occurrence}"
    return prefix + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:DERIVED_ID_HEX]


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
    """Check the id and the dates; raises ValueError naming the key. (Importance and
    confidence: soft_meta_problem.)"""
    if "id" in meta and not is_valid_id(meta["id"]):
        raise ValueError(f"id={meta['id']!r} is not a valid id (letters, digits, _ . : -)")
    for key in ("created", "updated", "expires"):
        if key in meta:
            try:
                parse_time(meta[key])
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None


def soft_meta_problem(meta: dict[str, str]) -> str | None:
    """What is wrong with `imp=` / `conf=` (a hand-written "imp=high"), or None: such an
    entry is still read, with the default for that value, and its comment stays as written
    (Entry.importance / Entry.confidence read a bad value as the default)."""
    for key, label in (("imp", "importance"), ("conf", "confidence")):
        if key in meta:
            try:
                value = float(meta[key])
            except ValueError:
                return f"{key}={meta[key]!r}: {label} must be a number; read as the default"
            if not 0.0 <= value <= 1.0:
                return f"{key}={meta[key]}: {label} must be between 0 and 1; read as the default"
    return None


def format_meta(meta: dict[str, str]) -> str:
    """Serialize metadata as the inside of a comment: `key=value` pairs, `id` first.

    A value that holds spaces, quotes or a comment delimiter is quoted, with `-->` and
    `<!--` written as `--\\>` and `<\\!--` (parse_meta reads them back as they were), so
    no value can end the comment early or open another one. Values are one line (callers
    refuse line breaks, see memcli.core.validate); a line break that gets here anyway becomes
    a space rather than a new line of the file. `kw` keeps the keywords that fit in
    MAX_META_CHARS (memcli.core.validate.bound_keywords).
    """
    parts = []
    ordered = (["id"] if "id" in meta else []) + [k for k in meta if k != "id"]
    for key in ordered:
        value = _LINE_BREAKS.sub(" ", meta[key])
        if key == "kw":  # every writer's keywords (merged, imported, a model's) bounded
            value = bound_keywords(value)
            if not value:
                continue
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
