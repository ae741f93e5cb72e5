"""What a turn gives up, read against the entries it may be of (extract, DESIGN §7): a no
to the assistant's question ("Are you still at Globex?" "nope"), a slot said to change
("经理换人了"), a thing given up by its slot's noun ("sold my car"), and a value given up
joined with the new value said beside it in the same turn ("I left Globex, I'm at Initech
now" is one change). memcli.logic.extract decides what the joined statements do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from memcli.core.models import Entry, normalize_text
from memcli.logic.cues import CJK
from memcli.logic.slots import Slot, fits, noun_slot, parse
from memcli.logic.statements import GIVEN_UP, Candidate

#: an entry, its slot (or None) and its newness
Slotted = tuple[Entry, Slot | None, tuple[float, int]]


def names(text: str, value: str) -> bool:
    """`text` holds `value`, a whole word of it ("Munich" in "Lives in Munich", not in
    "Munichner"); a Chinese value anywhere in it."""
    if not value.strip():
        return False
    if CJK.search(value):
        return normalize_text(value) in normalize_text(text)
    edge = "A-Za-z0-9_" if value.isascii() else r"\w"  # "是Java": 是 is a \w
    pattern = rf"(?<![{edge}]){re.escape(value.strip())}(?![{edge}])"
    return re.search(pattern, text, re.I) is not None


def denied(found: Sequence[Candidate], slotted: Sequence[Slotted]) -> list[Candidate]:
    """A no to the assistant's words ("Are you still at Globex?" "nope, …") gives up the one
    value of an entry they name (its `replaces`); a slot said to change ("经理换人了") the
    one value of its entries: said as the entry's own negation, or merged with the new value
    said beside it (`merge_drops`); none or several: no statement."""
    out = []
    for c in found:
        if c.drop in GIVEN_UP and c.replaces:  # "sold my car": the one car remembered
            out.append(_of_slot_noun(c, slotted))
            continue
        if c.drop not in ("denied", "slot", "moved"):
            out.append(c)
            continue
        if c.drop in ("slot", "moved"):  # "经理换人了": the value of the slot the noun names
            noun = noun_slot(c.replaces)
            values = {t[1].value for t in slotted if t[1] is not None and t[1].name == noun}
        else:
            values = {
                t[1].value for t in slotted if t[1] is not None and names(c.replaces, t[1].value)
            }
        if len(values) == 1:  # "we moved" says no more than where one lives changed
            drop = "passing" if c.drop == "moved" else "named"
            out.append(replace(c, replaces=values.pop(), drop=drop))
    return out


#: slots a thing given up may be named by ("sold my car"): not "left home", "left town"
_GIVEN_UP_NOUNS = ("car", "phone", "laptop", "team", "editor", "shell", "browser", "employer")


def names_its_value(known: Slotted, said: str) -> bool:
    """The entry names `said` as its value, not as its subject: "Works on the payments
    team" names "the payments team", "The team deploys with Jenkins" names "Jenkins" (its
    "team" is who deploys: "I left the team" is not of it). An entry of no slot: anywhere."""
    entry, theirs, _ = known
    if not names(entry.text, said):
        return False
    return theirs is None or names(said, theirs.value) or names(theirs.value, said)


def _of_slot_noun(c: Candidate, slotted: Sequence[Slotted]) -> Candidate:
    """A value given up named by its slot's noun ("sold my car", "车卖了"): the one value of
    that slot remembered in its language, given up as named; else as it was."""
    if any(names_its_value(t, c.replaces) for t in slotted):
        return c
    bare = re.sub(r"^(?:my|our|the|a|an)\s+", "", c.replaces.strip(), flags=re.I)
    noun = noun_slot(bare) if len(bare.split()) <= 2 else ""  # not "a member of the … team"
    if noun not in _GIVEN_UP_NOUNS:
        return c
    chinese = bool(CJK.search(c.replaces))
    values = {
        s.value
        for e, s, _ in slotted
        if s is not None and s.name == noun and bool(CJK.search(e.text)) == chinese
    }
    return replace(c, replaces=values.pop(), drop="named") if len(values) == 1 else c


def merge_drops(found: Sequence[Candidate], slotted: Sequence[Slotted]) -> list[Candidate]:
    """A value given up and a new value of the same slot in one turn are one change: "I
    left Globex, I'm working at Initech now" is "Works at Initech", replacing Globex (the
    entry that names it, of the new value's slot; a new value of no known slot takes it)."""
    out = list(found)
    for gone in [c for c in found if c.drop in GIVEN_UP and c.replaces]:
        slots = {
            t[1].name for t in slotted if t[1] is not None and names_its_value(t, gone.replaces)
        }
        if not slots:
            continue
        for i, c in enumerate(out):
            if c.drop not in ("", "bare") or c.replaces or c.turn != gone.turn:
                continue
            mine = None if c.drop else parse(c.text)
            if (mine is not None and mine.name in slots) or (
                mine is None and c.value and any(fits(c.value, name) for name in slots)
            ):
                out[i] = replace(c, replaces=gone.replaces, drop="")
                out.remove(gone)
                break
    return out
