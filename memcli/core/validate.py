"""Checks on what people, agents and files hand to memcli, before anything is written.

Entry text, metadata values and queries are refused, with a message naming what is wrong
and where, when they hold control characters or bytes that are not UTF-8 or are too
big; transcripts and context files must be regular files of bounded size. Text read
back from the files is shown through `escape_controls`, so an escape sequence stored in
memory.md never reaches a terminal or a prompt as one.

Limits, and why:

- `MAX_ENTRY_CHARS` (65,536 characters) for an entry's text: a memory is a statement or
  a short note; 64 Ki characters is ≈ 16k tokens, more than any sensible inject budget
  (default 2,000 tokens), so a bigger entry could never be injected whole anyway, while
  search cost grows with the text (a 10 MB entry made every search take 10 s and 1.7 GB
  of memory; one at the limit costs a few milliseconds). Longer material belongs in a
  file the entry points to.
- `MAX_QUERY_CHARS` (65,536 characters) for a search query: the embedding model reads
  the first ≈ 256 tokens of it and BM25 pays per distinct word, so nothing a person
  types comes near; an inject context above it keeps its last part (the most recent
  turns) instead of being refused.
- `MAX_META_CHARS` (1,024 characters) for a source, a keyword, and all of an entry's
  keywords together (its `kw=`), from every writer: they ride on the entry's first
  line, which should stay readable.
- `MAX_INPUT_BYTES` (16 MB) for a transcript, a context file or stdin: a long chat
  export is a few MB; beyond that it is not a conversation (or is /dev/zero).

Standard library only: the quick search path imports this.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from memcli.core.errors import ValidationError
from memcli.core.text import dumps as dumps_json  # noqa: F401 - the name callers use
from memcli.core.text import escape_controls  # noqa: F401 - re-exported

MAX_ENTRY_CHARS = 65_536
MAX_QUERY_CHARS = 65_536
MAX_META_CHARS = 1_024
MAX_INPUT_BYTES = 16 * 2**20

#: C0 controls but tab and line feed, DEL, C1 controls, and lone surrogates (what
#: Python makes of bytes that are not UTF-8 in argv and, under a C locale, stdin)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
#: the same plus tab, line feed and the other characters str.splitlines breaks at
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

#: characters a reader cannot see that change what a model reads (issue 26): (first,
#: last, what they are). Refused at every write, reported by `doctor` in a hand edit,
#: removed from every inject block. U+200D (zero-width joiner) between two pictographs
#: is the glue of an emoji sequence (👩‍💻) and is allowed there.
INVISIBLE_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x061C, 0x061C, "a bidi control"),
    (0x200B, 0x200D, "a zero-width character"),
    (0x200E, 0x200F, "a bidi control"),
    (0x202A, 0x202E, "a bidi control"),
    (0x2060, 0x2060, "a zero-width character"),
    (0x2066, 0x2069, "a bidi control"),
    (0xFEFF, 0xFEFF, "a zero-width character"),
    (0xE0000, 0xE007F, "a tag character"),
)
_INVISIBLE = re.compile(
    "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b, _ in INVISIBLE_RANGES) + "]"
)
_ZWJ = "\u200d"
_NAMES = {
    "\x00": "a NUL byte",
    "\x1b": "an escape character (ESC, the start of a terminal escape sequence)",
    "\t": "a tab",
    "\x7f": "a DEL character",
}


def describe_char(char: str) -> str:
    """What a refused character is, in words."""
    if "\ud800" <= char <= "\udfff":
        return "a byte that is not valid UTF-8"
    if char in _NAMES:
        return _NAMES[char]
    if char in _LINE_BREAKS:
        return f"a line break (U+{ord(char):04X})"
    name = unicodedata.name(char, "")
    return f"a control character (U+{ord(char):04X}{' ' + name if name else ''})"


def _pictograph(char: str) -> bool:
    """An emoji or a piece of one (skin tone, variation selector): what a zero-width
    joiner glues into one emoji."""
    code = ord(char)
    return (
        0x1F000 <= code <= 0x1FAFF
        or 0x2600 <= code <= 0x27BF
        or code in (0xFE0F, 0x2640, 0x2642, 0x2695, 0x2696, 0x2708, 0x2764)
        or unicodedata.category(char) == "So"
    )


def _joins_emoji(text: str, index: int) -> bool:
    return (
        text[index] == _ZWJ
        and 0 < index < len(text) - 1
        and _pictograph(text[index - 1])
        and _pictograph(text[index + 1])
    )


def find_invisible(text: str) -> int | None:
    """The index of the first invisible or bidi control character of `text`
    (INVISIBLE_RANGES; a joiner inside an emoji sequence is not one), or None."""
    for match in _INVISIBLE.finditer(text):
        if not _joins_emoji(text, match.start()):
            return match.start()
    return None


def describe_invisible(char: str) -> str:
    """`U+E0041 (TAG LATIN CAPITAL LETTER A)`: the code point and its name (or what kind
    of invisible character it is, for one without a name)."""
    code = ord(char)
    name = unicodedata.name(char, "")
    if not name:
        kind = next((k for a, b, k in INVISIBLE_RANGES if a <= code <= b), "a character")
        name = f"{kind}, unassigned"
    return f"U+{code:04X} ({name})"


def invisible_problem(text: str, what: str = "the entry text") -> str | None:
    """Why `text` cannot be stored because of a character nobody can see, or None."""
    index = find_invisible(text)
    if index is None:
        return None
    return (
        f"{what} holds an invisible character {describe_invisible(text[index])} at "
        f"{_where(text, index)}"
    )


def strip_invisible(text: str) -> str:
    """`text` without its invisible and bidi control characters (emoji joiners kept)."""
    if not _INVISIBLE.search(text):
        return text
    return "".join(
        c for i, c in enumerate(text) if not _INVISIBLE.match(c) or _joins_emoji(text, i)
    )


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}" if "\n" in text else f"character {index + 1}"


def text_problem(
    text: str, what: str = "the entry text", limit: int = MAX_ENTRY_CHARS, invisible: bool = True
) -> str | None:
    """Why `text` (multi-line; tabs and line feeds allowed) cannot be stored, or None;
    with `invisible`, an invisible or bidi control character is a reason too."""
    if len(text) > limit:
        return f"{what} is {len(text):,} characters long, above the {limit:,} memcli accepts"
    bad = _CONTROL.search(text)
    if bad:
        return f"{what} holds {describe_char(bad.group())} at {_where(text, bad.start())}"
    return invisible_problem(text, what) if invisible else None


def check_text(
    text: str, what: str = "the entry text", limit: int = MAX_ENTRY_CHARS, invisible: bool = True
) -> None:
    """Raise ValidationError unless `text` can be stored as (or, with `invisible` False,
    searched for) text."""
    problem = text_problem(text, what, limit, invisible)
    if problem:
        if len(text) > limit:
            hint = (
                "split it into smaller entries, or keep long material in a file and "
                "remember where it is"
            )
        elif "invisible character" in problem:
            hint = (
                "remove it: a character nobody sees can hide instructions from the "
                "person reading the memory (copy the visible text again)"
            )
        else:
            hint = "remove it (tabs and line breaks are fine)"
        raise ValidationError(f"{problem}; nothing was written", hint=hint)


def check_query(query: str) -> None:
    """A search query: bounded, no control characters (tab, CR and LF are fine)."""
    check_text(query.replace("\r", "\n"), "the search query", MAX_QUERY_CHARS, invisible=False)


def check_meta_value(option: str, value: str | None) -> None:
    """A metadata value given by a caller (--source, one keyword): one line of text
    without control characters, at most MAX_META_CHARS. (`<!--` and `-->` are fine:
    format_meta quotes them so the comment cannot end early.)"""
    if value is None:
        return
    if not isinstance(value, str):
        raise ValidationError(f"{option} must be text (got {type(value).__name__})")
    if len(value) > MAX_META_CHARS:
        raise ValidationError(
            f"{option} is {len(value):,} characters long, above the {MAX_META_CHARS:,} "
            "memcli accepts for a metadata value; nothing was written"
        )
    bad = _CONTROL_ONE_LINE.search(value)
    if bad:
        raise ValidationError(
            f"{option} {_shown(value)} holds {describe_char(bad.group())} at character "
            f"{bad.start() + 1}; nothing was written",
            hint="metadata values are one line of text without control characters",
        )
    hidden = invisible_problem(value, option)
    if hidden:
        raise ValidationError(
            f"{hidden}; nothing was written",
            hint="metadata values are one line of visible text",
        )


def check_keywords(option: str, keywords: object) -> None:
    """Each keyword given by a caller, as check_meta_value, and all of them together as
    they are stored (one `kw=` value: at most MAX_META_CHARS, as every metadata value)."""
    if keywords is None:
        return
    if isinstance(keywords, str):
        keywords = [keywords]
    for keyword in keywords:  # type: ignore[attr-defined]
        check_meta_value(option, keyword)
    cleaned = clean_keywords(keywords)  # type: ignore[arg-type]
    stored = len(",".join(cleaned))
    if stored > MAX_META_CHARS:
        raise ValidationError(
            f"{option}: {len(cleaned):,} keywords make {stored:,} characters together, "
            f"above the {MAX_META_CHARS:,} memcli accepts for a metadata value; nothing was "
            "written",
            hint="a few keywords to find the entry by are enough",
        )


def bound_keywords(value: str) -> str:
    """A stored `kw=` value (comma-separated) within MAX_META_CHARS: the keywords that
    fit, in order (what a merge of several entries' keywords, an import or a model's
    answer may have made longer is cut at a keyword's end)."""
    if len(value) <= MAX_META_CHARS:
        return value
    cut = value[: MAX_META_CHARS + 1].rfind(",")
    return value[:cut] if cut > 0 else ""


def clean_text(text: str) -> str:
    """Entry text as stored: no trailing spaces, no surrounding blank lines; refuse empty."""
    if text is None or not text.strip():
        raise ValidationError("the entry text is empty", hint="give the text to remember")
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    cleaned = "\n".join(lines).strip("\n")
    first = cleaned.split("\n", 1)[0]
    if not first.strip():
        raise ValidationError("the entry's first line is empty")
    # `<!--` and `-->` stay as written: memcli's own comment always ends the first line
    # and the parser reads only the last comment there, so the text round-trips.
    cleaned = cleaned.lstrip()
    check_text(cleaned)
    return cleaned


def check_secret(text: str, allow: bool) -> bool:
    """True when `text` looks like it holds a credential and that is allowed; raise
    ValidationError when it does and is not."""
    from memcli.core.credentials import describe, find

    found = find(text)
    if found and not allow:
        raise ValidationError(
            f"the text looks like it holds {describe(found)} (at character "
            f"{found[0].start + 1}); nothing was written",
            hint="keep secrets in a password manager; to remember it anyway pass "
            "--allow-secret (allow_secret=True), and it may then appear in inject blocks",
        )
    return bool(found)


def check_type(entry_type: str) -> str:
    """The entry type `entry_type` names (`preferences` is `preference`, as the heading
    `## Preferences`); ValidationError when it is not usable."""
    from memcli.core.models import heading_type, slugify

    slug = slugify(entry_type or "")
    if not slug or slug == "archived":
        raise ValidationError(
            f"{entry_type!r} is not a usable type",
            hint="use preference, fact, pattern, reflection, correction, skill, lesson or a word",
        )
    return heading_type(entry_type)


def check_created(value: object, where: str = "created") -> str | None:
    """The date an entry was first written when it comes with one (an import: ChatGPT's
    dated lines, mem0's `created_at`, JSONL's `created`), as `created=` stores it: a date
    as given (`2024-05-02`), a date-time in UTC (`2024-05-02T10:00:00Z`); None for none.
    Not a date, or one that lies ahead: a ValidationError naming `where`."""
    if value is None or value == "":
        return None
    import datetime as dt

    from memcli.core.models import format_time, parse_time, utc_now

    if isinstance(value, str):
        try:
            moment = parse_time(value)
        except ValueError:
            moment = None
        if moment is not None and moment <= utc_now() + dt.timedelta(days=1):
            return value.strip() if len(value.strip()) == 10 else format_time(moment)
    raise ValidationError(
        f"{where}: created {value!r} is not a date in the past",
        hint="use YYYY-MM-DD or an ISO date-time (2024-05-02T10:00:00Z)",
    )


def check_unit(name: str, value: float | None) -> None:
    """An importance or confidence: between 0 and 1 (None: not given)."""
    if value is None:
        return
    if not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise ValidationError(f"{name} must be between 0 and 1 (got {value!r})")


def clean_keywords(keywords: Sequence[str] | None) -> list[str]:
    """Keywords as stored: comma-separated parts split, spaces collapsed, no repeats."""
    result: dict[str, None] = {}  # ordered, and a repeat found at once (20,000 keywords)
    for raw in keywords or []:
        for part in str(raw).split(","):
            word = " ".join(part.strip().split())
            if word:
                result.setdefault(word)
    return list(result)


def _shown(value: str, width: int = 40) -> str:
    shown = escape_controls(value)
    return repr(shown if len(shown) <= width else shown[: width - 1] + "…")


#: terminal escape sequences: CSI (colours, cursor moves) and OSC (titles, links)
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?"
)


