"""What a conversation's statements do to the workspace (docs/maintenance.md, mem0 style): ADD,
UPDATE or NOOP each, decided against the entries it already holds.

A correction ("actually, …", "not X any more", "I moved to …", "不对，应该是…") UPDATEs the
entry it corrects, found by subject similarity (embedding + words); a statement that
restates an entry is a NOOP, one that adds a detail to it or gives its subject a new
value an UPDATE, whose statement replaces the entry's text as a whole (never spliced
into old clauses it keeps: their old text goes to archive.md). `plan` and `screen` are
pure; Memory.extract applies a plan (the old text of an updated entry goes to
archive.md as superseded). A statement that looks like it holds a credential is never
added (SKIP, reported with the credential redacted), nor one memcli would refuse from
`add` (control characters, too long). The statements themselves come from
memcli.logic.statements.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from memcli.core.credentials import describe, find, redact
from memcli.core.models import Entry, normalize_text
from memcli.core.validate import text_problem
from memcli.index.tokenize import tokenize
from memcli.logic.cues import CJK
from memcli.logic.drops import Slotted, denied, merge_drops, names, names_its_value
from memcli.logic.forgetting import written_at
from memcli.logic.slots import Slot, fill, negate, parse
from memcli.logic.statements import GIVEN_UP, Candidate


@dataclass(frozen=True)
class Decision:
    action: str  # ADD, UPDATE, NOOP or SKIP (not remembered: see reason)
    candidate: Candidate
    entry_id: str | None = None
    reason: str = ""
    stored: str | None = None  # the entry's text after ADD / UPDATE
    layer: str | None = None  # the layer written to, when the workspace reads several

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "action": self.action,
            "id": self.entry_id,
            "text": self.candidate.text,
            "type": self.candidate.type,
            "importance": self.candidate.importance,
            "reason": self.reason,
            "stored": self.stored,
        }
        return found if self.layer is None else {**found, "layer": self.layer}


#: subject similarity (mean of word overlap and embedding cosine) from which a correction
#: updates an entry, and a statement with a new value or a new detail does
CORRECT_AT = 0.3
DETAIL_AT = 0.35
REWORD_AT = 0.6
POOL = 20  # entries per statement that are compared (and embedded), by word overlap
NEW_VALUE_AT = 0.2  # same subject (see `conflicting`), another value
SAME_SUBJECT = 0.75  # word overlap of two subjects ("the staging database") that are one
_PREFIXES = re.compile(r"^(?:user's|用户的|用户)\s*", re.I)
_VALUE_VERB = re.compile(r"\b(?:is|are|was|were|is no longer|are no longer)\b|是|叫", re.I)
#: one-value statements: where one lives, where one works ("在美团工作": the value inside)
_SINGLE = re.compile(r"^(?:lives (?:in|at)|works (?:at|for|as)|住在|在(?P<at>.+?)工作)", re.I)


def _words(text: str) -> frozenset[str]:
    return frozenset(tokenize(_PREFIXES.sub("", text)))


def _subject(text: str) -> tuple[frozenset[str], str] | None:
    """(subject words, value) of "X is Y" / "Lives in Y" / "X是Y", or None."""
    bare = _PREFIXES.sub("", text.split("\n")[0])
    single = _SINGLE.match(bare)
    if single:
        key = single.group().casefold()
        if single.group("at"):
            return frozenset(["工作"]), normalize_text(single.group("at"))
        return frozenset([" ".join(key.split()[:2])]), normalize_text(bare[single.end() :])
    m = _VALUE_VERB.search(bare)
    if not m or m.start() == 0:
        return None
    subject = frozenset(tokenize(bare[: m.start()]))
    return (subject, normalize_text(bare[m.end() :])) if subject else None


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def same_slot(new: str, old: str) -> bool:
    """Both texts give a value of one subject ("Lives in Leipzig" / "Lives in Munich")."""
    a, b = _subject(new), _subject(old)
    return a is not None and b is not None and _jaccard(a[0], b[0]) >= SAME_SUBJECT


def conflicting(new: str, old: str) -> bool:
    """Same subject, another value: "The staging database is Postgres 17" / "… 16",
    "Lives in Lisbon" / "Lives in Berlin", "用户的编辑器是Helix" / "用户的编辑器是Vim"."""
    a, b = _subject(new), _subject(old)
    if a is None or b is None:
        return False
    if _jaccard(a[0], b[0]) < SAME_SUBJECT or not a[1] or not b[1]:
        return False
    mine = parse(new)  # "User's manager's manager is …" is not of "User's manager is …"
    if mine is not None and any(not names(old, w) for w in mine.of):
        return False
    return a[1] not in b[1] and b[1] not in a[1]  # "berlin" in "berlin, near x": a detail


@dataclass
class _Known:
    """An entry of the workspace, or a statement added earlier in this conversation."""

    text: str
    entry: Entry | None
    vector: np.ndarray | None
    decision: int | None = None  # index of the decision that wrote it in this plan
    age: tuple[float, int] = (math.inf, 0)  # orders by newness: (written at, place)
    words: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.words = _words(self.text)


def _similarity(
    text: str, words: frozenset[str], vector: np.ndarray | None, known: _Known
) -> float:
    """Word overlap, averaged with the embedding cosine when both are English (the
    bundled model is English-only: its cosines of Chinese texts are noise)."""
    lex = _jaccard(words, known.words)
    if vector is None or known.vector is None or CJK.search(text + known.text):
        return lex
    return (lex + float(np.dot(vector, known.vector))) / 2


def _same_opening(candidate: Candidate, known: _Known) -> bool:
    """The statement opens like the entry and goes on differently: "Prefers pytest over
    unittest, with fixtures" / "Prefers pytest over unittest for Python tests"."""
    a, b = tokenize(candidate.text), tokenize(known.text)
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n >= 3 and n * 2 >= len(b)


