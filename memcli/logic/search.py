"""Hybrid ranking: semantic (FAISS cosine) and keyword (BM25) relevance, blended, then
combined with recency, importance, confidence and the period a query names into one
score between 0 and 1, the number every hit shows and the list is sorted by.

    cosine    = the query's cosine to the entry, below 0 counted as 0; 0 where the
                embedding model does not read the query or the entry (the semantic side
                does not vote), in part where it reads part of the entry (a Chinese note
                naming English terms: memcli.index.coverage.semantic_vote)
    share     = bm25 / the query's keyword mass (Σ qtf · idf over its words: what an
                entry of average length holding each of them once scores), at most 1
    relevance = max(balanced, led): balanced weighs cosine and share by semantic_weight
                and keyword_weight; led gives the cosine `semantic_lead` of the weight.
                A clear semantic match needs no shared word, and an entry holding the
                query's rare words rises.
              [in ordered logs only: 1 - (1 - relevance)(1 - neighbour_weight · the
                best relevance of the adjacent entries)]
    score     = (relevance_weight · relevance + recency_weight · 0.5^(age/half_life)
                 + importance_weight · importance + confidence_weight · confidence
                 + date_weight · [created within a period the query names]
                 + correction_weight · relevance · (1 - relevance) · [a correction])
                / the sum of the first five weights (a correction's part keeps it ≤ 1)

Every part is in [0, 1] on a scale that does not depend on what else the query found, so
a score means the same in every query and every workspace: the weighted share of a
perfect match (docs/search.md). The blend and its weights were chosen on LoCoMo's tune
half and three personas' notes (bench/README.md, "One score").

Hits are kept when relevant enough: relevance at least `relevance_floor`, or, where the
model does not read the pair whole, a keyword share at least `keyword_floor` (a query
about something the memory never mentions returns nothing; in keyword mode a shared
word is the evidence, as in inject); `min_score` compares scores. Where the backend does
not know the query's keyword mass (Milvus keeps its BM25 statistics on the server), the
share is bm25 / (bm25 + keyword_saturation).

age_days counts from the entry's `updated`, else `created`: never from the
last time a search returned it, so the same query on the same files ranks the same way
every time; access statistics only show as a component. Entries a reflection cites rank
as they would without it (no penalty). Neighbours: in an ordered log (an episode file,
an imported conversation: memcli.core.models.is_sequence_file) an entry borrows from the
relevance of the entry just before or after it (a short reply means something only next
to the turn it answers); in memory.md and learnings.md adjacency means nothing and
nothing is borrowed. Periods: "in August 2023", "last May", "yesterday"
(memcli.core.dates.named_periods, relative to now).
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property

import numpy as np

from memcli.core.dates import Period
from memcli.core.errors import ValidationError
from memcli.core.models import (
    DEFAULT_CONFIDENCE,
    DEFAULT_IMPORTANCE,
    Entry,
    column,
    is_sequence_file,
    parse_time,
    unit_value,
    utc_now,
)
from memcli.core.requests import MODES
from memcli.logic.relevance import absolute_relevance, keyword_share
from memcli.store.access import Access
from memcli.store.config import SearchSettings


@dataclass(frozen=True)
class Hit:
    """One search result with every score component (for --explain)."""

    entry: Entry
    score: float
    components: dict[str, float] = field(default_factory=dict)
    #: the query found no strong match: this is one of its closest (never injected)
    weak: bool = False

    def to_dict(self, explain: bool = False) -> dict[str, object]:
        data: dict[str, object] = {
            "id": self.entry.id,
            "score": round(self.score, 6),
            "entry": self.entry.to_dict(),
        }
        if self.weak:
            data["weak"] = True
        if explain:
            data["components"] = {k: round(v, 6) for k, v in self.components.items()}
        return data


@dataclass(frozen=True)
class Signals:
    """Raw relevance signals of the candidate positions."""

    positions: np.ndarray  # int positions into the entry list
    semantic: np.ndarray  # cosine similarity, same order
    keyword: np.ndarray  # BM25 score, same order
    #: the query's keyword mass (the BM25 score counted as a full share); None: unknown
    keyword_ideal: float | None = None
    #: per candidate, how much the embedding model's cosine counts, 0 to 1 (1: it reads
    #: the query and the entry; less: it reads part of the entry; None: every pair)
    read: np.ndarray | None = None
    #: whether the embedding model reads the query
    query_read: bool = True


#: the closest hits a query without a strong match shows, each marked weak
WEAK_LIMIT = 3


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValidationError(
            f"unknown search mode {mode!r}", hint="use hybrid, semantic or keyword"
        )
    return mode


def score_weights(settings: SearchSettings) -> float:
    """The sum of the score's weights: a score is its weighted parts over this."""
    total = (
        settings.relevance_weight
        + settings.recency_weight
        + settings.importance_weight
        + settings.confidence_weight
        + settings.date_weight
    )
    return total if total > 0 else 1.0


