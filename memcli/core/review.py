"""Proposals: what an agent asked for, waiting beside the person's words until the person
confirms the version they saw (docs/agents.md, Proposals; DESIGN §4).

This module owns the one representation of a proposal; memcli.services.review owns
every write of one. An agent (MCP, the API, hooks, extract, an import the person did not
mark as theirs) may not make an entry a correction, pin it, give it an importance of
ELEVATED_IMPORTANCE or more, rewrite or archive an entry the person stands behind. What
it asks for is stored, not applied, in the metadata comment of the entry that holds the
proposal (the Markdown stays the one truth, readable and editable by hand):

    - Is allergic to penicillin <!-- id=m1 by=agent review=type:correction,imp:1,pin -->
    - Deploying on Fridays is fine <!-- id=m7 by=agent review=type:correction,pin,rewrite:m2 -->

`review=` lists what waits: `type:T` (the entry sits under its fallback type meanwhile,
`fact` for a correction), `imp:X` (it keeps its lower importance meanwhile), `pin`,
`forget` (archive the person's entry) and `rewrite:ID` (this entry is a program's new
text for the person's entry ID, which stays as it is, live and served, until confirmed).
Four kinds of proposal (`Proposal.kind`): `new` (an agent's own entry asking for
standing), `rewrite` (an entry beside the person's with its new text), `archive` and
`standing` (requests on the person's own entry). Until confirmed a proposal is a
program's entry: it competes on relevance alone (`vouched`) and never displaces the
person's. `memcli review` shows each with its fingerprint, a hash of exactly what a
confirm would apply (and, for a rewrite, what it would replace); a confirm refuses a
proposal whose fingerprint changed since it was shown, so an agent editing a pending
proposal makes it a new one. A person's own writes (`memcli add`, `memcli edit`, a hand
edit, `import --as-mine`) never wait.

Pure, standard library only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memcli.core.models import BY_KEY, MACHINE_WRITERS, Entry, fmt_unit, unit_value
from memcli.core.records import record

REVIEW_KEY = "review"
#: `AddRequest.by` of `memcli import` without --as-mine: stored as the person's
#: (`by=person`: it does not fade), its corrections, pins and importance ≥ 0.9 held
IMPORT_WRITER = "import"
#: an importance at or above this is held for review when an agent asks for it (the
#: importance of a profile entry, InjectSettings.profile_importance)
ELEVATED_IMPORTANCE = 0.9
#: types an agent may not give on its own, and the type the entry has meanwhile
HELD_TYPES = {"correction": "fact"}


@record(frozen=True)
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
        parts = [f"its new text for your entry {self.rewrite}"] if self.rewrite is not None else []
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
        either, the first rewrite target."""
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


def asking(meta: dict[str, str], held: Held, entry: Entry | None = None) -> dict[str, str]:
    """`meta` with `held` waiting for a person, joined to what `entry` (the entry being
    written over) waited for already: the one spelling of a request an agent's add,
    repeat or edit leaves. `meta` itself when nothing is held."""
    if not held:
        return meta
    joined = held_of(entry).union(held) if entry is not None else held
    return {**meta, REVIEW_KEY: joined.format()}


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


def standing(
    entry: Entry, importance: float | None, wanted: Entry | None = None
) -> tuple[str, float | None, Held]:
    """What a program's new text for `entry` (extract's UPDATE, an agent's edit) may have
    at once and what waits for a person: (its type, its importance, what waits).
    `importance`: what the program asks for; `wanted`: the program's version of the entry
    (an agent's edit: the importance and pin it asks for), else the entry's own. The text
    is the program's, so nothing lets it lead on the person's word: its correction type,
    pin and an importance ≥ ELEVATED_IMPORTANCE (its own or the asked one) wait;
    meanwhile it keeps the highest importance below that (None: the default)."""
    asks = entry if wanted is None else wanted
    own = asks.importance if "imp" in asks.meta else None
    asked = [x for x in (own, importance) if x is not None]
    entry_type, _, _, held = hold(asks.type, max(asked, default=None), asks.pinned)
    below = [x for x in asked if x < ELEVATED_IMPORTANCE]
    return entry_type, max(below, default=None), held


