"""`memcli review`: what an agent asked for that waits for a person (memcli.core.review).

`waiting` lists the entries with a `review=` request; `confirm` applies what they asked
for (the type, importance or pin) and makes them the person's (`by=person`), or archives
an entry an agent asked to forget; `reject` puts the person's version of an entry a
program rewrote back in its place, archives any other entry a program wrote and drops
the requests on the person's own (archived entries: `memcli restore`). `agent_forget`:
an agent's forget, at once for what a program wrote, else a request that waits.
`rewrite`: an entry a program rewrites (extract's UPDATE, an agent's edit: `agent_edit`)
becomes the program's, its standing (and the rewrite of the person's entry) held for
review.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memcli.core.errors import NotFoundError, ValidationError
from memcli.core.models import (
    ARCHIVE_FILE,
    BY_KEY,
    MACHINE_WRITERS,
    Entry,
    fmt_unit,
    format_time,
    utc_now,
)
from memcli.core.review import (
    REVIEW_KEY,
    Held,
    agent_may_forget,
    held_of,
    is_pending,
    rewritten,
)
from memcli.core.validate import check_meta_value
from memcli.services import edits
from memcli.services.archive import archive_superseded, as_it_was, forget
from memcli.services.edits import Changes
from memcli.services.entries import find, live_entries
from memcli.services.runtime import Runtime, operation
from memcli.store.markdown import Document


@dataclass(frozen=True)
class Outcome:
    """An entry a review or an agent's forget dealt with: `archived`, or still in its file
    (as it is now); `restored`: the person's version of a program's rewrite, back."""

    entry: Entry
    archived: bool
    restored: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "archived": self.archived, "restored": self.restored}


@dataclass(frozen=True)
class Waiting:
    """An entry that waits for a person, and (a program's rewrite of the person's entry)
    the person's version in archive.md that a reject puts back."""

    entry: Entry
    was: Entry | None = None

    def to_dict(self) -> dict[str, Any]:
        row = {**self.entry.to_dict(), "asked": held_of(self.entry).describe()}
        if self.was is not None:
            row["was"] = {"id": self.was.id, "text": self.was.text}
        return row


def waiting(rt: Runtime) -> list[Waiting]:
    """The entries whose agent's requests wait for a person, in file order, each with the
    person's version of a rewrite (when archive.md still holds it)."""
    found = [e for e in live_entries(rt) if is_pending(e)]
    if not any(held_of(e).rewrite for e in found):
        return [Waiting(e) for e in found]
    archive = rt.require().load(ARCHIVE_FILE)
    return [Waiting(e, _version(archive, e)) for e in found]


def _version(archive: Document, entry: Entry) -> Entry | None:
    """The person's version of an entry a program rewrote, if archive.md still holds it."""
    copy_id = held_of(entry).rewrite
    found = archive.find(copy_id) if copy_id else None
    return found.entry if found is not None else None


def chosen(rt: Runtime, ids: Sequence[str], every: bool) -> list[Entry]:
    """The entries a review acts on: `ids` that wait, or every one (`every`); a
    ValidationError naming what is wrong, before anything is written."""
    if every == bool(ids):
        raise ValidationError(
            "give the ids to review or --all, not both" if every else "give an id or --all",
            hint="`memcli review` lists what waits",
        )
    if every:
        return [w.entry for w in waiting(rt)]
    chosen = []
    for entry_id in ids:
        entry = find(rt, entry_id)
        if not is_pending(entry):
            raise ValidationError(
                f"{entry.id} ({entry.file}:{entry.line}) does not wait for review; "
                "nothing was changed",
                hint="`memcli review` lists what waits",
            )
        chosen.append(entry)
    return chosen


@operation("review confirm")
def confirm(rt: Runtime, ids: Sequence[str] = (), *, every: bool = False) -> list[Outcome]:
    """Apply what each entry's agent asked for and mark it as the person's, or archive an
    entry an agent asked to forget; returns the entries as they are now (as they were,
    when archived)."""
    done = []
    now = format_time(utc_now())
    for entry in chosen(rt, ids, every):
        held = held_of(entry)
        if held.forget:
            why = "forgotten by an agent, confirmed in review"
            done.append(Outcome(forget(rt, entry.id, reason=why), True))
            continue
        meta = dict(entry.meta)
        meta.pop(REVIEW_KEY, None)
        meta["id"] = entry.id
        if held.importance is not None:
            meta["imp"] = fmt_unit(held.importance)
        if held.pin:
            meta["pin"] = "true"
        meta[BY_KEY] = "person"
        meta["updated"] = now
        new = replace(entry, type=held.type or entry.type, meta=meta, id_explicit=True)
        done.append(Outcome(_rewrite(rt, entry, new), False))
    return done


