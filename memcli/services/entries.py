"""Entries one at a time: read (list, get, stats), add and log.

Each function takes the workspace's Runtime; input is checked (memcli.core.validate)
before anything is written, and every write goes through the store's guarded update,
so an entry that changed meanwhile is never overwritten blindly. Archiving and restoring
are memcli.services.archive; editing, memcli.services.edits; extract and import, which
add many entries, memcli.services.intake.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from memcli.core.errors import ConflictError, NotFoundError, ValidationError
from memcli.core.filters import filter_entries
from memcli.core.models import (
    ARCHIVE_FILE,
    BY_KEY,
    MACHINE_WRITERS,
    Entry,
    fmt_unit,
    format_time,
    new_id,
    normalize_text,
    utc_now,
)
from memcli.core.records import record
from memcli.core.requests import AddRequest, ListRequest
from memcli.core.review import (
    IMPORT_WRITER,
    Held,
    agent_may_forget,
    asking,
    beyond,
    hold,
)
from memcli.core.validate import (
    check_created,
    check_keywords,
    check_meta_value,
    check_secret,
    check_type,
    check_unit,
    clean_keywords,
    clean_text,
)
from memcli.logic.keywords import extract_keywords
from memcli.services.runtime import Runtime, operation
from memcli.store.access import Access
from memcli.store.markdown import Document, id_prefix_for


@record(frozen=True)
class AddResult:
    """What `add` did: `action` is "added" or "updated" (an existing duplicate)."""

    entry: Entry
    action: str

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "entry": self.entry.to_dict()}


@record(frozen=True)
class EntryDetail:
    """An entry with its access statistics (MCP get_memory_detail)."""

    entry: Entry
    access: Access

    def to_dict(self) -> dict[str, Any]:
        data = self.entry.to_dict()
        data["access_count"] = self.access.count
        data["last_accessed"] = self.access.last
        return data


# ---------------------------------------------------------------------- reading


def all_entries(rt: Runtime, include_archived: bool = False) -> list[Entry]:
    """Every entry of the workspace in file order (archive.md's too when asked)."""
    return rt.require().entries(include_archived)


def list_entries(rt: Runtime, request: ListRequest) -> list[Entry]:
    """Entries filtered by type, creation time, keyword and pin; in file order, or
    sorted by `created` / `updated` (newest first, undated last) or `importance`
    (highest first); at most `limit`."""
    sort = request.sort or "file"
    found = filter_entries(
        all_entries(rt, request.include_archived),
        types=request.types,
        since=request.since,
        until=request.until,
        keywords=request.keywords,
        synonyms=rt.settings.synonyms,
    )
    if request.pinned:
        found = [e for e in found if e.pinned]
    if sort in ("created", "updated"):
        oldest = dt.datetime.min.replace(tzinfo=dt.UTC)

        def moment(e: Entry) -> dt.datetime:
            when = (e.updated or e.created) if sort == "updated" else e.created
            return when or oldest

        found = sorted(found, key=moment, reverse=True)  # stable: file order in ties
    elif sort == "importance":
        found = sorted(found, key=lambda e: e.importance, reverse=True)
    elif sort != "file":
        raise ValidationError(
            f"unknown sort order {sort!r}", hint="file, created, updated or importance"
        )
    return found[: request.limit] if request.limit is not None else found


def find(rt: Runtime, entry_id: str, include_archived: bool = False) -> Entry:
    """The entry with this id (a live one before an archived copy); NotFoundError, or
    ConflictError when two live entries share the id."""
    entry_id = entry_id.strip()
    found = [e for e in all_entries(rt, include_archived) if e.id == entry_id]
    for _ in range(3):  # read mid-save? look again once quiet (an editor may save again)
        if found or not rt.require().settle():
            break
        found = [e for e in all_entries(rt, include_archived) if e.id == entry_id]
    live = [e for e in found if e.file != ARCHIVE_FILE]
    if len(live) > 1:
        raise ConflictError(
            f"id {entry_id} is used by {len(live)} entries: "
            + ", ".join(f"{e.file}:{e.line}" for e in live),
            hint="give one of them another id (edit its <!-- id=... --> comment)",
        )
    if found:
        return live[0] if live else found[0]
    where = rt.store.files.describe() + (" or archive.md" if include_archived else "")
    raise NotFoundError(
        f"no entry with id {entry_id!r} in {where} of {rt.root}",
        hint="`memcli list` shows the ids",
    )


def get(rt: Runtime, entry_id: str) -> EntryDetail:
    """An entry (archived ones too) with its access statistics."""
    entry = find(rt, entry_id, include_archived=True)
    return EntryDetail(entry, rt.access.get(entry.id))


def stats(rt: Runtime) -> dict[str, Any]:
    """Counts by type and by file, plus archive size."""
    entries = all_entries(rt)
    archived = rt.store.load(ARCHIVE_FILE).entries()
    return {
        "workspace": str(rt.root),
        "entries": len(entries),
        "by_type": dict(sorted(Counter(e.type for e in entries).items())),
        "by_file": dict(Counter(e.file for e in entries)),
        "archived": len(archived),
        "pinned": sum(1 for e in entries if e.pinned),
    }


def live_entries(rt: Runtime) -> list[Entry]:
    """Entries of the curated files and the logs (not archive.md), first of each id."""
    seen: dict[str, Entry] = {}
    for entry in all_entries(rt):
        seen.setdefault(entry.id, entry)
    return list(seen.values())


def id_maker(rt: Runtime) -> Callable[[str], str]:
    """file -> a fresh id (prefix of that file) not used anywhere in the workspace."""
    taken = all_entries(rt, include_archived=True)

    def make(file: str) -> str:
        entry_id = new_id(taken, id_prefix_for(file))
        taken.append(Entry(entry_id, "", "fact", file, 0))
        return entry_id

    return make


# ---------------------------------------------------------------------- writing


#: who may be named as the writer of an added entry (`AddRequest.by`)
ADD_WRITERS = frozenset({"person", IMPORT_WRITER, *MACHINE_WRITERS})


def add(rt: Runtime, request: AddRequest) -> AddResult:
    """Add an entry, or update the existing entry with the same normalized text
    (`add` as a surface means it, with the automatic reflect / compress, is
    memcli.services.intake.add)."""
    text = clean_text(request.text)
    entry_type = check_type(request.type)
    importance, confidence, source = request.importance, request.confidence, request.source
    pin, by = request.pin, request.by
    if by not in ADD_WRITERS:  # any other name would read back as written by hand
        raise ValidationError(
            f"by={by!r} is not a writer memcli knows ({', '.join(sorted(ADD_WRITERS))}); "
            "nothing was written",
            hint='a program\'s entry is by="agent" (the default), a person\'s by="person"',
        )
    check_unit("importance", importance)
    check_unit("confidence", confidence)
    check_meta_value("--source", source)
    check_keywords("--keywords", request.keywords)
    secret = check_secret(text, request.allow_secret)
    created = check_created(request.created)  # checked again: the API takes it too
    keywords = clean_keywords(request.keywords)
    store = rt.require()
    entry_type = store.files.heading_type(entry_type)  # `projects`: a declared `project`
    now = format_time(utc_now())
    wanted = normalize_text(text)
    auto_keywords = [] if keywords else extract_keywords(text)
    asked = (entry_type, importance, pin)
    held = Held()
    if by != "person":  # an agent's correction, pin or high importance waits for a person
        entry_type, importance, pin, held = hold(entry_type, importance, pin)

    def merged(entry: Entry) -> dict[str, str]:
        return repeat_meta(entry, asked, by, confidence, keywords, source, now, secret)

    for entry in store.entries():
        if normalize_text(entry.text) == wanted:
            return _merge_duplicate(rt, entry, merged)

    target = store.files.file_for_type(entry_type)
    entry_id = new_id(store.entries(include_archived=True), id_prefix_for(target))

    def change(doc: Document) -> AddResult:
        mine = doc.find(entry_id)
        if mine is not None:  # already written (the change is re-applied after a race)
            return AddResult(mine.entry, "added")
        for entry in doc.entries():  # a duplicate added meanwhile
            if normalize_text(entry.text) == wanted:
                return AddResult(
                    doc.replace_entry(entry.id, replace(entry, meta=merged(entry))), "updated"
                )
        meta: dict[str, str] = {"id": entry_id}
        if importance is not None:
            meta["imp"] = fmt_unit(importance)
        if confidence is not None:
            meta["conf"] = fmt_unit(confidence)
        meta["created"] = created or now
        if keywords or auto_keywords:
            meta["kw"] = ",".join(keywords or auto_keywords)
        if source:
            meta["src"] = source
        if pin:
            meta["pin"] = "true"
        if secret:
            meta["secret"] = "ok"
        # an import the person ran is theirs to keep (it never fades for age), but what
        # it asks to lead waits for review like an agent's
        meta[BY_KEY] = "person" if by == IMPORT_WRITER else by
        meta = asking(meta, held)
        entry = Entry(meta["id"], text, entry_type, target, 0, meta, True)
        return AddResult(doc.insert_entry(entry), "added")

    return store.update(target, change)


def _merge_duplicate(
    rt: Runtime, entry: Entry, merged: Callable[[Entry], dict[str, str]]
) -> AddResult:
    def change(doc: Document) -> AddResult:
        current = doc.find(entry.id)
        if current is None:
            raise NotFoundError(f"entry {entry.id} disappeared during the update; run again")
        return AddResult(
            doc.replace_entry(entry.id, replace(current.entry, meta=merged(current.entry))),
            "updated",
        )

    return rt.store.update(entry.file, change)


def repeat_meta(
    entry: Entry,
    asked: tuple[str, float | None, bool],
    by: str,
    confidence: float | None,
    keywords: list[str],
    source: str | None,
    now: str,
    secret: bool,
) -> dict[str, str]:
    """Metadata of an entry that `add` of the same text repeats. A repeat never changes
    who wrote the entry. A program repeating an entry the person stands behind
    (memcli.core.review.agent_may_forget) adds nothing to it unreviewed (no keywords, no
    `src=`, no importance): what it asks for that needs a person is held in `review=`,
    the rest is dropped. A program's own entry collects the repeat's sources and
    keywords. A person saying it again confirms it (`by=person`)."""
    entry_type, importance, pin = asked
    held = Held()
    if by != "person":
        _, importance, pin, wanted = hold(entry_type, importance, pin)
        held = beyond(entry, wanted)
        if not agent_may_forget(entry):  # the person's: only a request, in review=
            return asking({**entry.meta, "id": entry.id}, held, entry) if held else dict(entry.meta)
    meta = merged_meta(entry, importance, confidence, keywords, source, pin, now)
    if secret:
        meta["secret"] = "ok"
    if by == "person":
        meta[BY_KEY] = by
    return asking(meta, held, entry)


def merged_meta(
    entry: Entry,
    importance: float | None,
    confidence: float | None,
    keywords: list[str],
    source: str | None,
    pin: bool,
    now: str,
) -> dict[str, str]:
    """Metadata of an entry that a duplicate `add` merges into."""
    meta = dict(entry.meta)
    meta["id"] = entry.id
    if importance is not None and importance > entry.importance:
        meta["imp"] = fmt_unit(importance)
    if confidence is not None and confidence > entry.confidence:
        meta["conf"] = fmt_unit(confidence)
    kws = clean_keywords(entry.keywords + list(keywords))
    if kws:
        meta["kw"] = ",".join(kws)
    if source:
        sources = [s for s in (entry.source or "").split(",") if s]
        if source not in sources:
            sources.append(source)
        meta["src"] = ",".join(sources)
    if pin:
        meta["pin"] = "true"
    meta["updated"] = now
    return meta


@operation("log")
def log(
    rt: Runtime,
    text: str,
    *,
    importance: float | None = None,
    keywords: Sequence[str] | None = None,
    allow_secret: bool = False,
) -> Entry:
    """Append a timestamped note to today's episode file (episodes/YYYY-MM-DD.md)."""
    from memcli.core.models import EPISODES_DIR
    from memcli.store.markdown import parse

    text = clean_text(text)
    check_keywords("--keywords", keywords)
    secret = check_secret(text, allow_secret)
    check_unit("importance", importance)
    rt.require()
    now = utc_now()
    day = now.astimezone().date().isoformat()
    name = f"{EPISODES_DIR}/{day}.md"
    rt.store.make_folder(EPISODES_DIR)  # a link only where the rule allows
    entry_id = new_id(all_entries(rt, include_archived=True), id_prefix_for(name))
    meta = {"id": entry_id, "created": format_time(now)}
    if importance is not None:
        meta["imp"] = fmt_unit(importance)
    kws = clean_keywords(keywords) or extract_keywords(text)
    if kws:
        meta["kw"] = ",".join(kws)
    if secret:
        meta["secret"] = "ok"
    entry = Entry(entry_id, text, "episode", name, 0, meta, True)

    def append(doc: Document) -> Entry:
        if not doc.blocks:
            doc.blocks = parse(f"# {day}\n\n## Episodes\n", name).blocks
        found = doc.find(entry_id)
        return found.entry if found else doc.insert_entry(entry)

    return rt.store.update(name, append)