def agent_may_forget(entry: Entry) -> bool:
    """An agent may archive the entry at once: a program wrote it (extract, an agent,
    compress, reflect) and nobody confirmed or pinned it. Anything else — written by hand
    or by the person (a reflection too), confirmed, pinned, an episode note, an imported
    conversation — waits for the person (`forget` in `review=`). A program's proposal for
    the person's entry (`rewrite:` in `review=`) is the program's: forgetting it drops the
    proposal, the person's entry stays as it is."""
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


# ---------------------------------------------------------------------- proposals

#: how many hex digits of the fingerprint `memcli review` shows and `confirm` takes
FINGERPRINT_DIGITS = 10


@record(frozen=True)
class Proposal:
    """One proposal as a confirm would apply it: the entry holding it, the person's entry
    a rewrite replaces (`target`), its kind, what it would write (text, type, importance,
    pin) and its fingerprint."""

    entry: Entry
    target: Entry | None
    kind: str  # "new", "rewrite", "archive" or "standing"
    text: str
    type: str
    importance: float
    pin: bool
    fingerprint: str

    @property
    def asked(self) -> Held:
        return held_of(self.entry)

    def fields(self) -> dict[str, Any]:
        """What a person is shown and confirms, as plain values (the listing's record)."""
        return {
            "fingerprint": self.fingerprint,
            "kind": self.kind,
            "text": self.text,
            "type": self.type,
            "importance": self.importance,
            "pin": self.pin,
            "keywords": ",".join(self.entry.keywords),
            "target": self.target.id if self.target is not None else None,
            "target_text": self.target.text if self.target is not None else None,
        }


def proposal_of(entry: Entry, target: Entry | None = None) -> Proposal:
    """The proposal `entry` holds (it is pending: `review=` set); `target`: the live entry
    its `rewrite:` names."""
    held = held_of(entry)
    if held.forget:
        kind = "archive"
    elif held.rewrite is not None:
        kind = "rewrite"
    else:
        kind = "standing" if vouched(entry) else "new"
    importance = held.importance if held.importance is not None else entry.importance
    return Proposal(
        entry,
        target,
        kind,
        entry.text,
        held.type or entry.type,
        importance,
        held.pin or entry.pinned,
        fingerprint(entry, target),
    )


def fingerprint(entry: Entry, target: Entry | None = None) -> str:
    """A hash of exactly what a confirm of `entry`'s proposal applies: its text, type and
    every metadata value (what it asks for included), and, for a rewrite, the person's
    entry it replaces. Any change to either, by anyone, gives another fingerprint."""

    def part(e: Entry | None) -> list[Any] | None:
        return None if e is None else [e.id, e.type, e.file, e.text, sorted(e.meta.items())]

    raw = json.dumps([part(entry), part(target)], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:FINGERPRINT_DIGITS]


#: fields of a proposal, in the order a refusal names them, with their names in words
CHANGED_FIELDS = {
    "kind": "what it proposes",
    "text": "text",
    "type": "type",
    "importance": "importance",
    "pin": "pin",
    "keywords": "keywords",
    "target_text": "the text of your entry it rewrites",
}


def what_changed(listed: dict[str, Any], now: Proposal) -> list[str]:
    """What differs between a proposal as it was listed (`Proposal.fields`) and as it is
    now, in words (`text: 'A' -> 'B'`); "its metadata" when only what no field shows did."""
    current = now.fields()
    out = []
    for key, name in CHANGED_FIELDS.items():
        if listed.get(key) != current.get(key):
            out.append(f"{name}: {_shown(listed.get(key))} -> {_shown(current.get(key))}")
    if not out and listed.get("fingerprint") != now.fingerprint:
        out.append("its metadata (not shown in the listing)")
    return out


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 80 else value[:77] + "...")
    return "none" if value is None else str(value).lower()
