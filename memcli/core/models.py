"""Plain data: entries, types and the metadata keys they carry. No I/O here."""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

from memcli.core.names import ARCHIVE_FILE as ARCHIVE_FILE  # re-exported names
from memcli.core.names import BUILTIN_FILES
from memcli.core.names import CONFIG_FILE as CONFIG_FILE
from memcli.core.names import CONVERSATIONS_DIR as CONVERSATIONS_DIR
from memcli.core.names import EPISODES_DIR as EPISODES_DIR
from memcli.core.names import SEQUENCE_DIRS as SEQUENCE_DIRS

#: built-in type -> (the built-in file it lives in, section heading used when memcli
#: creates the section); which file a type goes to in a workspace is its registry's
#: (memcli.core.registry.Registry.file_for_type)
KNOWN_TYPES: dict[str, tuple[str, str]] = {
    entry_type: (name, heading)
    for name, _, _, _, sections, _ in BUILTIN_FILES
    for entry_type, heading in sections
}

#: heading text (case-folded) -> type
HEADING_TYPES: dict[str, str] = {
    "preferences": "preference",
    "preference": "preference",
    "user preferences": "preference",
    "facts": "fact",
    "fact": "fact",
    "known facts": "fact",
    "patterns": "pattern",
    "pattern": "pattern",
    "reflections": "reflection",
    "reflection": "reflection",
    "corrections": "correction",
    "correction": "correction",
    "skills": "skill",
    "skill": "skill",
    "lessons": "lesson",
    "lesson": "lesson",
    "episodes": "episode",
}


#: metadata key naming who wrote an entry (docs/maintenance.md, Who wrote what):
#: `by=person` (`memcli add` or `memcli edit` on the command line), `by=extract`,
#: `by=agent` (MCP or the Python API), `by=compress` (a merged or consolidated entry),
#: `by=reflect`
BY_KEY = "by"
#: the metadata key that pins an entry (Entry.pinned)
PIN_KEY = "pin"
#: `by=` values of entries a program wrote
MACHINE_WRITERS = frozenset(["extract", "agent", "compress"])


def is_sequence_file(name: str) -> bool:
    """True for a workspace-relative file that is an ordered log (an episode file or an
    imported conversation): its entries follow each other in time, so a search may let
    an entry borrow relevance from the ones next to it. The curated files and
    archive.md are not: adjacency there means nothing."""
    head, _, rest = name.replace("\\", "/").partition("/")
    return bool(rest) and head in SEQUENCE_DIRS

DEFAULT_IMPORTANCE = 0.5
DEFAULT_CONFIDENCE = 1.0

_ID_RE = re.compile(r"^[\w.:-]{1,64}$")


def is_valid_id(value: str) -> bool:
    """True when `value` is usable as an entry id (letters, digits, `_ . : -`)."""
    return bool(_ID_RE.match(value))


#: hex digits of a minted id: 48 random bits, so two machines adding to one workspace in
#: git (merged by id) do not pick the same id (28 bits: a 1-in-3 chance at 10k each)
NEW_ID_HEX = 12


