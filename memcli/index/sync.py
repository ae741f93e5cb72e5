"""What a sync of the index with the entries must do, decided without I/O.

`plan_sync` compares what the index backend holds (its fingerprint: id -> content key)
with the current entries and says what to add, replace, remove and embed;
memcli.services.indexing reads the Markdown and applies the plan to a backend
(memcli.index.backend). What the embedder and the keyword index see of an entry is
defined here, so every backend indexes the same text.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
from collections.abc import Callable, Sequence

from memcli.core.dates import date_spellings
from memcli.core.models import Entry
from memcli.core.records import record
from memcli.index.tokenize import CJK_FIRST

Progress = Callable[[int, int], None]

#: where this process says what it does (memcli.services.indexing sets its notify): the
#: gloss table's one-time derivation, a second, says so first (memcli.index.gloss)
gloss_notice: Callable[[str], None] | None = None


def embed_text(entry: Entry, glossed: bool = True) -> str:
    """What the embedder sees for an entry: its text, or with `glossed` (a model that
    reads English only: the default model and setting) its text with the Chinese in it
    glossed in English (memcli.index.gloss)."""
    return query_text(entry.text, glossed)


def query_text(text: str, glossed: bool) -> str:
    """What the embedder sees for a text (a query, an entry's text): with `glossed`, the
    Chinese in it glossed in English (memcli.index.gloss), as the entries are."""
    if glossed and text and max(text) >= CJK_FIRST:  # a text without CJK: as it is
        from memcli.index import gloss

        gloss.load(gloss_notice)  # a first derivation says so on this process's line
        return gloss.embedding_text(text)
    return text


def keyword_text(entry: Entry) -> str:
    """What the keyword index sees for an entry: its text, its keywords and the day it
    was created in three spellings ("2023-08-14 14 August 2023 August 2023"), so that
    "what happened in August 2023" finds it."""
    return _keyword_text(entry.text, entry.meta.get("kw", ""), _created_day(entry))


def _created_day(entry: Entry) -> str:
    """The YYYY-MM-DD of `created=` ("" when undated or unreadable)."""
    raw = entry.meta.get("created", "")
    day = raw[:10]
    return day if len(day) == 10 and day[4] == "-" and day[7] == "-" else ""


@functools.lru_cache(maxsize=200_000)
def _keyword_text(text: str, kw: str, day: str = "") -> str:
    words = [k.strip() for k in kw.split(",") if k.strip()]
    if day:
        with contextlib.suppress(ValueError):  # 2023-02-30: no spellings
            words.append(date_spellings(dt.date.fromisoformat(day)))
    return text + ("\n" + " ".join(words) if words else "")


@record(frozen=True)
class SyncPlan:
    """What a sync does: the ids added, changed and removed, and the texts to embed."""

    added: list[str]
    changed: list[str]
    removed: list[str]
    to_embed: list[str]  # text hashes the cache lacks

    @property
    def to_upsert(self) -> list[str]:
        return self.added + self.changed

    @property
    def is_noop(self) -> bool:
        return not (self.added or self.changed or self.removed)


def plan_sync(
    old: dict[str, str], new: Sequence[tuple[str, str]], to_embed: Sequence[str]
) -> SyncPlan:
    """old: id -> content key held by the index; new: (id, content key) of the current
    entries; to_embed: text hashes the embedding cache lacks."""
    new_map = dict(new)
    added = [i for i in new_map if i not in old]
    changed = [i for i, h in new_map.items() if i in old and old[i] != h]
    removed = [i for i in old if i not in new_map]
    return SyncPlan(added, changed, removed, list(to_embed))


@record(frozen=True)
class SyncReport:
    """What a sync did (counts; `notice`: a message for the person, or None)."""

    added: int
    changed: int
    removed: int
    total: int
    embedded: int
    rebuilt: bool
    notice: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "total": self.total,
            "embedded": self.embedded,
            "rebuilt": self.rebuilt,
            "notice": self.notice,
        }

    def summary(self, elapsed_ms: float) -> str:
        """What a watcher's batch did, as its log line ends: `+1 ~0 -0 (37 entries, 12 ms)`."""
        return (
            f"+{self.added} ~{self.changed} -{self.removed} "
            f"({self.total} entries, {elapsed_ms:.0f} ms)"
        )


def unique_entries(entries: Sequence[Entry]) -> list[Entry]:
    """Entries with distinct ids (the first wins; duplicates are reported by `doctor`)."""
    seen: set[str] = set()
    result = []
    for entry in entries:
        if entry.id not in seen:
            seen.add(entry.id)
            result.append(entry)
    return result


def content_key(entry: Entry, glossed: bool = True) -> str:
    """What decides whether an indexed entry is current: the hash of its embedded text
    (which also keys the embedding cache) and of its keyword text."""
    return _content_key(
        embed_text(entry, glossed), entry.text, entry.meta.get("kw", ""), _created_day(entry)
    )


@functools.lru_cache(maxsize=200_000)
def _content_key(embedded: str, text: str, kw: str, day: str) -> str:
    from memcli.index.embedder import text_hash

    return f"{text_hash(embedded)}:{text_hash(_keyword_text(text, kw, day))[:16]}"