def recency(values: EntryValues, now: dt.datetime, settings: SearchSettings) -> np.ndarray:
    """0.5^(age/half-life) of each entry of `values`, the age from the last update, else
    the creation (never from the last access: rankings do not depend on past searches);
    0.5 for an undated entry. Episodic notes fade faster (episode_half_life_days)."""
    half = np.where(values.episode, settings.episode_half_life_days, settings.half_life_days)
    age_days = np.maximum(0.0, (_seconds(now) - values.moment) / 86400.0)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(values.moment), 0.5, 0.5 ** (age_days / np.maximum(half, 1e-6)))


def ranking_time() -> dt.datetime:
    """Now, to the minute: recency changes too little within a minute to matter, and two
    processes answering the same query a few seconds apart print the same scores."""
    return utc_now().replace(second=0)


@dataclass(frozen=True)
class EntryValues:
    """What ranking reads of some entries, one array each, in their order."""

    importance: np.ndarray
    confidence: np.ndarray
    moment: np.ndarray  # POSIX seconds of the last update, else the creation (NaN: undated)
    episode: np.ndarray  # bool: recency halves with episode_half_life_days
    created: np.ndarray  # POSIX seconds of `created` (NaN: none)

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> EntryValues:
        # from the raw metadata strings, each distinct one converted once: the entries of
        # a new index generation are new objects, their cached properties not computed
        metas = [e.meta for e in entries]
        dated = [m.get("updated") or m.get("created") for m in metas]
        return cls(
            importance=_converted([m.get("imp") for m in metas], _importance, DEFAULT_IMPORTANCE),
            confidence=_converted([m.get("conf") for m in metas], _confidence, DEFAULT_CONFIDENCE),
            moment=_converted(dated, _moment, float("nan")),
            episode=np.array([e.type == "episode" for e in entries], dtype=bool),
            created=_converted([m.get("created") for m in metas], _moment, float("nan")),
        )

    def at(self, positions: np.ndarray) -> EntryValues:
        """The values of the entries at `positions` (copies)."""
        return EntryValues(*(getattr(self, f.name)[positions] for f in fields(self)))

    def replaced(self, positions: np.ndarray, part: EntryValues) -> EntryValues:
        """A copy with the values at `positions` replaced by `part`'s, in order."""
        arrays = [getattr(self, f.name).copy() for f in fields(self)]
        for whole, f in zip(arrays, fields(self), strict=True):
            whole[positions] = getattr(part, f.name)
        return EntryValues(*arrays)


class EntryArrays:
    """What ranking needs of the entries, as arrays in entry order, kept per index
    generation: a query's ranking is then array arithmetic over its candidates.

    The neighbours and the tie-break order are built at once (vectorized). Importance,
    confidence and dates are read for the candidates only on the first query, and for
    every entry from the second on: a one-off process pays for ~1k entries, a
    long-lived one converts each entry once.
    """

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = entries
        n = len(entries)
        files: dict[str, int] = {}
        types: dict[str, int] = {}
        file_code = _codes(column(entries, "file"), files)
        type_code = _codes(column(entries, "type"), types)
        # neighbours: the entries directly before and after, in the same file and type,
        # in ordered logs only (episodes, conversations; never memory.md / learnings.md)
        sequence = np.array([is_sequence_file(f) for f in files], dtype=bool)
        same = (
            (file_code[1:] == file_code[:-1])
            & (type_code[1:] == type_code[:-1])
            & sequence[file_code[1:]]
        )
        #: (n, 2) entries just before/after in the same ordered log and type; -1: none
        self.near = np.full((n, 2), -1, dtype=np.int64)
        if n > 1:
            self.near[1:, 0] = np.where(same, np.arange(n - 1), -1)
            self.near[:-1, 1] = np.where(same, np.arange(1, n), -1)
        file_rank = np.empty(len(files), dtype=np.int64)
        file_rank[[files[f] for f in sorted(files)]] = np.arange(len(files))
        lines = np.fromiter(column(entries, "line"), dtype=np.int64, count=n)
        #: rank of (file, line): the tie-break between equal scores
        self.order = np.empty(n, dtype=np.int64)
        self.order[np.lexsort((lines, file_rank[file_code]))] = np.arange(n)
        #: the values of every entry, read as queries first ask for them (`_known`)
        self._all: EntryValues | None = None
        self._known: np.ndarray | None = None

    @cached_property
    def created(self) -> np.ndarray:
        """POSIX seconds of every entry's `created` (NaN: none), for the entries of a
        period a query names (computed once per generation, only when one is named)."""
        if self._all is not None and self._known is not None and self._known.all():
            return self._all.created
        return _converted([e.meta.get("created") for e in self.entries], _moment, float("nan"))

    def edited(self, entries: Sequence[Entry], positions: np.ndarray) -> EntryArrays:
        """These arrays for `entries`, which hold at each position an entry of the same
        file and type as this generation's, in the same order (an edit in place, lines
        moved at most): the neighbours and the tie-break order stay; the values are
        read again at `positions` (where the text or metadata changed), and whatever a
        cached property derived from the entries is derived again when next asked."""
        arrays = copy.copy(self)
        arrays.entries = entries
        for name in list(vars(arrays)):
            if isinstance(getattr(type(self), name, None), cached_property):
                del arrays.__dict__[name]
        if self._all is not None and self._known is not None:
            fresh = EntryValues.of([entries[p] for p in positions.tolist()])
            arrays._all = self._all.replaced(positions, fresh)
            arrays._known = self._known.copy()
            arrays._known[positions] = True
        return arrays

    def values(self, positions: np.ndarray) -> EntryValues:
        """The values of the entries at `positions` (each entry's read once: an inject's
        several searches in a one-off process read the candidates of each, not every
        entry; a long-lived one ends up holding them all)."""
        if self._all is None or self._known is None:
            n = len(self.entries)
            self._all = EntryValues(*(np.zeros(n, dtype=t) for t in _VALUE_TYPES))
            self._known = np.zeros(n, dtype=bool)
        missing = positions[~self._known[positions]]
        if missing.size:
            fresh = EntryValues.of([self.entries[p] for p in missing.tolist()])
            for f in fields(EntryValues):  # in place: its arrays are this generation's own
                getattr(self._all, f.name)[missing] = getattr(fresh, f.name)
            self._known[missing] = True
        return self._all.at(positions)