def new_id(existing: Sequence[Entry], prefix: str) -> str:
    """A fresh random id not used by any of `existing`."""
    taken = {e.id for e in existing}
    while True:
        candidate = prefix + os.urandom(NEW_ID_HEX // 2).hex()
        if candidate not in taken and is_valid_id(candidate):
            return candidate


def unit_value(raw: str | None, default: float) -> float:
    """An importance or confidence as read from metadata; `default` when it is missing or
    is not a number from 0 to 1 (a hand-written "imp=high", reported by the parser)."""
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if 0.0 <= value <= 1.0 else default


def fmt_unit(value: float) -> str:
    """An importance or confidence as written in metadata: `0.8`, `1`, `0`."""
    return f"{float(value):.2f}".rstrip("0").rstrip(".") if value not in (0, 1) else str(int(value))


def heading_type(title: str) -> str:
    """The entry type a `##` heading gives: a known name, else the heading's slug."""
    key = " ".join(title.strip().casefold().split())
    if key in HEADING_TYPES:
        return HEADING_TYPES[key]
    return slugify(title) or "fact"


def slugify(text: str) -> str:
    """Lower-case words joined by `-`; keeps CJK and other letters."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[^\w]+", "-", text).strip("-_")


def normalize_text(text: str) -> str:
    """Text as compared for exact duplicates: NFKC, case-folded, spaces collapsed, end
    punctuation dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = " ".join(text.split())
    return text.rstrip(" .!?。！？;；,，")


def section_title(entry_type: str) -> str:
    """The heading memcli writes when it has to create a section for this type."""
    if entry_type in KNOWN_TYPES:
        return KNOWN_TYPES[entry_type][1]
    return entry_type.replace("-", " ").replace("_", " ").capitalize()


def utc_now() -> dt.datetime:
    """Now, in UTC, to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def format_time(moment: dt.datetime) -> str:
    """ISO-8601 with a Z suffix, as stored in metadata."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=65536)
def parse_time(value: str) -> dt.datetime:
    """Parse a date or date-time from metadata or a flag. Naive values are taken as UTC.

    Raises ValueError with a readable message.
    """
    raw = value.strip()
    if not raw:
        raise ValueError("empty date")
    try:
        if len(raw) == 10:
            moment = dt.datetime.combine(dt.date.fromisoformat(raw), dt.time())
        else:
            moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{value!r} is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment


class cached:  # noqa: N801 - used as functools.cached_property is
    """functools.cached_property without its lock: Python 3.11's takes an RLock on every
    first read, five times the work of the small properties of an entry (a cold inject
    reads a few of them for each of 10k entries: ≈ 25 ms). Two threads reading one at
    once compute the same value twice, which is harmless here."""

    def __init__(self, func: Callable[[Entry], object]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Entry | None, owner: type | None = None) -> object:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


@dataclass(frozen=True)
class Entry:
    """One memory entry as read from a Markdown file.

    `meta` holds every metadata key in file order as strings (unknown keys included);
    the properties below read the known ones with their defaults.
    """

    id: str
    text: str
    type: str
    file: str
    line: int
    meta: dict[str, str] = field(default_factory=dict)
    id_explicit: bool = False

    @cached
    def importance(self) -> float:
        return unit_value(self.meta.get("imp"), DEFAULT_IMPORTANCE)

    @cached
    def confidence(self) -> float:
        return unit_value(self.meta.get("conf"), DEFAULT_CONFIDENCE)

    @cached
    def keywords(self) -> list[str]:
        raw = self.meta.get("kw", "")
        return [k.strip() for k in raw.split(",") if k.strip()]

    @cached
    def source(self) -> str | None:
        return self.meta.get("src") or None

    @cached
    def pinned(self) -> bool:
        return self.meta.get(PIN_KEY, "").lower() in ("1", "true", "yes")

    @cached
    def created(self) -> dt.datetime | None:
        raw = self.meta.get("created")
        return parse_time(raw) if raw else None

    @cached
    def updated(self) -> dt.datetime | None:
        raw = self.meta.get("updated")
        return parse_time(raw) if raw else None

    @cached
    def expires(self) -> dt.datetime | None:
        raw = self.meta.get("expires")
        return parse_time(raw) if raw else None

    @cached
    def provenance(self) -> str:
        """Who wrote the entry (docs/maintenance.md): "reflection" (reflect), "episode" (`log`,
        episodes/), "conversation" (a turn of an imported conversation, conversations/:
        a record compress never merges, supersedes or fades), "person"
        (`by=person`: added or edited on the command line),
        "machine" (`by=extract|agent|compress`, or no `by=` but `src=` set: an older
        extract or agent write), else "hand" (written in the file)."""
        by = self.meta.get(BY_KEY, "")
        if self.type == "reflection" or by == "reflect":
            return "reflection"
        if self.type == "episode" or self.file.startswith(f"{EPISODES_DIR}/"):
            return "episode"
        if self.file.startswith(f"{CONVERSATIONS_DIR}/"):
            return "conversation"
        if by == "person":
            return "person"
        if by in MACHINE_WRITERS or (not by and self.meta.get("src")):
            return "machine"
        return "hand"

    @property
    def confirmed(self) -> bool:
        """A person stands behind it: written by hand, added or edited by a person (which
        includes raising its importance), or pinned."""
        return self.pinned or self.provenance in ("hand", "person")

    @classmethod
    def from_row(cls, row: tuple) -> Entry:
        """An Entry of the fields in order (id, text, type, file, line, meta, id_explicit),
        without the dataclass __init__ (the index's entry snapshot, a reparse)."""
        entry = object.__new__(cls)
        entry.__dict__.update(zip(_FIELDS, row, strict=True))
        return entry

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view, used by --json output and the API."""
        return {
            "id": self.id,
            "text": self.text,
            "type": self.type,
            "file": self.file,
            "line": self.line,
            "importance": self.importance,
            "confidence": self.confidence,
            "keywords": self.keywords,
            "created": self.meta.get("created"),
            "updated": self.meta.get("updated"),
            "source": self.source,
            "pinned": self.pinned,
            "provenance": self.provenance,
            "meta": dict(self.meta),
        }


_FIELDS = ("id", "text", "type", "file", "line", "meta", "id_explicit")


def column(entries: Sequence[Entry], name: str) -> Sequence:
    """Field `name` of each of `entries`, in order: from the columns of the index's
    entry snapshot (memcli.index.snapshot.Snapshot) without making an Entry of each,
    when the entries are one (not for `meta`)."""
    of = getattr(entries, "column", None)
    if of is not None:
        return of(name)
    return list(map(attrgetter(name), entries))
