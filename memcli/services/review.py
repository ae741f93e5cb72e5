"""`memcli review`: what an agent asked for that waits for a person (memcli.core.review).

`waiting` lists the entries with a `review=` request; `confirm` applies what they asked
for (the type, importance or pin) and makes them the person's (`by=person`), or archives
an entry an agent asked to forget; `reject` archives an entry a program wrote and drops
the requests on the person's own (archived entries: `memcli restore`). `agent_forget`:
an agent's forget, at once for what a program wrote, else a request that waits.
`rewrite`: an entry a program rewrites (extract's UPDATE) becomes the program's, its
standing held for review.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memcli.core.errors import NotFoundError, ValidationError
from memcli.core.models import BY_KEY, Entry, fmt_unit, format_time, utc_now
from memcli.core.review import (
    REVIEW_KEY,
    Held,
    agent_may_forget,
    held_of,
    is_pending,
    rewritten,
)
from memcli.services.archive import forget
from memcli.services.entries import find, live_entries
from memcli.services.runtime import Runtime, operation
from memcli.store.markdown import Document


@dataclass(frozen=True)
class Outcome:
    """An entry a review or an agent's forget dealt with: `archived`, or still in its file
    (as it is now)."""

    entry: Entry
    archived: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "archived": self.archived}


def waiting(rt: Runtime) -> list[Entry]:
    """The entries whose agent's requests wait for a person, in file order."""
    return [e for e in live_entries(rt) if is_pending(e)]


def _chosen(rt: Runtime, ids: Sequence[str], every: bool) -> list[Entry]:
    if every == bool(ids):
        raise ValidationError(
            "give the ids to review or --all, not both" if every else "give an id or --all",
            hint="`memcli review` lists what waits",
        )
    if every:
        return waiting(rt)
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
    for entry in _chosen(rt, ids, every):
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
def agent_forget(rt: Runtime, entry_id: str) -> Outcome:
    """An agent's forget (MCP forget_memory): what a program wrote and nobody confirmed is
    archived at once; an entry the person stands behind stays as it is, with `forget` in
    its `review=` for the person to confirm (memcli.core.review.agent_may_forget)."""
    entry = find(rt, entry_id)
    if agent_may_forget(entry):
        return Outcome(forget(rt, entry.id, reason="forgotten by an agent"), True)
    meta = {**entry.meta, "id": entry.id}
    meta[REVIEW_KEY] = held_of(entry).union(Held(forget=True)).format()
    return Outcome(_rewrite(rt, entry, replace(entry, meta=meta, id_explicit=True)), False)


def rewrite(
    rt: Runtime, entry: Entry, text: str, *, importance: float | None, source: str | None, by: str
) -> Entry:
    """`entry` with the text a program (`by`) wrote for it (extract's UPDATE), asking for
    `importance`: the entry is now the program's, and its correction type, pin and
    importance ≥ 0.9 wait for a person (memcli.core.review.rewritten) — `confirm` gives
    them back. The caller archives the old text first."""
    from memcli.logic.keywords import recomputed_keywords

    entry_type, kept, held = rewritten(entry, importance)
    meta = {k: v for k, v in entry.meta.items() if k not in ("imp", "pin", REVIEW_KEY)}
    meta["id"] = entry.id
    if kept is not None:
        meta["imp"] = fmt_unit(kept)
    kws = recomputed_keywords(entry.keywords, entry.text, text)
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
    new = replace(entry, text=text, type=entry_type, meta=meta, id_explicit=True)
    return _rewrite(rt, entry, new)


def _rewrite(rt: Runtime, old: Entry, new: Entry) -> Entry:
    """`old` replaced by `new`, moved to the section (and file) of its new type."""
    target = rt.store.files.file_for_type(new.type) if new.type != old.type else old.file

    def missing() -> NotFoundError:
        return NotFoundError(
            f"entry {old.id} changed or disappeared in {old.file} during the review",
            hint="run `memcli review` and try again",
        )

    if target == old.file:

        def change(doc: Document) -> Entry:
            if doc.find(old.id) is None:
                raise missing()
            if new.type == old.type:
                return doc.replace_entry(old.id, new)
            doc.remove_entry(old.id)
            return doc.insert_entry(replace(new, file=target))

        return rt.store.update(old.file, change)

    def insert(doc: Document) -> Entry:  # first: never in neither file
        found = doc.find(old.id)
        return found.entry if found else doc.insert_entry(replace(new, file=target))

    written = rt.store.update(target, insert)

    def remove(doc: Document) -> None:
        if doc.find(old.id) is not None:
            doc.remove_entry(old.id)

    rt.store.update(old.file, remove)
    return written


@operation("review reject")
def reject(
    rt: Runtime, ids: Sequence[str] = (), *, every: bool = False, reason: str | None = None
) -> list[Outcome]:
    """Archive each entry a program wrote (restorable) with the reason; an entry the
    person stands behind stays as it is, without the requests (a no to what the agent
    asked of it). Returns the archived ones as they were, the others as they are now."""
    why = "rejected in review" + (f": {reason.strip()}" if reason and reason.strip() else "")
    done = []
    for entry in _chosen(rt, ids, every):
        if entry.provenance == "machine":
            done.append(Outcome(forget(rt, entry.id, reason=why), True))
            continue
        meta = {k: v for k, v in entry.meta.items() if k != REVIEW_KEY}
        meta["id"] = entry.id
        kept = _rewrite(rt, entry, replace(entry, meta=meta, id_explicit=True))
        done.append(Outcome(kept, False))
    return done
