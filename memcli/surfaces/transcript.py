"""Reading Claude Code's session transcripts (`transcript_path` of its hook JSON): one JSON
object per line, `type` user or assistant, `message.content` a string or content blocks.

What memcli keeps of them is what was said: text blocks of the main conversation; not
tool calls, tool results, thinking, sidechains (subagents), meta lines, compaction
summaries, command echoes or memory blocks a hook injected earlier. Two readers: the end
of a transcript (the recent turns a prompt's memory block is chosen for) and the complete
lines after a byte offset (the part `memcli hook stop` has not extracted yet).

What a hook is handed is read defensively: only a regular file (a FIFO or a device is
refused at once, never waited on), in chunks, and a line longer than MAX_LINE_BYTES (the
16 MB of any transcript memcli reads; MEMCLI_MAX_TRANSCRIPT_LINE_MB sets another) or
one that is not JSON (nested too deeply included) is skipped: the reading goes past it
and `Skipped.note()` says where, once.

Builtin modules only, as memcli.surfaces.hooks: a prompt waits for this process.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

#: the longest line read (memcli.core.validate.MAX_INPUT_BYTES, the limit of every
#: transcript memcli reads); MEMCLI_MAX_TRANSCRIPT_LINE_MB sets another
MAX_LINE_BYTES = 16 * 2**20
LINE_LIMIT_ENV = "MEMCLI_MAX_TRANSCRIPT_LINE_MB"
CHUNK_BYTES = 1 << 20


class NotRegularFile(OSError):
    """The transcript path names a FIFO, a device, a directory: nothing to read."""


class Skipped:
    """The lines of one transcript a reading left out, for one note on stderr."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.places: list[tuple[str, str]] = []  # (where, why)
        self.refused = ""  # why the whole file was not read

    def add(self, where: str, why: str) -> None:
        self.places.append((where, why))

    def note(self) -> str:
        """'' when nothing was skipped; else one line naming the first line skipped."""
        if self.refused:
            return f"memcli: {self.refused}"
        if not self.places:
            return ""
        where, why = self.places[0]
        more = len(self.places) - 1
        return f"memcli: {self.path}:{where}: skipped a line {why}" + (
            f" (and {more} more line{'s' * (more > 1)})" if more else ""
        )

#: text a host puts into user turns that the user did not say
NOT_SAID = (
    "<command-",
    "<local-command-",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
    "Caveat:",
    "This session is being continued from a previous conversation",
)


def max_line_bytes(env: Mapping[str, str] | None = None) -> int:
    """MAX_LINE_BYTES, or MEMCLI_MAX_TRANSCRIPT_LINE_MB where set to a positive number."""
    raw = (os.environ if env is None else env).get(LINE_LIMIT_ENV, "").strip()
    try:
        value = float(raw) if raw else 0.0
    except ValueError:
        value = 0.0
    return int(value * 2**20) if value > 0 and value * 2**20 >= 1 else MAX_LINE_BYTES