def _codes(values: Sequence[str], codes: dict[str, int]) -> np.ndarray:
    """Each value's number in `codes` (numbered as first seen: `codes` grows)."""
    for value in dict.fromkeys(values):  # the distinct values, in order, at C speed
        codes.setdefault(value, len(codes))
    return np.fromiter(map(codes.__getitem__, values), dtype=np.int64, count=len(values))


#: the dtype of each EntryValues field, in order
_VALUE_TYPES = (np.float64, np.float64, np.float64, bool, np.float64)


def _converted(
    raw: list[str | None], convert: Callable[[str], float], default: float
) -> np.ndarray:
    memo: dict[str | None, float] = {None: default}
    out = np.empty(len(raw), dtype=np.float64)
    for i, value in enumerate(raw):
        found = memo.get(value)
        if found is None:
            found = memo[value] = convert(value)  # type: ignore[arg-type]
        out[i] = found
    return out


def _importance(raw: str) -> float:
    return unit_value(raw, DEFAULT_IMPORTANCE)


def _confidence(raw: str) -> float:
    return unit_value(raw, DEFAULT_CONFIDENCE)


def _moment(raw: str) -> float:
    """POSIX seconds of a metadata date (as Entry.updated / Entry.created read it)."""
    try:
        return _seconds(parse_time(raw))
    except ValueError:
        return float("nan")


