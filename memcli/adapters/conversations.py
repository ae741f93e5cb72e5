"""Reading conversations people bring (`memcli import --conversation FILE`): OpenAI-style
message lists, ChatGPT's `conversations.json` export and LoCoMo-style JSON, each turned
into an ordered list of turns (speaker, text, time). Pure: no I/O beyond the text given.

Formats, detected from the JSON's shape:
- OpenAI messages: `[{"role": "user", "content": "..."}, ...]` or `{"messages": [...]}`;
  content as a string or a list of `{"type": "text", "text": ...}` parts; an optional
  `created` / `timestamp` / `create_time` per message.
- ChatGPT export: a list of `{"title", "create_time", "mapping": {id: {"message",
  "parent", "children"}}, "current_node"}`; the branch that ends at `current_node` is
  the conversation (edited-away branches are left out).
- LoCoMo: `{"sample_id", "conversation": {"speaker_a", "session_1": [{"speaker",
  "dia_id", "text", "blip_caption"?}], "session_1_date_time": "1:56 pm on 8 May,
  2023", ...}}`, or a list of them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any

from memcli.adapters.messages import message_text, too_deep
from memcli.core.errors import ValidationError


@dataclass(frozen=True)
class Turn:
    """One turn: who spoke, what they said, when (None: unknown), its id in the source
    (a LoCoMo dia_id, a ChatGPT message id) and the session it belongs to."""

    speaker: str
    text: str
    created: dt.datetime | None = None
    source_id: str = ""
    session: str = ""


@dataclass(frozen=True)
class Conversation:
    """An ordered log of turns with the name it is filed under."""

    name: str
    title: str
    turns: list[Turn] = field(default_factory=list)


def parse_conversations(text: str, source: str) -> list[Conversation]:
    """Conversations in `text` (the content of the file named `source`); ValidationError
    naming the file and what is wrong when it holds none."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise too_deep(source, text) from None
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{source}: line {exc.lineno}: not JSON ({exc.msg})",
            hint="--conversation reads OpenAI-style messages, ChatGPT's conversations.json "
            "or LoCoMo-style JSON",
        ) from None
    stem = _slug(re.sub(r"\.json$", "", source.rsplit("/", 1)[-1])) or "conversation"
    try:
        found = _conversations(data, stem)
    except _Malformed as exc:
        raise ValidationError(
            f"{source}: {exc}; nothing was imported",
            hint="the file is not an export as ChatGPT or LoCoMo write it",
        ) from None
    found = [c for c in found if c.turns]
    if not found:
        raise ValidationError(
            f"{source}: no conversation turns found",
            hint="expected a list of {role, content} messages, ChatGPT's conversations.json "
            "or LoCoMo-style {conversation: {session_1: [...]}}",
        )
    return found


class _Malformed(ValueError):
    """A part of a recognised format that is not what the format holds there."""


def _conversations(data: Any, stem: str) -> list[Conversation]:
    if isinstance(data, dict) and isinstance(data.get("conversation"), dict):
        return [_locomo(data, stem)]
    if isinstance(data, dict) and isinstance(data.get("mapping"), dict):
        return [_chatgpt(data, stem)]
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        title = str(data.get("title") or stem)
        return [Conversation(_slug(title) or stem, title, _messages(data["messages"]))]
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        if all("role" in x for x in data):
            return [Conversation(stem, stem, _messages(data))]
        found: list[Conversation] = []
        for number, item in enumerate(data, 1):
            found += _conversations(item, f"{stem}-{number}")
        return _distinct(found)
    return []


def _messages(rows: list[Any]) -> list[Turn]:
    turns = []
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            continue
        text = _content(row.get("content"))
        role = str(row.get("role") or row.get("name") or "")
        if not text or role in ("system", "tool"):
            continue
        when = row.get("created") or row.get("timestamp") or row.get("create_time")
        turns.append(Turn(role, text, _time(when), str(row.get("id") or number)))
    return turns


def _chatgpt(data: dict, stem: str) -> Conversation:
    mapping: dict[str, Any] = data["mapping"]
    title = str(data.get("title") or stem)
    where = f"conversation {shown_title(title)!r}"
    for key, value in mapping.items():
        _check_node(key, value, where)
    node = data.get("current_node")
    if not (isinstance(node, str) and node in mapping):  # follow the last child from the root
        roots = [k for k, v in mapping.items() if not (v or {}).get("parent")]
        node = roots[0] if roots else None
        walked: set[str] = set()
        while node is not None and node in mapping and (mapping[node] or {}).get("children"):
            if node in walked:
                raise _Malformed(f"{where}: node {node!r}: its children lead back to it")
            walked.add(node)
            node = mapping[node]["children"][-1]
    chain = []
    seen: set[str] = set()
    while node is not None and node in mapping:
        if node in seen:
            raise _Malformed(f"{where}: node {node!r}: its parents lead back to it")
        seen.add(node)
        chain.append(mapping[node] or {})
        node = (mapping[node] or {}).get("parent")
    turns = []
    for item in reversed(chain):
        message = item.get("message") or {}
        role = str((message.get("author") or {}).get("role") or "")
        content = message.get("content") or {}
        text = _content(content.get("parts") if isinstance(content, dict) else content)
        if text and role in ("user", "assistant"):
            turns.append(
                Turn(role, text, _time(message.get("create_time")), str(message.get("id") or ""))
            )
    return Conversation(_slug(title) or stem, title, turns)


