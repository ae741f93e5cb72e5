"""Chat transcripts: reading OpenAI-style JSON / JSONL or plain text (`user: …` /
`assistant: …` lines), and the recent-context rule (last 3 user turns plus
final assistant replies; tool traffic skipped)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from memcli.core.errors import ValidationError
from memcli.core.validate import read_input_file


def load_messages(path: Path | str, text: str | None = None) -> list[dict[str, Any]]:
    """Messages from a JSON list (or {"messages": [...]}) or JSONL file; `-` reads stdin.
    The file must be a regular file of at most validate.MAX_INPUT_BYTES."""
    if text is None:
        text = read_input_file(path, "the transcript")
    path = Path(path) if str(path) != "-" else Path("<stdin>")
    stripped = text.strip()
    if not stripped:
        raise ValidationError(f"{path}: the transcript is empty")
    messages: Any
    try:
        messages = json.loads(stripped)
    except RecursionError:
        raise too_deep(path, stripped) from None
    except json.JSONDecodeError as first_error:
        plain = plain_messages(stripped)
        if plain is not None:
            return plain
        messages = []
        for number, line in enumerate(stripped.splitlines(), 1):
            if not line.strip():
                continue
            try:
                messages.append(json.loads(line))
            except RecursionError:
                raise too_deep(path, line, number) from None
            except json.JSONDecodeError as exc:
                where = number if number > 1 else first_error.lineno
                raise ValidationError(
                    f"{path}:{where}: not JSON or JSONL ({exc.msg})",
                    hint="give a JSON list of {role, content} objects, one object per line, "
                    "or plain text with `user:` / `assistant:` at the start of each turn",
                ) from None
    if isinstance(messages, dict) and isinstance(messages.get("messages"), list):
        messages = messages["messages"]
    if isinstance(messages, dict):
        messages = [messages]
    if not isinstance(messages, list):
        raise ValidationError(f"{path}: expected a list of messages")
    for index, message in enumerate(messages, 1):
        if not isinstance(message, dict) or "role" not in message:
            raise ValidationError(
                f"{path}: message {index} has no 'role'",
                hint="each message needs role and content",
            )
    return messages


def too_deep(path: Path | str, text: str, first_line: int = 1) -> ValidationError:
    """The error for JSON nested deeper than Python parses (a RecursionError), naming
    the line where the nesting is deepest."""
    return ValidationError(
        f"{path}:{first_line + deepest_line(text) - 1}: JSON nested too deeply to read",
        hint="transcripts, conversations and exports are a few levels deep: this file is "
        "not one of them",
    )


def deepest_line(text: str) -> int:
    """The line (from 1) where the brackets of a JSON text first reach their deepest."""
    depth = deepest = 0
    line = where = 1
    in_string = escaped = False
    for char in text:
        if char == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        elif char in "]}":
            depth -= 1
    return where


#: a plain-text turn: `user: …`, `Assistant: …` (also human / ai / system)
_TURN = re.compile(r"^(?P<role>user|assistant|system|human|ai)\s*:\s?(?P<text>.*)$", re.IGNORECASE)
_ROLES = {"human": "user", "ai": "assistant"}


def plain_messages(text: str) -> list[dict[str, Any]] | None:
    """Messages of a plain-text transcript — each turn starts with `user:` or
    `assistant:` (or system / human / ai), further lines belong to it — or None when
    the text does not start with a turn."""
    messages: list[dict[str, Any]] = []
    for line in text.splitlines():
        turn = _TURN.match(line.strip())
        if turn:
            role = turn.group("role").lower()
            messages.append({"role": _ROLES.get(role, role), "content": turn.group("text")})
        elif messages:
            messages[-1]["content"] += "\n" + line
        elif line.strip():
            return None
    for message in messages:
        message["content"] = message["content"].strip()
    return messages or None


def message_text(message: dict[str, Any]) -> str:
    """The text of a message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""


def conversation_context(messages: list[dict[str, Any]], max_turns: int = 3) -> str:
    """Recent context: the last `max_turns` user messages and the final assistant replies
    between them; tool messages and assistant messages with tool calls are skipped."""
    parts: list[str] = []
    turns = 0
    for message in reversed(messages):
        role = message.get("role")
        if role in ("user", "human"):
            parts.append(message_text(message))
            turns += 1
            if turns >= max_turns:
                break
        elif role in ("assistant", "ai") and not message.get("tool_calls"):
            parts.append(message_text(message))
    return " ".join(p for p in reversed(parts) if p.strip())