def open_regular(path: str) -> int:
    """A descriptor of `path` opened without waiting (O_NONBLOCK: a FIFO without a
    writer would block); NotRegularFile when it is not a regular file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or (
            stat.S_ISBLK(mode)
        ) else "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise NotRegularFile(f"{path}: {kind}, not a transcript file; it was not read")
    return fd


def tail_lines(path: str, size: int) -> list[str]:
    """The complete lines among the last `size` bytes of a file ([] if unreadable)."""
    return [text or "" for _, text in tail_reading(path, size).lines]


def tail_reading(path: str, size: int) -> Reading:
    """The lines among the last `size` bytes of a file (the first, cut, left out), each
    named by the byte it starts at; nothing when it cannot be read or is not a regular
    file (said in `skipped`)."""
    reading = Reading(path, 0, None)
    try:
        fd = open_regular(path)
    except NotRegularFile as exc:
        reading.skipped.refused = str(exc)
        return reading
    except OSError:
        return reading
    try:
        end = os.fstat(fd).st_size
        start = max(0, end - size)
        data = os.pread(fd, size, start)
    except OSError:
        return reading
    finally:
        os.close(fd)
    reading.start, reading.end = start, start + len(data)
    offset = start
    for number, raw in enumerate(data.split(b"\n")):
        if raw and not (number == 0 and start > 0):
            text = raw.decode("utf-8", "replace").rstrip("\r")
            reading.lines.append((f"byte {offset}", text))
        offset += len(raw) + 1
    return reading


def lines_after(path: str, offset: int) -> tuple[list[str], int, int]:
    """The complete lines after byte `offset`, and the byte span they were read from
    (start, end). A line still being written (no newline yet) waits for the next read; a
    file shorter than `offset` was rewritten and is read from its start. (A line longer
    than max_line_bytes() comes back as ''; `read_after` says which.)"""
    reading = read_after(path, offset)
    return [line or "" for _, line in reading.lines], reading.start, reading.end


class Reading:
    """Lines of a transcript: (where: a line number or `byte N`, text or None when too
    long) each, the byte span read, the line number reached, what was skipped."""

    def __init__(self, path: str, start: int, line: int | None) -> None:
        self.lines: list[tuple[str, str | None]] = []
        self.start = self.end = start
        self.line = line
        self.skipped = Skipped(path)


def read_after(
    path: str, offset: int, line: int | None = None, limit: int | None = None
) -> Reading:
    """The complete lines after byte `offset` (line number `line` there, None: unknown),
    read in chunks: at most `limit` (max_line_bytes()) bytes of a line are ever held; a
    longer one is passed over and named in `skipped`. Raises OSError (NotRegularFile)."""
    limit = max_line_bytes() if limit is None else limit
    fd = open_regular(path)
    try:
        if os.fstat(fd).st_size < offset:
            offset, line = 0, 1  # rewritten: from its start
        reading = Reading(path, offset, line if offset else 1)
        for start, end, data in _complete_lines(fd, offset, limit):
            number = reading.line
            where = f"{number}" if number else f"byte {start}"
            if data is None:
                size = f"{limit // 2**20} MB" if limit >= 2**20 else f"{limit} bytes"
                reading.skipped.add(where, f"longer than {size}")
                reading.lines.append((where, None))
            else:
                reading.lines.append((where, data.decode("utf-8", "replace").rstrip("\r")))
            reading.end = end
            reading.line = number + 1 if number else None
    finally:
        os.close(fd)
    return reading


def _complete_lines(fd: int, offset: int, limit: int) -> Iterator[tuple[int, int, bytes | None]]:
    """(start, end after the newline, bytes or None when over `limit`) of each complete
    line from `offset`; a line without its newline yet is not given."""
    line_start = offset
    parts: list[bytes] = []
    size = 0
    skipping = False
    while True:
        data = os.pread(fd, CHUNK_BYTES, offset)
        if not data:
            return
        pos = 0
        while True:
            newline = data.find(b"\n", pos)
            piece = data[pos:] if newline < 0 else data[pos:newline]
            if not skipping and size + len(piece) > limit:
                skipping, parts = True, []
            elif not skipping:
                parts.append(piece)
                size += len(piece)
            if newline < 0:
                break
            end = offset + newline + 1
            yield line_start, end, None if skipping else b"".join(parts)
            line_start, parts, size, skipping = end, [], 0, False
            pos = newline + 1
        offset += len(data)


def session_of(path: str, given: object) -> str:
    """The session id: the hook's `session_id`, else the transcript's file name (Claude
    Code names it <session id>.jsonl)."""
    if isinstance(given, str) and given.strip():
        return given
    return os.path.splitext(os.path.basename(path))[0]


def transcript_messages(
    lines: list[str], skipped: Skipped | None = None, places: list[str] | None = None
) -> list[dict[str, str]]:
    """{role, content} messages of transcript lines, only what was said (see above). A
    line that is not JSON (nested too deeply included) is left out, and named in
    `skipped` by its place in `places` (or its number in `lines`)."""
    messages = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = _loads(line)
        except (ValueError, RecursionError) as exc:
            if skipped is not None:
                where = places[index] if places is not None else str(index + 1)
                why = "nested too deeply" if isinstance(exc, RecursionError) else "not JSON"
                skipped.add(where, f"that is {why}")
            continue
        message = _said(record)
        if message:
            messages.append(message)
    return messages


def reading_messages(reading: Reading) -> list[dict[str, str]]:
    """The messages of a reading, its unreadable lines added to its `skipped`."""
    kept = [(where, text) for where, text in reading.lines if text is not None]
    return transcript_messages(
        [text for _, text in kept], reading.skipped, [where for where, _ in kept]
    )


def _said(record: Any) -> dict[str, str] | None:
    if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
        return None
    if record.get("isSidechain") or record.get("isMeta") or record.get("isCompactSummary"):
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    text = said_text(message.get("content"))
    return {"role": record["type"], "content": text} if text else None


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
    """json.loads without importing json (memcli.surfaces.protocol.loads)."""
    from memcli.surfaces.protocol import loads

    return loads(text)