def _names_enough(candidate: Candidate, known: _Known) -> bool:
    """A value given up in one's own words corrects an entry holding two or all of them
    ("no longer on call for payments" is not "Works on the payments team")."""
    if candidate.drop != "own" or not candidate.replaces:
        return True
    said = _words(candidate.replaces)
    shared = len(said & known.words)
    return shared >= 2 or (bool(said) and said <= known.words)


def _age(entry: Entry, place: dict[int, int]) -> tuple[float, int]:
    """Newness of an entry: when it was last written (undated: oldest), then its place."""
    try:
        moment = written_at(entry)
    except (TypeError, ValueError):
        moment = None
    return (moment.timestamp() if moment else -math.inf, place.get(id(entry), 0))


def _slot_target(
    candidate: Candidate, scored: Sequence[tuple[float, _Known]]
) -> tuple[_Known | None, str]:
    """The entry a statement gives a new value: the one it names as replaced ("…, not
    Munich": the Munich entry, when it is of the same subject or close enough), else the
    newest of those with the same subject and another value (`conflicting`)."""
    if candidate.replaces:
        for sim, known in scored:
            if names(known.text, candidate.replaces) and (
                same_slot(candidate.text, known.text) or sim >= CORRECT_AT
            ):
                return known, f"replaces {candidate.replaces!r}, which it names"
    slot = [
        (sim, k) for sim, k in scored if sim >= NEW_VALUE_AT and conflicting(candidate.text, k.text)
    ]
    if not slot:
        return None, ""
    sim, newest = max(slot, key=lambda pair: pair[1].age)
    more = f", the newest of {len(slot)}" if len(slot) > 1 else ""
    return newest, f"new value for its subject ({sim:.2f} similar{more})"


#: a statement of a thing given up, not a habit ("Quit the table")
_A_THING = re.compile(r"\w+ (?:the|a|an|this|that|these|those|his|her|their)\s", re.I)
#: words of an entry's frame, not of its subject: a correction shares more than these
_FRAME_WORDS = frozenset(
    tokenize("uses use works work lives live drives drive prefers is are user's no longer now")
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|we|we're|we've|our)\b|我|本人", re.I)


