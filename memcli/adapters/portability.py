"""Bringing memory in and taking it out: `memcli export` and `memcli import`.

Export writes the entries as JSON Lines (every field), as plain Markdown (sections by
type, no metadata) or in mem0's export shape. Import reads JSON Lines, mem0's JSON
export, a Markdown list (a CLAUDE.md, a MEMORY.md, any bulleted list; `##` headings give
the type) or ChatGPT's memories as people copy them out (one per line, or its numbered
"Model Set Context" form `1. [2024-05-02]. Prefers …`, the date kept) into `ImportItem`s, which
`Memory.import_items` adds through the same path as `add` (an exact duplicate updates
the entry it repeats). Pure: no file or workspace access here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memcli.adapters.messages import too_deep
from memcli.core.errors import ValidationError
from memcli.core.models import KNOWN_TYPES, Entry
from memcli.core.registry import BUILTIN, Registry
from memcli.core.validate import check_created

EXPORT_FORMATS = ("jsonl", "markdown", "mem0")
IMPORT_FORMATS = ("auto", "jsonl", "mem0", "markdown", "chatgpt")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?P<text>\S.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$")
_COMMENT = re.compile(r"\s*<!--.*?-->\s*$")
#: ChatGPT's numbered memory lines: "1. [2024-05-02]. The user prefers …"
_CHATGPT = re.compile(
    r"^\s*(?:\d+[.)]\s*)?(?:\[(?P<date>\d{4}-\d{2}-\d{2})\]\.?\s*)?(?:[-*•]\s+)?(?P<text>\S.*?)\s*$"
)
_CHATGPT_DATED = re.compile(r"^\s*\d+[.)]\s*\[\d{4}-\d{2}-\d{2}\]")


@dataclass(frozen=True)
class ImportItem:
    text: str
    type: str = "fact"
    importance: float | None = None
    created: str | None = None  # the date the source gave (checked: `check_created`)
    #: what was wrong with it and how it was taken instead (a date that lies ahead)
    problem: str | None = None


def _dated(text: str, given: object, where: str, **kept: Any) -> ImportItem:
    """An item with the date its source gave, when that is a date in the past; a date
    that lies ahead (a clock set wrong where it was exported) is left out, the item
    imported as of today and the problem named: one such line never fails an import.
    A value that is no date at all is refused (ValidationError naming `where`)."""
    try:
        return ImportItem(text, created=check_created(given, where), **kept)
    except ValidationError:
        if not _ahead(given):
            raise
    problem = f"{where}: its date {given!r} lies ahead; imported as of today"
    return ImportItem(text, created=None, problem=problem, **kept)


def _ahead(value: object) -> bool:
    """Whether `value` is a date (or date-time) after today."""
    from memcli.core.models import parse_time, utc_now

    try:
        return isinstance(value, str) and parse_time(value) > utc_now()
    except ValueError:
        return False


# ---------------------------------------------------------------------- export


def export_entries(entries: list[Entry], fmt: str, files: Registry = BUILTIN) -> str:
    """The entries in format `fmt` (jsonl, markdown or mem0); `files`: the workspace's
    registry (the headings of its types)."""
    if fmt == "jsonl":
        return "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in entries)
    if fmt == "mem0":
        results = [
            {
                "id": e.id,
                "memory": e.text,
                "created_at": e.meta.get("created"),
                "updated_at": e.meta.get("updated"),
                "metadata": {"type": e.type, "importance": e.importance, "source": e.source},
            }
            for e in entries
        ]
        return json.dumps({"results": results}, ensure_ascii=False, indent=2) + "\n"
    if fmt == "markdown":
        out: list[str] = []
        for entry_type in dict.fromkeys(e.type for e in entries):
            out.append(f"## {files.section_title(entry_type)}\n")
            for e in entries:
                if e.type == entry_type:
                    first, *rest = e.text.split("\n")
                    out.append(f"- {first}\n")
                    out.extend(f"  {line}\n" if line.strip() else "\n" for line in rest)
            out.append("\n")
        return "".join(out)
    raise ValidationError(f"--format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")


# ---------------------------------------------------------------------- import


def parse_import(
    text: str, name: str, fmt: str = "auto", files: Registry = BUILTIN
) -> list[ImportItem]:
    """The memories in `text` (the content of file `name`); a type the workspace's
    registry (`files`) does not know is imported as a fact."""
    if fmt == "auto":
        fmt = detect_format(text, name)
    if fmt == "jsonl":
        return [_item(json_line(line, name, n), f"{name}:{n}", files)
                for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if fmt == "mem0":
        try:
            data = json.loads(text)
        except RecursionError:
            raise too_deep(name, text) from None
        except ValueError as exc:
            raise ValidationError(f"{name}: not JSON ({exc})") from None
        rows = data
        if isinstance(data, dict):
            rows = data.get("results", data.get("memories"))
        if not isinstance(rows, list):
            raise ValidationError(f"{name}: expected a list of memories, or {{\"results\": [...]}}")
        return [_item(row, f"{name}: item {n}", files) for n, row in enumerate(rows, 1)]
    if fmt == "markdown":
        items = _markdown_items(text, files)
        if items or _is_document(text):
            return items
        fmt = "chatgpt"  # no list at all: one memory per line, as ChatGPT's are copied
    if fmt == "chatgpt":
        if text.lstrip().startswith(("[", "{")):  # JSON is never one memory per line
            raise ValidationError(
                f"{name}: --format chatgpt reads ChatGPT's memories as copied out, one per "
                "line, and this file is JSON",
                hint="ChatGPT's conversations.json: `memcli import FILE` (its statements go "
                "through extract) or `--conversation`; a mem0 or JSONL export: --format mem0 "
                "or jsonl",
            )
        return _chatgpt_items(text, name)
    raise ValidationError(f"--format {fmt!r}: use one of {', '.join(IMPORT_FORMATS)}")


def _is_document(text: str) -> bool:
    """Whether a file read as Markdown is really a document rather than a pasted list of
    lines: it has headings or code (its prose is not memories)."""
    return any(
        _HEADING.match(line) or line.lstrip().startswith("```") for line in text.splitlines()
    )


def _chatgpt_items(text: str, name: str) -> list[ImportItem]:
    """One memory per non-empty line, less its number, date and bullet."""
    items = []
    for n, line in enumerate(text.splitlines(), 1):
        found = _CHATGPT.match(line)
        if found and found.group("text").strip():
            items.append(_dated(found.group("text").strip(), found.group("date"), f"{name}:{n}"))
    return items


def json_line(line: str, name: str, number: int) -> Any:
    try:
        return json.loads(line)
    except RecursionError:
        raise too_deep(name, line, number) from None
    except ValueError as exc:
        raise ValidationError(f"{name}:{number}: not a JSON line ({exc})") from None


#: detect_format's answer for conversations (ChatGPT's conversations.json and the like):
#: their user messages go through extract, not through `add` one by one
CONVERSATIONS = "conversations"


def conversation_kind(text: str) -> str | None:
    """What kind of conversation file `text` is ("a ChatGPT export", "chat messages",
    "a LoCoMo conversation"), or None when it is not one (or not JSON at all)."""
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    if all(isinstance(x.get("mapping"), dict) for x in items):
        return "a ChatGPT export"
    if all("role" in x for x in items) or all(isinstance(x.get("messages"), list) for x in items):
        return "chat messages"
    if all(isinstance(x.get("conversation"), dict) for x in items):
        return "a LoCoMo conversation"
    return None


def detect_format(text: str, name: str) -> str:
    """jsonl, mem0, conversations (CONVERSATIONS: conversation_kind), chatgpt (dated
    numbered lines) or markdown, from the file's name and text."""
    lowered = name.lower()
    if lowered.endswith(".jsonl"):
        return "jsonl"
    if conversation_kind(text):
        return CONVERSATIONS
    if lowered.endswith(".json"):
        return "mem0"
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" in stripped:
        return "jsonl"
    if stripped.startswith(("[", "{")):
        return "mem0"
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and sum(bool(_CHATGPT_DATED.match(line)) for line in lines) * 2 > len(lines):
        return "chatgpt"
    return "markdown"


