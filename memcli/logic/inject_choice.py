"""Which entries may go into an inject block, and the score each competes with
(docs/search.md, Inject); memcli.logic.inject packs them.

With a context (context_candidates), an entry earns its place by being relevant to it:
its cosine to the context clears the relevance floor, or a lower one while it shares a
word with it (is_relevant); where the embedding model does not read the context or the
entry (memcli.index.coverage), the semantic side does not vote and a shared word of the
keyword side decides (relevant_hit). A pinned entry goes into every block, first; a
correction goes first into a block whose context it is relevant to, and into no other
(never into the block of "hi"); a preference important enough (is_profile) applies to
every conversation. Without a context (recall_candidates), every entry competes on
importance, confidence and recency, pinned ones first.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from memcli.core.models import DEFAULT_IMPORTANCE, Entry
from memcli.core.review import vouched
from memcli.logic.inject import SCAN_AT_LEAST, Candidate
from memcli.store.config import InjectSettings, SearchSettings

if TYPE_CHECKING:
    from memcli.logic.search import Hit


#: types of the profile entries that apply to every conversation (a correction is not
#: one: it goes into a block when it is relevant to the context)
PROFILE_TYPES = frozenset({"preference"})


def is_relevant(semantic: float, keyword: float, mode: str, cfg: InjectSettings) -> bool:
    """Whether an entry is relevant to an inject context, from its raw signals: the
    cosine similarity of the embeddings (`semantic`) and the BM25 score (`keyword`).

    Absolute, not min-max normalized: the best match of an off-topic context ("what's the
    capital of Peru") is still unrelated. A cosine ≥ relevance_floor is relevant; so is
    one ≥ keyword_relevance_floor when the entry also shares a word with the context
    (BM25 alone is no evidence: "What time is it in Tokyo?" shares "time" with
    "Time-boxing spikes..."). In keyword mode (no embeddings) any BM25 match counts.
    """
    if mode == "keyword":
        return keyword > 0
    if semantic >= cfg.relevance_floor:
        return True
    return keyword > 0 and semantic >= cfg.keyword_relevance_floor


def relevant_hit(
    hit: Hit,
    query: str,
    mode: str,
    cfg: InjectSettings,
    reads: Callable[[str], bool] | None = None,
) -> bool:
    """Whether a search hit for `query` is relevant to it; a weak one (below the
    search's bar) never is. Where `reads` (the embedding model reads a text:
    memcli.index.coverage.reads) says the model does not read the query or the entry,
    its cosine means nothing (to the bundled model any two Chinese sentences look
    alike): the semantic side does not vote, and the hit is relevant when it shares a
    word with the query (shared_word). Otherwise is_relevant decides."""
    if getattr(hit, "weak", False):
        return False
    keyword = hit.components["keyword"]
    if keyword <= 0 and (mode == "keyword" or hit.components["semantic"] < cfg.relevance_floor):
        return False  # neither side can make it relevant: no need to ask `reads`
    read = reads is None or (reads(query) and reads(hit.entry.text))
    if mode != "keyword" and not read:
        return keyword > 0 and shared_word(query, hit.entry.text)
    return is_relevant(hit.components["semantic"], keyword, mode, cfg)


def shared_word(query: str, text: str) -> bool:
    """Whether the two share a word of the keyword index of two or more characters (a
    stemmed word that is not a stop word, or a two-character Chinese word: the index's
    character bigrams), not a lone character."""
    return bool(_words(query) & _words(text))


@lru_cache(maxsize=50_000)
def _words(text: str) -> frozenset[str]:
    from memcli.index.tokenize import CJK_STOP_WORDS, tokenize

    return frozenset(t for t in tokenize(text) if len(t) >= 2 and t not in CJK_STOP_WORDS)


def _relevant_alone(hit: Hit, *, mode: str, cfg: InjectSettings) -> bool:
    return relevant_hit(hit, "", mode, cfg)


def is_profile(entry: Entry, cfg: InjectSettings) -> bool:
    """A preference important enough to apply to every conversation, that a person
    stands behind (memcli.core.review.vouched): what a program wrote
    competes on relevance only."""
    return (
        entry.type in PROFILE_TYPES
        and entry.importance >= cfg.profile_importance
        and vouched(entry)
    )


def is_priority(entry: Entry) -> bool:
    """Pinned entries and corrections a person stands behind go first into an inject
    block they are in (an agent's wait for review: memcli.core.review); of those, only
    pinned ones go into every block (is_pinned)."""
    return (entry.pinned or entry.type == "correction") and vouched(entry)


def is_pinned(entry: Entry) -> bool:
    """A pinned entry a person stands behind: it goes into every inject block."""
    return entry.pinned and vouched(entry)


def is_expired(entry: Entry, now: dt.datetime) -> bool:
    """Past its `expires=` time (an unreadable one never expires)."""
    try:
        expires = entry.expires
    except ValueError:
        return False
    return expires is not None and expires < now


def context_candidates(
    hits: Sequence[Hit],
    by_confidence: Sequence[Entry],
    priority: Sequence[Entry],
    cfg: InjectSettings,
    *,
    mode: str,
    wanted: frozenset[str],
    now: dt.datetime,
    budget: int,
    relevant: Callable[[Hit], bool] | None = None,
) -> list[Candidate]:
    """The candidates of a block for a context: the search `hits` for it (every one,
    best first) that earn their place, then profile entries the search did not return,
    then pinned entries it did not return. `relevant` says which hits are relevant to
    the context (default: relevant_hit without a model's coverage).

    `by_confidence` and `priority` are the workspace's entries not archived, most
    confident first (all of them, or at least those of PROFILE_TYPES; and the pinned ones
    and corrections, or at least the pinned ones); `wanted` the
    types asked for (empty: any). A hit earns its place when it is relevant to the
    context (is_relevant; a weak hit never is), a profile entry (is_profile) or pinned
    (is_pinned); it scores similarity_weight · its search score + confidence_weight ·
    confidence, and goes first when it is a priority entry (a correction only once it
    is relevant). The others score on confidence alone. Unrelated trivia never fills the
    budget, and neither do corrections about something else.
    """
    if relevant is None:
        relevant = functools.partial(_relevant_alone, mode=mode, cfg=cfg)
    candidates = [
        Candidate(
            h.entry,
            cfg.similarity_weight * h.score + cfg.confidence_weight * h.entry.confidence,
            is_priority(h.entry),
        )
        for h in hits
        if not is_expired(h.entry, now)
        and (is_pinned(h.entry) or is_profile(h.entry, cfg) or relevant(h))
    ]
    taken = {c.entry.id for c in candidates}
    # Profile entries the search did not return (beyond its candidate pool) are scored on
    # confidence alone.
    for entry in by_confidence:
        if (
            entry.id in taken
            or not is_profile(entry, cfg)
            or is_priority(entry)
            or (wanted and entry.type not in wanted)
            or is_expired(entry, now)
        ):
            continue
        candidates.append(Candidate(entry, cfg.confidence_weight * entry.confidence))
        taken.add(entry.id)
    # Pinned entries go in even when the search did not return them: the most confident
    # first, until they could fill the budget many times over (pack looks no further
    # than a few budgets' worth).
    spare = added = 0
    for entry in priority:
        if spare > 8 * budget and added >= 2 * SCAN_AT_LEAST:
            break
        if entry.id in taken or (wanted and entry.type not in wanted) or not is_pinned(entry):
            continue
        if not is_expired(entry, now):
            candidates.append(Candidate(entry, cfg.confidence_weight * entry.confidence, True))
            spare += len(entry.text) // 3 + 2
            added += 1
    return candidates


def recall_candidates(
    entries: Sequence[Entry], now: dt.datetime, settings: SearchSettings
) -> list[Candidate]:
    """The candidates of a block without a context: every entry not expired, scored by
    importance × confidence × recency; pinned ones first (nothing is relevant without
    a context, so a correction competes as any entry). The importance a program gave an
    entry counts up to the default only until a person stands behind it (vouched): an
    agent cannot put its own writes at the top of every session's first block."""
    from memcli.logic.search import EntryValues, recency

    kept = [e for e in entries if not is_expired(e, now)]
    recent = recency(EntryValues.of(kept), now, settings).tolist()
    return [
        Candidate(e, claimed_importance(e) * e.confidence * r, is_pinned(e))
        for e, r in zip(kept, recent, strict=True)
    ]


def claimed_importance(entry: Entry) -> float:
    """The importance a block without a context ranks an entry by: its own when a person
    stands behind it, else at most the default."""
    if vouched(entry):
        return entry.importance
    return min(entry.importance, DEFAULT_IMPORTANCE)