def _same_thing(candidate: Candidate, mine: Slot | None, known: Slotted) -> bool:
    """A statement of a slot is of an entry of that slot only when it is the same one: the
    words that say which ("work" phone, "home" laptop, "prod" database) are the entry's too,
    and an entry whose subject is a thing ("The staging database is …") is named ("I use SQL
    Server now" is not of the staging database)."""
    entry, theirs, _ = known
    if mine is not None and any(not names(entry.text, w) for w in mine.of):
        return False
    return theirs is None or not theirs.thing or all(names(candidate.said, w) for w in theirs.of)


def _by_slot(candidate: Candidate, slotted: Sequence[Slotted]) -> Decision | None:
    """The decision for a statement of a slot (memcli.logic.slots), or None to leave it to
    similarity: the entry it names as replaced, else the newest of its slot; NOOP for the
    value it holds; the new value in the entry's wording ("Uses Helix as the main editor"),
    a value given up as the entry said no longer ("No longer works at Globex"). A value
    given up that names no entry is no statement (action NONE) when its verb needs one
    ("I left my keys")."""
    mine = parse(candidate.text)
    slot = candidate.slot or (mine.name if mine else "")
    # a slot is one language's: 住在 is not Lives in ("不开了" to "你还开比亚迪吗？": 比亚迪's),
    # said in the words around the value ("Lives in 上海" is English)
    said = candidate.text if candidate.drop != "named" else candidate.replaces
    around = said.replace(candidate.value.strip(), " ") if candidate.value.strip() else said
    if candidate.drop != "named" and re.search(r"\w", around):  # a value alone: its own
        said = around
    chinese = bool(CJK.search(said))
    slotted = [t for t in slotted if bool(CJK.search(t[0].text)) == chinese]
    if candidate.drop in ("bare", "passing"):  # "现在在拼多多", "I relocated" alone: no value
        return Decision("NONE", candidate, None, "a value alone, of no entry it replaces")
    if candidate.drop == "held":
        held = [(_still(candidate.replaces, t), t[2], t[0].id) for t in slotted]
        best = max((h for h in held if h[0]), default=None)
        if best is None:
            return Decision("NONE", candidate, None, "says something not remembered holds")
        return Decision("NOOP", candidate, best[2], "still holds")
    target = None
    if candidate.replaces:
        named = [t for t in slotted if names_its_value(t, candidate.replaces)]
        fits = [t for t in named if t[1] is not None and (not slot or t[1].name == slot)]
        said = _words(candidate.text)  # none of its slot: the one it shares most words with
        target = max(
            fits or named,
            key=lambda t: (bool(fits), _jaccard(said, _words(t[0].text)), t[2]),
            default=None,
        )
        why = f"replaces {candidate.replaces!r}, which it names"
    if target is None and candidate.drop:
        if candidate.drop in ("named", "swap") or (
            candidate.drop == "frame"
            and (not _FIRST_PERSON.search(candidate.said) or _A_THING.match(candidate.text))
        ):  # "quit the app and reopen it": an instruction, not the person's own change;
            # "dropped the table": a thing, not a habit given up ("quit smoking")
            return Decision("NONE", candidate, None, "gives up something not remembered")
        return None
    if target is None and slot and not candidate.drop:
        same = [
            t
            for t in slotted
            if t[1] is not None and t[1].name == slot and _same_thing(candidate, mine, t)
        ]
        held = next((t for t in same if mine and _holds(t[1].value, mine.value)), None)
        if held is not None:
            return Decision("NOOP", candidate, held[0].id, f"already its {slot}")
        target = max(same, key=lambda t: t[2], default=None)
        why = f"new value of its {slot}" + (f", the newest of {len(same)}" if len(same) > 1 else "")
    if target is None:
        return None
    entry, theirs = target[0], target[1]
    text = candidate.text
    if candidate.drop == "swap" and (theirs is None or not theirs.frame):
        return Decision("NONE", candidate, None, "a new value for an entry of no one fact")
    if theirs is not None and theirs.frame:
        if candidate.drop in ("frame", "named"):
            text = negate(entry.text)
        elif candidate.drop in ("", "swap") and _takes_their_words(mine, theirs, candidate.value):
            text = fill(theirs.frame, mine.value if mine else candidate.value)
    if normalize_text(text) == normalize_text(entry.text):
        return Decision("NOOP", candidate, entry.id, "already remembered")
    return Decision("UPDATE", candidate, entry.id, why, text)