@operation("forget")
def agent_forget(rt: Runtime, entry_id: str, *, reason: str | None = None) -> Outcome:
    """An agent's forget (MCP forget_memory, `Memory.forget`): what a program wrote and
    nobody confirmed is archived at once ("forgotten by an agent", with `reason`); an
    entry the person stands behind stays as it is, with `forget` in its `review=` for the
    person to confirm (memcli.core.review.agent_may_forget)."""
    if reason is not None and not reason.strip():
        raise ValidationError("the reason is empty", hint="say why, or leave it out")
    why = "forgotten by an agent" + (f": {reason.strip()}" if reason else "")
    check_meta_value("reason", why)
    entry = find(rt, entry_id)
    if agent_may_forget(entry):
        return Outcome(forget(rt, entry.id, reason=why), True)
    meta = {**entry.meta, "id": entry.id}
    meta[REVIEW_KEY] = held_of(entry).union(Held(forget=True)).format()
    return Outcome(_rewrite(rt, entry, replace(entry, meta=meta, id_explicit=True)), False)


@operation("edit")
def agent_edit(rt: Runtime, entry_id: str, changes: Changes, *, by: str = "agent") -> Entry:
    """An agent's edit (`Memory.edit`; `by`: the program). What a program wrote and
    nobody confirmed changes at once, as the program's (a pin or an importance ≥ 0.9 it
    asks for waits in `review=`). An entry the person stands behind (hand-written, added,
    confirmed, pinned: memcli.core.review.agent_may_forget) is rewritten as extract
    rewrites it (`rewrite`): the new version is the program's and waits in `memcli
    review`, the person's in archive.md (`reject` puts it back, `confirm` accepts the
    new one). An edit that only asks for what waits anyway (a pin, an importance ≥ 0.9
    above the entry's) changes nothing of the person's: the entry stays theirs, with
    the request in `review=`."""
    if by not in MACHINE_WRITERS:
        raise ValidationError(
            f"by={by!r} is not a program's name ({', '.join(sorted(MACHINE_WRITERS))}); "
            "nothing was changed",
            hint='a person\'s edit is by="person" (Memory.edit), as `memcli edit`',
        )
    changes = changes.checked()
    entry = find(rt, entry_id)
    if agent_may_forget(entry):
        return edits.edit(rt, entry.id, changes, by=by)
    now = format_time(utc_now())
    asked, _ = changes.split(entry)
    if _same(asked.applied(entry, now), entry):  # a request alone: nothing rewritten
        return edits.edit(rt, entry.id, changes, by=None)
    wanted = changes.applied(entry, now)
    return rewrite(rt, entry, wanted.text, importance=None, source=None, by=by, wanted=wanted)


def _same(new: Entry, old: Entry) -> bool:
    """`new` has `old`'s text and metadata (its stamped id and `updated` aside)."""

    def kept(entry: Entry) -> dict[str, str]:
        return {k: v for k, v in entry.meta.items() if k not in ("id", "updated")}

    return new.text == old.text and kept(new) == kept(old)


def rewrite(
    rt: Runtime,
    entry: Entry,
    text: str,
    *,
    importance: float | None,
    source: str | None,
    by: str,
    wanted: Entry | None = None,
) -> Entry:
    """`entry` with the text a program (`by`) wrote for it (extract's UPDATE), asking for
    `importance`, or as the program wants it (`wanted`, an agent's edit: its text and
    metadata): the old version goes to archive.md first (superseded), the entry is now
    the program's, and its correction type, pin and importance ≥ 0.9 wait for a person
    (memcli.core.review.rewritten) — `confirm` gives them back, `reject` the person's
    version."""
    from memcli.logic.keywords import recomputed_keywords

    superseded = archive_superseded(rt, entry)  # first: never in neither place
    entry_type, kept, held = rewritten(entry, importance, superseded, wanted)
    base = entry if wanted is None else wanted
    meta = {k: v for k, v in base.meta.items() if k not in ("imp", "pin", REVIEW_KEY)}
    meta["id"] = entry.id
    if kept is not None:
        meta["imp"] = fmt_unit(kept)
    kws = None if wanted is not None else recomputed_keywords(entry.keywords, entry.text, text)
    if kws:
        meta["kw"] = ",".join(kws)
    elif kws is not None:
        meta.pop("kw", None)
    if source:
        meta["src"] = source
    meta["updated"] = format_time(utc_now())
    meta[BY_KEY] = by
    if held:
        meta[REVIEW_KEY] = held.format()
    new = replace(base, text=text, type=entry_type, meta=meta, id_explicit=True)
    return _rewrite(rt, entry, new)


