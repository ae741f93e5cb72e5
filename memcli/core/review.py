"""What an agent wrote waits for a person before it may lead (docs/maintenance.md, Who wrote what).

An agent (MCP, the API, hooks, extract, an import the person did not mark as theirs)
may not make an entry a correction, pin it, or give it an importance of
ELEVATED_IMPORTANCE or more: those put an entry first, or into every inject block.
Such a request is stored, not applied, in the entry's own metadata comment (the
Markdown stays the one truth):

    - Is allergic to penicillin <!-- id=m1 by=agent review=type:correction,imp:1,pin -->

`review=` lists what the agent asked for and the person has not confirmed yet:
`type:T` (the entry sits under its fallback type meanwhile, `fact` for a correction),
`imp:X` (the entry keeps its lower importance meanwhile), `pin`, `forget` (an agent
asked to forget an entry the person stands behind: it stays, as it was, until the person
confirms; what a program wrote an agent archives at once, `agent_may_forget`) and
`rewrite:ID` (a program rewrote the text of an entry the person stood behind; ID is the
archive.md copy of the person's version). Until then an agent's entry competes on
relevance alone, and the person's own entry keeps the standing the person gave it;
`memcli review confirm` applies the list (and marks the entry as the person's, or
archives it for `forget`), `memcli review reject` archives an entry a program wrote,
puts the person's version of a rewritten entry back in its place, and drops the requests
on the person's own. A person's own writes (`memcli add`, `memcli edit`, a hand edit,
`import --as-mine`) never wait. An entry a program rewrites (extract's UPDATE, an
agent's `Memory.edit`) is the program's: its own correction type, pin and high
importance wait in the same way (`rewritten`).

Pure, standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memcli.core.models import BY_KEY, MACHINE_WRITERS, Entry, fmt_unit, unit_value

REVIEW_KEY = "review"
#: `AddRequest.by` of `memcli import` without --as-mine: stored as the person's
#: (`by=person`: it does not fade), its corrections, pins and importance ≥ 0.9 held
IMPORT_WRITER = "import"
#: an importance at or above this is held for review when an agent asks for it (the
#: importance of a profile entry, InjectSettings.profile_importance)
ELEVATED_IMPORTANCE = 0.9
#: types an agent may not give on its own, and the type the entry has meanwhile
HELD_TYPES = {"correction": "fact"}


@dataclass(frozen=True)
class Held:
    """What an agent asked for and a person has not confirmed."""

    type: str | None = None
    importance: float | None = None
    pin: bool = False
    forget: bool = False
    #: a program rewrote the person's entry: the archive.md id of the person's version
    rewrite: str | None = None

    def __bool__(self) -> bool:
        return (
            self.type is not None
            or self.importance is not None
            or self.pin
            or self.forget
            or self.rewrite is not None
        )

    def format(self) -> str:
        """The `review=` value."""
        parts = []
        if self.type is not None:
            parts.append(f"type:{self.type}")
        if self.importance is not None:
            parts.append(f"imp:{fmt_unit(self.importance)}")
        if self.pin:
            parts.append("pin")
        if self.forget:
            parts.append("forget")
        if self.rewrite is not None:
            parts.append(f"rewrite:{self.rewrite}")
        return ",".join(parts)

    def describe(self) -> str:
        """In words, for `memcli review`."""
        parts = ["its new text for your entry"] if self.rewrite is not None else []
        if self.type is not None:
            parts.append(f"type {self.type}")
        if self.importance is not None:
            parts.append(f"importance {fmt_unit(self.importance)}")
        if self.pin:
            parts.append("pinned")
        if self.forget:
            parts.append("forgetting")
        return ", ".join(parts) or "nothing"

    def union(self, other: Held) -> Held:
        """Both requests: the later type, the higher importance, a pin or a forget from
        either, the first rewrite (the person's version, not a program's in between)."""
        importance = [x for x in (self.importance, other.importance) if x is not None]
        return Held(
            other.type or self.type,
            max(importance) if importance else None,
            self.pin or other.pin,
            self.forget or other.forget,
            self.rewrite or other.rewrite,
        )


def parse_held(value: str) -> Held:
    """A `review=` value read back (parts memcli cannot read are left out)."""
    kind: str | None = None
    importance: float | None = None
    rewrite: str | None = None
    pin = forget = False
    for part in value.split(","):
        key, _, raw = part.strip().partition(":")
        if key == "type" and raw:
            kind = raw
        elif key == "imp":
            number = unit_value(raw, -1.0)
            importance = number if number >= 0 else None
        elif key == "pin":
            pin = True
        elif key == "forget":
            forget = True
        elif key == "rewrite" and raw:
            rewrite = raw
    return Held(kind, importance, pin, forget, rewrite)


def is_pending(entry: Entry) -> bool:
    """The entry holds requests a person has not confirmed (`review=` set)."""
    return REVIEW_KEY in entry.meta


def held_of(entry: Entry) -> Held:
    """What the entry's `review=` holds (nothing when it has none)."""
    raw = entry.meta.get(REVIEW_KEY)
    return parse_held(raw) if raw is not None else Held()