def _still(value: str, known: Slotted) -> int:
    """How well `value`, said to hold still, is what the entry says (0: not): its slot's
    value is in it ("Go every day" holds "Go"), or it is in the entry's text ("阿里" in
    "在阿里巴巴工作"), or its first words are ("ThinkPad for work"; more words, better)."""
    entry, theirs, _ = known
    if theirs is not None and names(value, theirs.value):
        return 100
    if CJK.search(value):
        return 50 if len(value) >= 2 and names(entry.text, value) else 0
    words = value.split()
    return next(
        (
            n
            for n in range(len(words), 0, -1)
            if len(" ".join(words[:n])) >= 3 and names(entry.text, " ".join(words[:n]))
        ),
        0,
    )


def _takes_their_words(mine: Slot | None, theirs: Slot, value: str) -> bool:
    """A new value goes into the entry's wording when that says more of the slot ("Uses {}
    as the main editor" for "Uses Helix", "User's editor is Helix"); a statement as full
    as it keeps its own."""
    if mine is None:
        return bool(value)
    generic = (
        mine.frame in ("Uses {}", "用{}", "用 {}")
        or mine.frame.startswith(("User's ", "用户的"))
        or bool(re.match(r"the [\w' ]+ (?:is|are) \{\}$", mine.frame, re.I))
    )
    return generic or len(mine.frame) < len(theirs.frame)


def _holds(old: str, new: str) -> bool:
    """The old value says the new one already ("Berlin, near Tempelhof" holds "Berlin")."""
    return normalize_text(old) == normalize_text(new) or names(old, new)


