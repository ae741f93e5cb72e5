"""Reading Claude Code's session transcripts (`transcript_path` of its hook JSON): one JSON
object per line, `type` user or assistant, `message.content` a string or content blocks.

What memcli keeps of them is what was said: text blocks of the main conversation; not
tool calls, tool results, thinking, sidechains (subagents), meta lines, compaction
summaries, command echoes or memory blocks a hook injected earlier. Two readers: the end
of a transcript (the recent turns a prompt's memory block is chosen for) and the complete
lines after a byte offset (the part `memcli hook stop` has not extracted yet).

Builtin modules only, as memcli.surfaces.hooks: a prompt waits for this process.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

#: text a host puts into user turns that the user did not say
NOT_SAID = (
    "<command-",
    "<local-command-",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "Caveat:",
    "This session is being continued from a previous conversation",
)


def tail_lines(path: str, size: int) -> list[str]:
    """The complete lines among the last `size` bytes of a file ([] if unreadable)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            end = handle.tell()
            start = max(0, end - size)
            handle.seek(start)
            data = handle.read(size)
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[1:] if start > 0 and lines else lines


def lines_after(path: str, offset: int) -> tuple[list[str], int, int]:
    """The complete lines after byte `offset`, and the byte span they were read from
    (start, end). A line still being written (no newline yet) waits for the next read; a
    file shorter than `offset` was rewritten and is read from its start."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        if handle.tell() < offset:
            offset = 0
        handle.seek(offset)
        data = handle.read()
    complete = data[: data.rfind(b"\n") + 1]
    return complete.decode("utf-8", "replace").splitlines(), offset, offset + len(complete)


def session_of(path: str, given: object) -> str:
    """The session id: the hook's `session_id`, else the transcript's file name (Claude
    Code names it <session id>.jsonl)."""
    if isinstance(given, str) and given.strip():
        return given
    return os.path.splitext(os.path.basename(path))[0]


def transcript_messages(lines: list[str]) -> list[dict[str, str]]:
    """{role, content} messages of transcript lines, only what was said (see above)."""
    messages = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = _loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
            continue
        if record.get("isSidechain") or record.get("isMeta") or record.get("isCompactSummary"):
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        text = said_text(message.get("content"))
        if text:
            messages.append({"role": record["type"], "content": text})
    return messages


def said_text(content: object) -> str:
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
    kept = []
    for part in parts:
        part = _without_memory_blocks(part).strip()
        if part and not part.startswith(NOT_SAID):
            kept.append(part)
    return "\n".join(kept)


def recent_turns(messages: list[dict[str, str]], max_turns: int) -> list[str]:
    """Seed 000's rule: the last `max_turns` user turns and the assistant replies between
    them, oldest first."""
    picked: list[str] = []
    users = 0
    for message in reversed(messages):
        picked.append(message["content"])
        if message["role"] == "user":
            users += 1
            if users >= max_turns:
                break
    return picked[::-1]


def _without_memory_blocks(text: str) -> str:
    while "<memory>" in text:
        start = text.index("<memory>")
        end = text.find("</memory>", start)
        text = text[:start] + (text[end + len("</memory>") :] if end >= 0 else "")
    return text


def _loads(text: str) -> Any:
    """json.loads without importing json (memcli.core.text.loads)."""
    from memcli.core.text import loads

    return loads(text)