def hold(
    entry_type: str, importance: float | None, pin: bool
) -> tuple[str, float | None, bool, Held]:
    """Split an agent's request into what is written now (type, importance, pin) and
    what waits for a person (Held, empty when nothing does)."""
    held_type = entry_type if entry_type in HELD_TYPES else None
    held_imp = importance if importance is not None and importance >= ELEVATED_IMPORTANCE else None
    held = Held(held_type, held_imp, pin)
    return (
        HELD_TYPES.get(entry_type, entry_type),
        None if held_imp is not None else importance,
        False,
        held,
    )


def beyond(entry: Entry, asked: Held) -> Held:
    """What of an agent's request `asked` the entry does not have yet (what a repeat or
    an edit of it holds for review)."""
    return Held(
        asked.type if asked.type and asked.type != entry.type else None,
        asked.importance
        if asked.importance is not None and asked.importance > entry.importance
        else None,
        asked.pin and not entry.pinned,
    )


def rewritten(
    entry: Entry, importance: float | None, superseded: str, wanted: Entry | None = None
) -> tuple[str, float | None, Held]:
    """What an entry keeps when a program rewrites it (extract's UPDATE, an agent's edit)
    asking for `importance`, its old version archived as `superseded`: (its type, its
    importance, what waits for a person). `wanted`: the program's version of the entry
    (an agent's edit: the importance and pin it asks for), else the entry's own. The
    text is now the program's, so nothing lets it lead on the person's word: its
    correction type, pin and an importance ≥ ELEVATED_IMPORTANCE (its own or the asked
    one) are held with what it waited for already; meanwhile it keeps the highest
    importance below that (None: the default). The rewrite itself waits
    (`rewrite:superseded`) when the person stood behind the old version (what an agent
    could not forget at once), so that a reject gives it back."""
    asks = entry if wanted is None else wanted
    own = asks.importance if "imp" in asks.meta else None
    asked = [x for x in (own, importance) if x is not None]
    entry_type, _, _, held = hold(asks.type, max(asked, default=None), asks.pinned)
    below = [x for x in asked if x < ELEVATED_IMPORTANCE]
    if not agent_may_forget(entry):
        held = replace(held, rewrite=superseded)
    return entry_type, max(below, default=None), held_of(entry).union(held)


def agent_may_forget(entry: Entry) -> bool:
    """An agent may archive the entry at once: a program wrote it (extract, an agent,
    compress, reflect) and nobody confirmed or pinned it. Anything else — written by hand
    or by the person (a reflection too), confirmed, pinned, an episode note, an imported
    conversation — waits for the person (`forget` in `review=`), and so does a program's
    rewrite of such an entry the person has not reviewed yet (`rewrite:` in `review=`)."""
    if held_of(entry).rewrite is not None:
        return False
    if entry.confirmed:
        return False
    if entry.provenance == "reflection":  # the Reflections section: reflect's, or by hand
        return program_wrote(entry) or entry.meta.get(BY_KEY) == "reflect"
    return entry.provenance == "machine"


def program_wrote(entry: Entry) -> bool:
    """Its `by=` names a program that is not reflect (extract, an agent, compress), or
    it has `src=` and no `by=` (an older program's write), whatever its type: an
    agent's entry of type reflection, too."""
    by = entry.meta.get(BY_KEY, "")
    return by in MACHINE_WRITERS or (not by and bool(entry.meta.get("src")))


def vouched(entry: Entry) -> bool:
    """A person stands behind the entry's place: it was not written by a program (a hand
    edit, a person's add or edit, or a confirmed review). Only such entries may lead an
    inject block or be in every one. What an agent asked of such an entry and the person
    has not confirmed (`review=`) was not applied, so it takes none of that place away: an
    agent cannot push the person's pinned correction down by asking for something."""
    return entry.provenance != "machine" and not program_wrote(entry)