def plan(
    found: Sequence[Candidate],
    existing: Sequence[Entry],
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
) -> list[Decision]:
    """NOOP for what is already there (same text, or an entry whose words cover it);
    UPDATE for a correction of an entry (subject similarity ≥ CORRECT_AT), a new value for
    an entry's subject or a new detail of it (≥ DETAIL_AT), a new wording (≥ REWORD_AT);
    ADD otherwise. Subject similarity is the mean of word overlap and the cosine of
    `embed` (normalized vectors), or word overlap alone without it. Only the POOL entries
    of most word overlap with each statement are compared and embedded. A statement
    corrected later in the same conversation is dropped for the correction (NOOP,
    "corrected later in the conversation")."""
    # never a reflection or the turn of an imported conversation (a record of what was said)
    eligible = [
        e
        for e in existing
        if e.provenance not in ("reflection", "conversation") and e.type != "reflection"
    ]
    place = {id(e): n for n, e in enumerate(existing)}
    slotted = [(e, parse(e.text), _age(e, place)) for e in eligible]
    found = merge_drops(denied(found, slotted), slotted)
    mine = [_words(c.text) for c in found]
    every = frozenset().union(*mine) if mine else frozenset()
    sharing = [(e, _words(e.text)) for e in eligible]
    sharing = [(e, w) for e, w in sharing if w & every]
    chosen: set[int] = set()
    for words in mine:  # the POOL entries of most word overlap with each statement
        ranked = sorted(range(len(sharing)), key=lambda i: -_jaccard(words, sharing[i][1]))
        chosen.update(i for i in ranked[:POOL] if sharing[i][1] & words)
    pool = [sharing[i][0] for i in sorted(chosen)]
    by_text = {normalize_text(e.text): e for e in existing}
    vectors = embed([c.text for c in found] + [e.text for e in pool]) if embed and found else None
    knowns = [
        _Known(
            e.text, e, vectors[len(found) + i] if vectors is not None else None, age=_age(e, place)
        )
        for i, e in enumerate(pool)
    ]
    decisions: list[Decision] = []
    for n, candidate in enumerate(found):
        vector = vectors[n] if vectors is not None else None
        same = by_text.get(normalize_text(candidate.text))
        if same is not None:
            decisions.append(Decision("NOOP", candidate, same.id, "already remembered"))
            continue
        by_slot = _by_slot(candidate, slotted)
        if by_slot is not None:
            if by_slot.action != "NONE":
                decisions.append(by_slot)
            continue
        words = mine[n]
        scored = sorted(
            ((_similarity(candidate.text, words, vector, k), k) for k in knowns),
            key=lambda pair: -pair[0],
        )
        target, why = _slot_target(candidate, scored)
        covered = next(
            (k for s, k in scored if words and words <= k.words and s >= CORRECT_AT), None
        )
        if target is None and covered is not None:
            entry_id = covered.entry.id if covered.entry is not None else None
            decisions.append(Decision("NOOP", candidate, entry_id, "covered"))
            continue
        correction = candidate.type == "correction"
        for sim, known in scored if target is None else ():
            if (
                correction
                and sim >= CORRECT_AT
                and _names_enough(candidate, known)
                and (words & known.words) - _FRAME_WORDS
            ):  # "switched to tab 3" shares "uses" alone with "Uses Firefox as the browser"
                target, why = known, f"corrects ({sim:.2f} similar)"
            elif sim >= DETAIL_AT and (known.words <= words or _same_opening(candidate, known)):
                target, why = known, f"adds a detail ({sim:.2f} similar)"
            elif sim >= REWORD_AT and (known.entry is None or known.entry.type == candidate.type):
                target, why = known, f"rewords ({sim:.2f} similar)"
            if target is not None or sim < CORRECT_AT:
                break
        if target is None:
            decisions.append(Decision("ADD", candidate, None, "new", candidate.text))
            knowns.append(_Known(candidate.text, None, vector, len(decisions) - 1, (math.inf, n)))
            continue
        if target.decision is not None:  # said earlier in this conversation: replace it
            earlier = decisions[target.decision]
            decisions[target.decision] = Decision(
                "NOOP", earlier.candidate, earlier.entry_id, "corrected later in the conversation"
            )
        if target.entry is None:
            decisions.append(Decision("ADD", candidate, None, why, candidate.text))
        else:
            # the statement replaces the entry's text as a whole (DESIGN §7): never spliced
            # into old clauses it keeps ("…; ask her before …" once "her" is someone else)
            decisions.append(Decision("UPDATE", candidate, target.entry.id, why, candidate.text))
        target.text, target.vector = candidate.text, vector
        target.words = words
        target.decision = len(decisions) - 1
        target.age = (math.inf, n)
    # one entry updated twice in a plan: a value given up and a new one beside it are one
    # change, the new value ("I no longer have a manager; I report to the CTO")
    news = {d.entry_id for d in decisions if d.action == "UPDATE" and d.candidate.drop == ""}
    decisions = [
        d
        for d in decisions
        if not (d.action == "UPDATE" and d.candidate.drop in GIVEN_UP and d.entry_id in news)
    ]
    # an entry this plan updates is not also "already remembered" ("在阿里干了五年，…辞职了，
    # 现在在深度求索上班": the first clause restates what the turn then changes)
    updated = {d.entry_id for d in decisions if d.action == "UPDATE"}
    return [
        d
        for d in decisions
        if not (d.action == "NOOP" and d.entry_id in updated and d.reason != "already remembered")
    ]


def screen(decisions: Sequence[Decision]) -> list[Decision]:
    """ADD / UPDATE decisions whose statement looks like it holds a credential, or that
    `add` would refuse (control characters, too long), become SKIP with the reason.
    Credentials are redacted from every decision's text: the report is printed."""
    screened = []
    for decision in decisions:
        c = decision.candidate
        stored = decision.stored
        found = find(c.text) or (find(stored) if stored else [])
        if found:
            c = replace(c, text=redact(c.text), said=redact(c.said))
            stored = redact(stored) if stored else stored
        if decision.action in ("ADD", "UPDATE"):
            problem = (
                f"looks like it holds {describe(found)}: not remembered (use `memcli add "
                "--allow-secret` if it must be)"
                if found
                else text_problem(stored or c.text, "the statement")
            )
            if problem:
                screened.append(Decision("SKIP", c, None, problem))
                continue
        screened.append(replace(decision, candidate=c, stored=stored))
    return screened
