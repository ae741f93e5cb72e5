"""`memcli review`: every write of a proposal (what an agent asked for, waiting beside
the person's words: memcli.core.review owns its representation).

`waiting` lists the proposals; `show` lists them for a person and records what it showed
(`.memcli/review-listing.json`: each proposal's fingerprint and fields); `confirm`
applies exactly the version listed (or named, `ID@FINGERPRINT`) and refuses, naming what
changed, a proposal that changed since; `reject` archives what a program wrote and drops
the requests on the person's own. `agent_forget`: an agent's forget, at once for what a
program wrote, else a proposal to archive. `rewrite` (extract's UPDATE, an agent's edit:
`agent_edit`): a program's own entry is rewritten in place; the person's entry stays as
it is, live, and the program's text waits beside it as a `rewrite:` proposal.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memcli.core.errors import ConflictError, MemcliError, NotFoundError, ValidationError
from memcli.core.models import (
    BY_KEY,
    MACHINE_WRITERS,
    Entry,
    fmt_unit,
    format_time,
    new_id,
    utc_now,
)
from memcli.core.review import (
    REVIEW_KEY,
    Held,
    Proposal,
    agent_may_forget,
    held_of,
    is_pending,
    program_wrote,
    proposal_of,
    standing,
    what_changed,
)
from memcli.core.validate import check_meta_value
from memcli.services import edits
from memcli.services.archive import archive_superseded, forget
from memcli.services.edits import Changes
from memcli.services.entries import all_entries, find, live_entries
from memcli.services.runtime import Runtime, operation
from memcli.store.markdown import Document, id_prefix_for

#: what `memcli review` showed last, in the workspace's .memcli folder
LISTING_FILE = "review-listing.json"


@dataclass(frozen=True)
class Outcome:
    """An entry a review or an agent's forget dealt with: `archived`, or still in its file
    (as it is now)."""

    entry: Entry
    archived: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "archived": self.archived}


def as_dict(p: Proposal) -> dict[str, Any]:
    """A proposal for --json: the entry holding it as it is, what it asks for, its
    fingerprint and kind, what a confirm applies, and (a rewrite) the person's entry it
    would replace (`was`)."""
    row = {
        **p.entry.to_dict(),
        "asked": p.asked.describe(),
        "fingerprint": p.fingerprint,
        "kind": p.kind,
        "applies": {"text": p.text, "type": p.type, "importance": p.importance, "pin": p.pin},
    }
    if p.target is not None:
        row["was"] = {"id": p.target.id, "text": p.target.text}
    return row


def waiting(rt: Runtime) -> list[Proposal]:
    """The proposals that wait for a person, in file order."""
    live = live_entries(rt)
    by_id = {e.id: e for e in live}
    return [proposal_of(e, by_id.get(held_of(e).rewrite or "")) for e in live if is_pending(e)]


def show(rt: Runtime) -> list[Proposal]:
    """The proposals, recorded as what the person was shown (a plain `confirm ID` and
    `confirm --all` confirm these versions, nothing newer). A workspace whose .memcli
    cannot be written (a read-only layer) keeps no record: `ID@FINGERPRINT` still works."""
    from memcli.store.atomic import atomic_write
    from memcli.store.readonly import read_only

    found = waiting(rt)
    if read_only(rt.root):  # the person made the layer read-only: nothing written there
        return found
    record = {"listed": {p.entry.id: p.fields() for p in found}}
    with contextlib.suppress(OSError, MemcliError):
        rt.store.state_dir.mkdir(exist_ok=True)
        atomic_write(rt.store.state_dir / LISTING_FILE, json.dumps(record, indent=1) + "\n")
    return found


def last_listing(rt: Runtime) -> dict[str, dict[str, Any]] | None:
    """What `show` recorded last (id -> the proposal's fields), None when nothing was."""
    try:
        raw = json.loads((rt.store.state_dir / LISTING_FILE).read_text(encoding="utf-8"))
        listed = raw["listed"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return listed if isinstance(listed, dict) else None


@dataclass(frozen=True)
class Pick:
    """A proposal a review acts on, and the version the person confirms (its listed
    fields, or only a fingerprint they named)."""

    proposal: Proposal
    expected: dict[str, Any]


def _proposal(rt: Runtime, entry: Entry) -> Proposal:
    target_id = held_of(entry).rewrite
    target = None
    if target_id:
        try:
            target = find(rt, target_id)
        except NotFoundError:
            target = None
    return proposal_of(entry, target)


def chosen(rt: Runtime, ids: Sequence[str], every: bool) -> list[Pick]:
    """The proposals a review acts on: `ids` (ID, or ID@FINGERPRINT) that wait, or every
    one the last listing showed that still waits (`every`); a ValidationError naming what
    is wrong, before anything is written."""
    if every == bool(ids):
        raise ValidationError(
            "give the ids to review or --all, not both" if every else "give an id or --all",
            hint="`memcli review` lists what waits",
        )
    listing = last_listing(rt)
    if every:
        if listing is None and not waiting(rt):
            return []
        if listing is None:
            raise ValidationError(
                f"nothing was listed in {rt.root}; --all confirms what `memcli review` "
                "showed; nothing was changed",
                hint="run `memcli review`, check what it lists, then --all",
            )
        pending = {p.entry.id: p for p in waiting(rt)}
        return [Pick(pending[i], fields) for i, fields in listing.items() if i in pending]
    picks = []
    for raw in ids:
        entry_id, _, given = raw.strip().partition("@")
        entry = find(rt, entry_id)
        if not is_pending(entry):
            raise ValidationError(
                f"{entry.id} ({entry.file}:{entry.line}) does not wait for review; "
                "nothing was changed",
                hint="`memcli review` lists what waits",
            )
        listed = (listing or {}).get(entry.id)
        if given and (listed is None or listed.get("fingerprint") != given.strip()):
            listed = {"fingerprint": given.strip()}
        if listed is None:
            raise ValidationError(
                f"{entry.id} was not in the last `memcli review` listing of {rt.root}, so "
                "which version you confirm is unknown; nothing was changed",
                hint=f"run `memcli review`, check it, then confirm {entry.id} "
                "(or ID@FINGERPRINT as listed)",
            )
        picks.append(Pick(_proposal(rt, entry), listed))
    return picks


def _versions_checked(picks: Sequence[Pick]) -> None:
    """ConflictError naming each proposal that changed since it was listed (and what
    changed) or whose rewrite target is gone; nothing is written then."""
    problems = []
    for pick in picks:
        p, listed = pick.proposal, pick.expected
        if p.fingerprint != listed.get("fingerprint"):
            changed = what_changed(listed, p) if len(listed) > 1 else []
            what = "; ".join(changed) or f"it is {p.entry.id}@{p.fingerprint} now"
            problems.append(
                f"{p.entry.id} changed since it was listed as "
                f"{p.entry.id}@{listed.get('fingerprint')} ({what})"
            )
        elif p.kind == "rewrite" and p.target is None:
            problems.append(
                f"{p.entry.id} rewrites entry {p.asked.rewrite}, which is gone "
                "(`memcli restore` brings it back; or reject the proposal)"
            )
    if problems:
        raise ConflictError(
            "; ".join(problems) + "; nothing was confirmed",
            hint="run `memcli review` to see what waits now, then confirm that",
        )


@operation("review confirm")
def confirm(rt: Runtime, ids: Sequence[str] = (), *, every: bool = False) -> list[Outcome]:
    """Apply exactly the version of each proposal the person was shown (memcli.core
    .review.fingerprint): its standing (type, importance, pin), its text in place of the
    person's entry it rewrites (theirs archived as superseded), or the archive of the
    entry; the entry is the person's then. Refuses, before anything is written, a
    proposal that changed since the listing. Returns the entries as they are now (as
    they were, when archived)."""
    picks = chosen(rt, ids, every)
    _versions_checked(picks)
    done = []
    now = format_time(utc_now())
    for pick in picks:
        p = pick.proposal
        entry = p.entry
        if p.kind == "archive":
            why = "forgotten by an agent, confirmed in review"
            done.append(Outcome(forget(rt, entry.id, reason=why), True))
            continue
        meta = {k: v for k, v in entry.meta.items() if k != REVIEW_KEY}
        meta["id"] = entry.id
        if p.asked.importance is not None:
            meta["imp"] = fmt_unit(p.importance)
        if p.pin:
            meta["pin"] = "true"
        meta[BY_KEY] = "person"
        meta["updated"] = now
        new = replace(entry, type=p.type, meta=meta, id_explicit=True)
        if p.target is None:
            done.append(Outcome(_rewrite(rt, entry, new), False))
            continue
        target = p.target  # the person's entry takes the proposal's text, under its id
        meta["id"] = target.id
        if "created" in target.meta:
            meta["created"] = target.meta["created"]
        archive_superseded(rt, target)  # first: the person's version is never lost
        written = _rewrite(rt, target, replace(new, id=target.id))
        _drop(rt, entry)
        done.append(Outcome(written, False))
    return done


def _drop(rt: Runtime, entry: Entry) -> None:
    """Remove a confirmed rewrite proposal from its file (unless it changed meanwhile)."""

    def remove(doc: Document) -> None:
        if _unchanged(doc, entry):
            doc.remove_entry(entry.id)

    rt.store.update(entry.file, remove)


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
    asks for waits in `review=`; a pending proposal edited is a new proposal: its
    fingerprint changes). An entry the person stands behind (hand-written, added,
    confirmed, pinned: memcli.core.review.agent_may_forget) stays as it is; the agent's
    version waits beside it as a proposal (`rewrite`). An edit that only asks for what
    waits anyway (a pin, an importance ≥ 0.9 above the entry's) is a request on the
    person's entry (`review=`), nothing of theirs changed. Returns the entry written."""
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


#: metadata of the person's entry a proposal for it does not carry over
_NOT_PROPOSED = ("id", "imp", "pin", REVIEW_KEY, BY_KEY, "updated", "created")


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
    """The text a program (`by`) wrote for `entry` (extract's UPDATE, asking for
    `importance`), or the program's version of it (`wanted`, an agent's edit: its text
    and metadata). A program's own entry (memcli.core.review.agent_may_forget) is
    rewritten in place, its old version archived as superseded. The person's entry stays
    as it is, live; the program's version waits beside it as a proposal (`review=
    rewrite:ID`, one per entry: a later rewrite replaces the program's earlier proposal,
    a new fingerprint). Either way its correction type, pin and importance ≥ 0.9 wait
    for a person (memcli.core.review.standing). Returns the entry written."""
    from memcli.logic.keywords import recomputed_keywords

    entry_type, kept, held = standing(entry, importance, wanted)
    base = entry if wanted is None else wanted
    kws = None if wanted is not None else recomputed_keywords(entry.keywords, entry.text, text)
    now = format_time(utc_now())

    def meta_of(drop: Sequence[str]) -> dict[str, str]:
        meta = {k: v for k, v in base.meta.items() if k not in drop}
        if kept is not None:
            meta["imp"] = fmt_unit(kept)
        if kws:
            meta["kw"] = ",".join(kws)
        elif kws is not None:
            meta.pop("kw", None)
        if source:
            meta["src"] = source
        meta["updated"] = now
        meta[BY_KEY] = by
        return meta

    if agent_may_forget(entry):  # the program's own entry
        archive_superseded(rt, entry)  # first: never in neither place
        held = held_of(entry).union(held)
        meta = {"id": entry.id, **meta_of(("id", "imp", "pin", REVIEW_KEY))}
        if held:
            meta[REVIEW_KEY] = held.format()
        new = replace(base, text=text, type=entry_type, meta=meta, id_explicit=True)
        return _rewrite(rt, entry, new)
    held = replace(held, rewrite=entry.id)
    earlier = [
        e for e in live_entries(rt) if held_of(e).rewrite == entry.id and program_wrote(e)
    ]
    meta = meta_of(_NOT_PROPOSED)
    meta[REVIEW_KEY] = held.format()
    if earlier:  # the program's earlier proposal for this entry: replaced
        old = earlier[0]
        meta = {"id": old.id, "created": old.meta.get("created", now), **meta}
        return _rewrite(rt, old, Entry(old.id, text, entry_type, old.file, 0, meta, True))
    target = rt.store.files.file_for_type(entry_type)
    proposal_id = new_id(all_entries(rt, include_archived=True), id_prefix_for(target))
    meta = {"id": proposal_id, "created": now, **meta}
    proposal = Entry(proposal_id, text, entry_type, target, 0, meta, True)

    def insert(doc: Document) -> Entry:
        found = doc.find(proposal_id)
        return found.entry if found else doc.insert_entry(proposal)

    return rt.store.update(target, insert)


def proposed(rt: Runtime, entry: Entry, text: str) -> Entry | None:
    """A program's proposal that waits with `text` (normalized) for `entry`, if any: a
    statement said again adds nothing to it (extract's second run over a conversation)."""
    from memcli.core.models import normalize_text

    wanted = normalize_text(text)
    for e in live_entries(rt):
        if held_of(e).rewrite == entry.id and normalize_text(e.text) == wanted:
            return e
    return None


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
    """Archive each proposal a program wrote (its own entry, or its text for the
    person's entry, which stays as it is: restorable) with the reason; on an entry the
    person stands behind, drop what the agent asked of it. Returns the archived ones as
    they were, the others as they are now."""
    why = "rejected in review" + (f": {reason.strip()}" if reason and reason.strip() else "")
    done = []
    for pick in _any_version(rt, ids, every):
        entry = pick.proposal.entry
        if program_wrote(entry):  # an agent's reflection too
            done.append(Outcome(forget(rt, entry.id, reason=why), True))
            continue
        meta = {k: v for k, v in entry.meta.items() if k != REVIEW_KEY}
        meta["id"] = entry.id
        kept = _rewrite(rt, entry, replace(entry, meta=meta, id_explicit=True))
        done.append(Outcome(kept, False))
    return done


def _any_version(rt: Runtime, ids: Sequence[str], every: bool) -> list[Pick]:
    """The proposals `ids` name, or every one that waits, whatever their version (a no
    keeps the person's words, so it needs no fingerprint); ValidationError for one that
    does not wait."""
    if every == bool(ids):
        chosen(rt, ids, every)  # both, or neither: the error says which
    if every:
        return [Pick(p, {}) for p in waiting(rt)]
    picks = []
    for raw in ids:
        entry = find(rt, raw.strip().partition("@")[0])
        if not is_pending(entry):
            raise ValidationError(
                f"{entry.id} ({entry.file}:{entry.line}) does not wait for review; "
                "nothing was changed",
                hint="`memcli review` lists what waits",
            )
        picks.append(Pick(_proposal(rt, entry), {}))
    return picks