def _seconds(moment: dt.datetime) -> float:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def rank(
    entries: Sequence[Entry],
    signals: Signals,
    *,
    settings: SearchSettings,
    mode: str,
    now: dt.datetime,
    access: Mapping[str, Access] | None = None,
    neighbours: bool = False,
    limit: int,
    min_score: float = 0.0,
    floor: float | None = None,
    arrays: EntryArrays | None = None,
    periods: Sequence[Period] = (),
) -> list[Hit]:
    """Score the candidates and return the best `limit` hits, best first (with
    `neighbours`, relevance borrows from adjacent entries of ordered logs). `arrays` are
    EntryArrays(entries), when the caller keeps them. `access` (statistics per id) only
    fills the `accesses` component: it never moves a score. `periods`: the periods the
    query names (entries created in one get `date_weight`). `floor`: the relevance a hit
    the model reads needs (default: relevance_floor; a hit it does not read needs a
    keyword share of keyword_floor; in keyword mode a shared word is enough). A query
    without a strong match (is_strong) gets hits marked weak, at most WEAK_LIMIT of them
    unless a `floor` was given (the caller's own threshold: every hit above it)."""
    if len(signals.positions) == 0:
        return []
    if arrays is None:
        arrays = EntryArrays(entries)
    positions = signals.positions.astype(np.int64)
    share = keyword_share(signals.keyword, signals.keyword_ideal, settings)
    read = signals.read
    relevance = absolute_relevance(signals.semantic, share, mode, settings, read)
    if neighbours and settings.neighbour_weight > 0:
        lent = settings.neighbour_weight * _best_neighbour(
            relevance, positions, arrays.near, len(entries)
        )
        relevance = 1.0 - (1.0 - relevance) * (1.0 - np.minimum(lent, 1.0))
    candidates = [entries[p] for p in positions.tolist()]
    values = arrays.values(positions)
    importance, confidence = values.importance, values.confidence
    rec = recency(values, now, settings)
    dated = in_periods(values.created, periods)
    corrects = np.array([e.type == "correction" for e in candidates], dtype=np.float64)
    scores = (
        settings.relevance_weight * relevance
        + settings.recency_weight * rec
        + settings.importance_weight * importance
        + settings.confidence_weight * confidence
        + settings.date_weight * dated
        + settings.correction_weight * relevance * (1.0 - relevance) * corrects
    ) / score_weights(settings)
    keep = scores >= min_score
    if mode == "keyword":
        keep &= signals.keyword > 0
    else:  # an entry of a period the query names is relevant by its date
        level = settings.relevance_floor if floor is None else floor
        relevant = relevance >= level
        if read is not None and mode == "hybrid":
            relevant |= (read < 1.0) & (share >= settings.keyword_floor)
        keep &= relevant | (dated > 0)
    kept = np.flatnonzero(keep)
    weak = not is_strong(
        relevance[kept], share[kept], dated[kept], signals.query_read, mode, settings
    )
    if weak and floor is None:  # the default floor: the closest few, not a list
        limit = min(limit, WEAK_LIMIT)
    order = kept[np.lexsort((arrays.order[positions][kept], -scores[kept]))][:limit]
    return [
        Hit(
            candidates[i],
            float(scores[i]),
            {
                "semantic": float(signals.semantic[i]),
                "keyword": float(signals.keyword[i]),
                "keyword_share": float(share[i]),
                "read": float(1.0 if read is None else read[i]),  # the cosine's vote
                "relevance": float(relevance[i]),
                "recency": float(rec[i]),
                "importance": float(importance[i]),
                "confidence": float(confidence[i]),
                "date": float(dated[i]),
                "correction": float(corrects[i]),
                "accesses": float(_accesses(access, candidates[i].id)),
            },
            weak,
        )
        for i in order.tolist()
    ]


def is_strong(
    relevance: np.ndarray,
    share: np.ndarray,
    dated: np.ndarray,
    query_read: bool,
    mode: str,
    settings: SearchSettings,
) -> bool:
    """Whether the kept hits of a query (their relevance, keyword share, period match)
    hold a strong match: one hit at least `strong_relevance` relevant, or, for a query
    the model does not read, with a keyword share of at least `strong_keyword`; an entry
    of the period the query names; in keyword mode any shared word. Otherwise every hit
    is weak: the closest there is, not an answer (docs/search.md, "What a score means")."""
    if mode == "keyword" or len(relevance) == 0 or bool((dated > 0).any()):
        return True
    if query_read or mode == "semantic":
        return float(relevance.max()) >= settings.strong_relevance
    return float(share.max()) >= settings.strong_keyword


def in_periods(created: np.ndarray, periods: Sequence[Period]) -> np.ndarray:
    """1.0 where `created` (POSIX seconds, NaN: undated) falls on a day of one of the
    periods (the day in UTC, as `created=` is written), else 0.0."""
    out = np.zeros(len(created), dtype=np.float64)
    if not periods or len(created) == 0:
        return out
    dated = ~np.isnan(created)
    days = np.floor(np.where(dated, created, 0.0) / 86400.0).astype(np.int64)
    epoch = dt.date(1970, 1, 1)
    months: np.ndarray | None = None
    for period in periods:
        if period.start is None:  # that month of any year
            if months is None:
                months = days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
                months = months % 12 + 1
            hit = months == period.month
        else:
            assert period.end is not None
            hit = (days >= (period.start - epoch).days) & (days <= (period.end - epoch).days)
        out[hit & dated] = 1.0
    return out


def _accesses(access: Mapping[str, Access] | None, entry_id: str) -> int:
    seen = access.get(entry_id) if access else None
    return seen.count if seen is not None else 0


def _best_neighbour(
    own: np.ndarray, positions: np.ndarray, near: np.ndarray, size: int
) -> np.ndarray:
    """For each candidate, the highest relevance among its neighbours that are candidates
    too (0 when none is)."""
    slot = np.full(size + 1, -1, dtype=np.int64)  # slot[-1] (no neighbour) stays -1
    slot[positions] = np.arange(len(positions))
    found = slot[near[positions]]  # (k, 2) candidate slots of the neighbours, -1: none
    values = np.where(found >= 0, own[np.maximum(found, 0)], 0.0)
    return np.maximum(values.max(axis=1), 0.0)