#: a ChatGPT node's fields: what each must be when present (None is allowed for all)
_NODE_FIELDS = {"message": dict, "parent": str, "children": list}


def _check_node(key: str, node: Any, where: str) -> None:
    """A ChatGPT mapping node as the export writes it, or _Malformed naming it."""
    if node is None:
        return
    if not isinstance(node, dict):
        raise _Malformed(f"{where}: node {key!r} is a {type(node).__name__}, not an object")
    for name, kind in _NODE_FIELDS.items():
        value = node.get(name)
        if value is not None and not isinstance(value, kind):
            raise _Malformed(
                f"{where}: node {key!r}: {name!r} is a {type(value).__name__}, "
                f"not {'a list' if kind is list else 'an object' if kind is dict else 'an id'}"
            )
    if any(not isinstance(child, str) for child in node.get("children") or []):
        raise _Malformed(f"{where}: node {key!r}: a child is not an id")
    message = node.get("message") or {}
    for name in ("author", "content"):
        value = message.get(name)
        if value is not None and not isinstance(value, dict | str | list):
            raise _Malformed(f"{where}: node {key!r}: message {name!r} is not an object")
    if not isinstance(message.get("author") or {}, dict):
        raise _Malformed(f"{where}: node {key!r}: message 'author' is not an object")


def _locomo(data: dict, stem: str) -> Conversation:
    conversation = data["conversation"]
    keys = sorted(
        (k for k in conversation if re.fullmatch(r"session_\d+", k)),
        key=lambda k: int(k.split("_")[1]),
    )
    turns = []
    for key in keys:
        when = _locomo_time(str(conversation.get(f"{key}_date_time", "")))
        if not isinstance(conversation[key] or [], list):
            raise _Malformed(f"{key} is a {type(conversation[key]).__name__}, not a list of turns")
        for row in conversation[key] or []:
            if not isinstance(row, dict):
                continue
            text = " ".join(str(row.get("text", "")).split())
            if row.get("blip_caption"):
                text += f" [shared a photo: {' '.join(str(row['blip_caption']).split())}]"
            if text:
                turns.append(
                    Turn(str(row.get("speaker", "")), text, when, str(row.get("dia_id", "")), key)
                )
    name = str(data.get("sample_id") or stem)
    return Conversation(_slug(name) or stem, name, turns)


def _content(value: Any) -> str:
    """A message's text (a string or text parts; blank parts left out), stripped."""
    if isinstance(value, list):  # ChatGPT's parts are often [""] or hold blank ones
        value = [p for p in value if message_text({"content": [p]}).strip()]
    return message_text({"content": value}).strip()


def _time(value: Any) -> dt.datetime | None:
    """A POSIX timestamp (ChatGPT) or an ISO 8601 string, as UTC; None otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return dt.datetime.fromtimestamp(float(value), dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        try:
            moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return None


def _locomo_time(text: str) -> dt.datetime | None:
    """'1:56 pm on 8 May, 2023' -> that time (UTC: the data names no zone)."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return dt.datetime.strptime(text.strip(), fmt).replace(tzinfo=dt.UTC)
        except ValueError:
            continue
    return None


#: the characters of a conversation's title a message shows (a title may be any length)
TITLE_SHOWN = 80


def shown_title(title: str) -> str:
    """A conversation's title as a line of output or an error shows it: one line, at
    most TITLE_SHOWN characters (the log file keeps it whole)."""
    line = " ".join(title.split())
    return line if len(line) <= TITLE_SHOWN else line[: TITLE_SHOWN - 1] + "…"


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:60].strip("-")


def _distinct(found: list[Conversation]) -> list[Conversation]:
    """Names made unique (a second "untitled" becomes "untitled-2")."""
    seen: dict[str, int] = {}
    result = []
    for conversation in found:
        count = seen.get(conversation.name, 0) + 1
        seen[conversation.name] = count
        name = conversation.name if count == 1 else f"{conversation.name}-{count}"
        result.append(Conversation(name, conversation.title, conversation.turns))
    return result