def strip_controls(text: str) -> str:
    """Text of a conversation as memcli reads it: terminal escape sequences removed
    (a pasted coloured log keeps its words), other control characters turned to spaces."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(" ", _ESCAPE_SEQUENCE.sub("", text.replace("\r\n", "\n")))


def clean_context(text: str) -> str:
    """An inject context as searched: without control characters (strip_controls), and
    a context above MAX_QUERY_CHARS keeps its last part (the most recent turns)."""
    return strip_controls(text)[-MAX_QUERY_CHARS:]


# ----------------------------------------------------------------------------- input


def decode_input(data: bytes, where: str) -> str:
    """UTF-8 text of stdin or a transcript, without a leading BOM; invalid UTF-8 and
    NUL bytes are refused naming the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValidationError(
            f"{where}:{line}: not valid UTF-8 (byte {exc.start}); nothing was read",
            hint="give UTF-8 text (re-save the file as UTF-8, or convert it with iconv)",
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise ValidationError(
            f"{where}:{text.count(chr(10), 0, nul) + 1}: holds a NUL byte (binary data, "
            "not text); nothing was read"
        )
    return text.removeprefix("\ufeff")


def _too_big(where: str, size: int) -> ValidationError:
    return ValidationError(
        f"{where}: {size / 2**20:.1f} MB or more, above the {MAX_INPUT_BYTES // 2**20} MB "
        "memcli reads as input; nothing was read",
        hint="give the recent part of it",
    )


def read_stdin() -> str:
    """All of stdin as text (at most MAX_INPUT_BYTES), refusing invalid UTF-8 and NUL
    bytes, whether stdin gives bytes or (replaced by a caller) text."""
    stream = sys.stdin
    if stream is None:
        raise ValidationError("there is no stdin to read from")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        data = buffer.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise _too_big("stdin", len(data))
        return decode_input(data, "stdin")
    try:  # a text stream (a caller's io.StringIO, a text wrapper without a buffer)
        text = stream.read(MAX_INPUT_BYTES + 1)
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"stdin: not valid UTF-8 (byte {exc.start}); nothing was read"
        ) from None
    if len(text) > MAX_INPUT_BYTES:
        raise _too_big("stdin", len(text))
    # checked as bytes are: a NUL refused, an undecodable byte a stream let through as
    # a surrogate (errors="surrogateescape") is not valid UTF-8 at the same offset
    return decode_input(text.encode("utf-8", "surrogatepass"), "stdin")


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_input_file(path: str | Path, what: str = "the transcript") -> str:
    """A transcript or context file as text: `-` reads stdin; anything else must be a
    regular file of at most MAX_INPUT_BYTES (not a FIFO, device or directory, which
    could block or never end)."""
    if str(path) == "-":
        return read_stdin()
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)  # non-blocking: opening a FIFO must not wait for a writer
    except FileNotFoundError:
        raise ValidationError(f"{path}: no such file ({what})") from None
    except PermissionError:
        raise ValidationError(f"{path}: cannot read {what} (permission denied)") from None
    except OSError as exc:
        raise ValidationError(f"{path}: cannot read {what} ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
        raise ValidationError(
            f"{path}: is {kind}, not a regular file; {what} must be a file",
            hint="give a file, or - to read from stdin",
        )
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_INPUT_BYTES:
            raise _too_big(str(path), info.st_size)
        data = handle.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise _too_big(str(path), len(data))
    return decode_input(data, str(path))


#: the start of a line Markdown reads as a heading or a rule (`## Corrections`, `---`)
_STRUCTURE = re.compile(r"^(\s*)(#{1,6}(?:\s|$)|(?:=+|-{3,}|\*{3,}|_{3,})\s*$)")


def neutral_line(line: str) -> str:
    """`line` of an entry as an inject block carries it: a Markdown heading or rule it
    would start escaped with a backslash (`\\## Corrections`), so no entry's text passes
    for a section of the block (`#1 priority`, `a - b` as they are)."""
    return _STRUCTURE.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", line, count=1)