def _rewrite(rt: Runtime, old: Entry, new: Entry, target: str | None = None) -> Entry:
    """`old` replaced by `new`, moved to the section (and file) of its new type, or to
    `target`."""
    if target is None:
        target = rt.store.files.file_for_type(new.type) if new.type != old.type else old.file

    def missing() -> NotFoundError:
        return NotFoundError(
            f"entry {old.id} changed or disappeared in {old.file} during the review",
            hint="run `memcli review` and try again",
        )

    if target == old.file:

        def change(doc: Document) -> Entry:
            if not _unchanged(doc, old):  # a person's edit since it was read stays
                raise missing()
            if new.type == old.type:
                return doc.replace_entry(old.id, new)
            doc.remove_entry(old.id)
            return doc.insert_entry(replace(new, file=target))

        return rt.store.update(old.file, change)

    def check(doc: Document) -> None:
        if not _unchanged(doc, old):
            raise missing()

    def insert(doc: Document) -> Entry:  # first: never in neither file
        found = doc.find(old.id)
        return found.entry if found else doc.insert_entry(replace(new, file=target))

    def remove(doc: Document) -> None:
        if _unchanged(doc, old):  # else a person's edit meanwhile: both kept
            doc.remove_entry(old.id)

    rt.store.update(old.file, check)
    written = rt.store.update(target, insert)
    rt.store.update(old.file, remove)
    return written


def _unchanged(doc: Document, old: Entry) -> bool:
    """`doc` still holds `old` as it was read (its text, type and metadata): a review or
    an agent's forget never writes over what a person edited after that."""
    found = doc.find(old.id)
    if found is None:
        return False
    now = found.entry
    return (now.text, now.type, now.meta) == (old.text, old.type, old.meta)


@operation("review reject")
def reject(
    rt: Runtime, ids: Sequence[str] = (), *, every: bool = False, reason: str | None = None
) -> list[Outcome]:
    """Put the person's version of an entry a program rewrote back in its place (the
    program's text archived); archive each other entry a program wrote (restorable) with
    the reason; an entry the person stands behind stays as it is, without the requests
    (a no to what the agent asked of it). Returns the archived ones as they were, the
    others as they are now."""
    why = "rejected in review" + (f": {reason.strip()}" if reason and reason.strip() else "")
    done = []
    for entry in chosen(rt, ids, every):
        back = _take_back(rt, entry, why)
        if back is not None:
            done.append(Outcome(back, False, True))
            continue
        if entry.provenance == "machine":
            done.append(Outcome(forget(rt, entry.id, reason=why), True))
            continue
        meta = {k: v for k, v in entry.meta.items() if k != REVIEW_KEY}
        meta["id"] = entry.id
        kept = _rewrite(rt, entry, replace(entry, meta=meta, id_explicit=True))
        done.append(Outcome(kept, False))
    return done


def _take_back(rt: Runtime, entry: Entry, why: str) -> Entry | None:
    """The person's version of `entry`, which a program rewrote, back in its place: its
    text, type, importance and pin, under the entry's id; the program's text goes to
    archive.md (`why`, restorable) first, the person's copy leaves it last, so a crash
    leaves a copy in two places, never in none. None when the entry is no rewrite of the
    person's, or its copy is no longer in archive.md (restored or deleted)."""
    was = _version(rt.require().load(ARCHIVE_FILE), entry)
    if was is None:
        return None
    old = as_it_was(rt, was)
    back = replace(old, id=entry.id, meta={**old.meta, "id": entry.id})
    program = replace(entry, meta={k: v for k, v in entry.meta.items() if k != REVIEW_KEY})
    archive_superseded(rt, program, reason=why)
    written = _rewrite(rt, entry, back, target=back.file)
    rt.store.update(ARCHIVE_FILE, lambda doc: doc.find(was.id) and doc.remove_entry(was.id))
    return written