def _item(row: Any, where: str, files: Registry = BUILTIN) -> ImportItem:
    """One memory of a JSONL line or mem0 item (`where` names it in errors)."""
    if isinstance(row, str):
        return ImportItem(row.strip())
    if not isinstance(row, dict):
        raise ValidationError(f"{where}: neither text nor an object")
    text = row.get("text") or row.get("memory") or row.get("content")
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{where}: no text (text, memory or content)")
    meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    entry_type = str(row.get("type") or meta.get("type") or "fact")
    entry_type = entry_type if entry_type in (*KNOWN_TYPES, *files.types) else "fact"
    importance = row.get("importance", meta.get("importance"))
    if importance is not None and not isinstance(importance, int | float):
        importance = None
    if importance is not None and not 0 <= importance <= 1:
        raise ValidationError(f"{where}: importance {importance!r} is not between 0 and 1")
    created = row.get("created", row.get("created_at", meta.get("created")))
    return _dated(text.strip(), created, where, type=entry_type, importance=importance)


def _markdown_items(text: str, files: Registry = BUILTIN) -> list[ImportItem]:
    """Top-level bullets (their indented lines joined), typed by the heading above."""
    items: list[ImportItem] = []
    current_type = "fact"
    lines: list[str] = []
    in_fence = False
    fence_indent = 0

    def flush() -> None:
        if lines:
            items.append(ImportItem("\n".join(lines).strip(), current_type))
            lines.clear()

    for raw in text.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            fence_indent = len(raw) - len(raw.lstrip())
            if lines:
                lines.append(raw.strip())
            continue
        if in_fence:  # kept as written, less the fence's own indent
            if lines:
                cut = fence_indent if raw[:fence_indent].isspace() else 0
                lines.append(raw[cut:].rstrip())
            continue
        heading = _HEADING.match(raw)
        if heading:
            flush()
            found = files.heading_type(heading.group("title"))  # "## Code style": no type
            current_type = found if found in (*KNOWN_TYPES, *files.types) else "fact"
            continue
        bullet = _BULLET.match(raw)
        if bullet:
            flush()
            lines.append(_COMMENT.sub("", bullet.group("text")).strip())
        elif lines and raw.startswith((" ", "\t")) and raw.strip():
            lines.append(raw.strip())
        else:
            flush()
    flush()
    return [i for i in items if i.text]
