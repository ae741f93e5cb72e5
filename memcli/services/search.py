"""Search over an index backend: the entries in view, the filter mask, the candidate
pool (each retriever's top `candidate_pool`, plus their file neighbours) and its raw
scores, handed to the ranking formula (memcli.logic.search.rank).

Everything the backend is asked is keyed by entry id (memcli.index.backend); positions
here are positions in the view's entry list (file order, first of each id), which the
ranking and the neighbour boost work with.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from functools import cached_property
from itertools import compress, count, repeat
from operator import is_not
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli.core.dates import Period, named_periods
from memcli.core.errors import ConflictError
from memcli.core.filters import expand_query
from memcli.core.models import ARCHIVE_FILE, PIN_KEY, Entry, column
from memcli.index.sync import Progress, query_text, unique_entries
from memcli.services.indexing import IndexManager
from memcli.store.config import Settings
from memcli.store.store import Store

if TYPE_CHECKING:
    from memcli.core.requests import InjectRequest, SearchQuery
    from memcli.logic.inject import Packed
    from memcli.logic.search import EntryArrays, Hit, Signals
    from memcli.services.runtime import Runtime

#: entries -> the entries a search may return (the --type/--since/--until/--keyword filters)
EntryFilter = Callable[[list[Entry]], list[Entry]]


class SearchView:
    """Entries in file order (first of each id) and what ranking derives from them, each
    derived once and only when asked for (a one-off search never needs the inject
    orderings). The ids and files of every entry are read as columns (memcli.core.models.
    column): the index's snapshot makes an Entry only of those asked for by position."""

    def __init__(self, ordered: Sequence[Entry]) -> None:
        self.ordered = ordered

    @cached_property
    def arrays(self) -> EntryArrays:
        from memcli.logic.search import EntryArrays

        return EntryArrays(self.ordered)

    @cached_property
    def position_of(self) -> dict[str, int]:
        ids = self.ids
        return dict(zip(ids, range(len(ids)), strict=True))

    @cached_property
    def ids(self) -> Sequence[str]:
        """The entries' ids, in order."""
        return column(self.ordered, "id")

    @cached_property
    def not_archived(self) -> np.ndarray:
        files = column(self.ordered, "file")
        return np.fromiter(map(ARCHIVE_FILE.__ne__, files), dtype=bool, count=len(files))

    @cached_property
    def any_archived(self) -> bool:
        return not bool(self.not_archived.all())

    @cached_property
    def live_ids(self) -> frozenset[str]:
        """Ids of the entries not archived (the backend memoizes its mask per set)."""
        return frozenset(compress(self.ids, self.not_archived.tolist()))

    @cached_property
    def by_confidence(self) -> list[Entry]:
        """Not archived, most confident first (file order on ties)."""
        live = (e for e in self.ordered if e.file != ARCHIVE_FILE)
        return sorted(live, key=lambda e: -e.confidence)

    @cached_property
    def pinned(self) -> list[Entry]:
        """Not archived, pinned by a person (memcli.logic.inject_choice.is_pinned); most
        confident first (file order on ties)."""
        from memcli.logic.inject_choice import is_pinned  # inject's: a search never asks

        if not self._from_snapshot:
            return [e for e in self.by_confidence if is_pinned(e)]
        # the index's snapshot: make only the entries whose bytes hold a pin key
        maybe = self.ordered.holding(PIN_KEY)  # type: ignore[attr-defined]
        return [e for e in self._most_confident(maybe) if is_pinned(e)]

    def of_types(self, types: frozenset[str]) -> list[Entry]:
        """Not archived, of `types`, most confident first (file order on ties): from the
        index's snapshot only those entries are made (a cold inject's profile entries,
        not all 10k)."""
        memo = self.__dict__.setdefault("_of_types", {})
        if types not in memo:
            if not self._from_snapshot:
                memo[types] = [e for e in self.by_confidence if e.type in types]
            else:
                kinds = column(self.ordered, "type")
                memo[types] = self._most_confident([i for i, t in enumerate(kinds) if t in types])
        return memo[types]

    @property
    def _from_snapshot(self) -> bool:
        """Whether a few entries are best made from the index's snapshot: it is one, and
        by_confidence (every entry made) was not asked for yet."""
        return "by_confidence" not in self.__dict__ and hasattr(self.ordered, "holding")

    def _most_confident(self, positions: list[int]) -> list[Entry]:
        """The entries at `positions` (in order) not archived, most confident first."""
        keep, ordered = self.not_archived, self.ordered
        live = [ordered[i] for i in positions if keep[i]]
        return sorted(live, key=lambda e: -e.confidence)

    @classmethod
    def after(cls, previous: SearchView, ordered: list[Entry]) -> SearchView:
        """The view of `ordered`, reusing what `previous` derived when every position
        holds an entry of the same id, file and type as before (edits in place, lines
        moved at most): the id positions, the archive mask and the ranking arrays are
        kept, their values read again where the text or metadata changed; otherwise built
        anew."""
        view = cls(ordered)
        before = previous.ordered
        if len(before) != len(ordered):
            return view
        changed = compress(count(), map(is_not, before, ordered))
        edited = []
        for position in changed:
            old, new = before[position], ordered[position]
            if old.id != new.id or old.file != new.file or old.type != new.type:
                return view
            if old.meta is not new.meta or old.text is not new.text:
                edited.append(position)
        kept = previous.__dict__
        for name in ("position_of", "ids", "not_archived", "any_archived", "live_ids"):
            if name in kept:
                view.__dict__[name] = kept[name]
        if "arrays" in kept:
            positions = np.array(edited, dtype=np.int64)
            view.__dict__["arrays"] = previous.arrays.edited(ordered, positions)
        return view

    def positions(self, ids: list[str]) -> np.ndarray:
        """Positions of `ids` (ids not in view dropped)."""
        found = map(self.position_of.get, ids, repeat(-1))  # no Python frame per id
        result = np.fromiter(found, dtype=np.int64, count=len(ids))
        return result[result >= 0]


class SearchService:
    """Searches of one workspace: its index (IndexManager) and settings."""

    def __init__(self, store: Store, indexer: IndexManager, settings: Settings) -> None:
        self.store = store
        self.indexer = indexer
        self.settings = settings
        self._view: tuple[tuple[object, ...], SearchView] | None = None

    def view(self, progress: Progress | None = None) -> SearchView:
        """The current entries with what ranking derives from them, after bringing the
        index up to date; reused while neither the index nor the files change."""
        store = self.store
        for _ in range(5):  # a file may change between syncing the index and parsing it
            backend = self.indexer.ensure(progress=progress)
            revision = backend.revision()
            snapshot = self.indexer.snapshot_entries()
            if snapshot is not None:  # the files are as indexed: no need to parse them
                objects: tuple[object, ...] = (snapshot,)
            else:
                objects = tuple(
                    store.load(name) for name in store.entry_files(include_archived=True)
                )
            memo = self._view
            if (
                memo is not None
                and memo[0][0] == revision
                and len(memo[0]) == len(objects) + 1
                and all(a is b for a, b in zip(memo[0][1:], objects, strict=True))
            ):
                return memo[1]
            if snapshot is not None:
                ordered = snapshot
                break
            ordered = unique_entries([e for doc in objects for e in doc.entries()])  # type: ignore[attr-defined]
            have = {e.id for e in ordered}
            if self.indexer.behind or all(i in have for i in backend.fingerprint().keys):
                break  # (an index left behind by another writer is searched as it is)
        else:
            raise ConflictError("the workspace kept changing during the search; try again")
        view = SearchView(ordered) if memo is None else SearchView.after(memo[1], ordered)
        self._view = ((revision, *objects), view)
        return view

    def search(
        self,
        query: str,
        *,
        mode: str,
        limit: int,
        min_score: float,
        floor: float | None = None,
        include_archived: bool,
        entry_filter: EntryFilter | None,
        now: dt.datetime,
        access: Any,
        progress: Progress | None = None,
    ) -> list[Hit]:
        """Ranked entries for `query` (see memcli.logic.search for the formula)."""
        from memcli.logic.search import rank

        cfg = self.settings.search
        view = self.view(progress)
        ordered = view.ordered
        allowed_ids: frozenset[str] | set[str] | None
        if entry_filter is None and include_archived:
            allowed, allowed_ids = np.ones(len(ordered), dtype=bool), None
        elif entry_filter is None:
            allowed = view.not_archived
            # nothing archived: no id set for the backend to turn into a mask
            allowed_ids = view.live_ids if view.any_archived else None
        else:
            chosen = entry_filter(
                [e for e in ordered if include_archived or e.file != ARCHIVE_FILE]
            )
            allowed = np.zeros(len(ordered), dtype=bool)
            allowed[[view.position_of[e.id] for e in chosen]] = True
            allowed_ids = {e.id for e in chosen}
        neighbours = view.arrays.near if cfg.neighbour_weight > 0 else None
        periods = named_periods(query, now) if cfg.date_weight > 0 else []
        signals = self.signals(query, mode, view, allowed, allowed_ids, neighbours, periods)
        return rank(
            ordered,
            signals,
            settings=cfg,
            mode=mode,
            now=now,
            access=access,  # shown by --explain; never moves a score
            neighbours=neighbours is not None,
            limit=limit,
            min_score=min_score,
            floor=floor,
            arrays=view.arrays,
            periods=periods,
        )

    def signals(
        self,
        query: str,
        mode: str,
        view: SearchView,
        allowed: np.ndarray,
        allowed_ids: frozenset[str] | set[str] | None,
        neighbours: np.ndarray | None,
        periods: list[Period] | None = None,
    ) -> Signals:
        """Candidate positions (each retriever's top `candidate_pool`, plus their
        neighbours when neighbour_weight is on, plus the entries created in a period the
        query names when there are at most `candidate_pool` of them) with their raw
        scores."""
        from memcli.logic.search import Signals, in_periods

        pool = self.settings.search.candidate_pool
        backend = self.indexer.backend
        keyword_query = expand_query(query, self.settings.synonyms)
        found = backend.keyword_search(keyword_query, pool, allowed_ids)
        kw_top = view.positions(found.ids)
        if mode == "keyword":
            order = np.argsort(kw_top)
            kw_scores = found.scores[: len(found.ids)]
            if len(kw_top) != len(found.ids):  # ids the view lacks (a file changed)
                kw_scores = backend.keyword_scores(
                    keyword_query, [view.ordered[p].id for p in kw_top]
                )
            return Signals(
                kw_top[order],
                np.zeros(len(kw_top)),
                kw_scores[order],
                backend.keyword_ideal(keyword_query),
            )
        qvec = self.indexer.query_embedder.embed([query_text(query, self.indexer.glossed)])[0]
        sem_top = view.positions(backend.dense_search(qvec, pool, allowed_ids).ids)
        # unions as a mask over all positions (sorted, unique): np.union1d would import
        # numpy.ma, ≈ 16 ms of a one-off search
        chosen = np.zeros(len(allowed), dtype=bool)
        chosen[sem_top] = True
        if mode != "semantic":
            chosen[kw_top] = True
        if periods:
            dated = np.flatnonzero(allowed & (in_periods(view.arrays.created, periods) > 0))
            if len(dated) <= pool:
                chosen[dated] = True
        if neighbours is not None:
            near = neighbours[np.flatnonzero(chosen)].ravel()
            near = near[near >= 0]
            chosen[near[allowed[near]]] = True
        positions = np.flatnonzero(chosen)
        in_view = view.ids
        ids = [in_view[p] for p in positions.tolist()]
        sem = backend.dense_scores(qvec, ids)
        query_read = self.reads(query)
        return Signals(
            positions,
            sem,
            backend.keyword_scores(keyword_query, ids),
            backend.keyword_ideal(keyword_query),
            self.read_mask(query, query_read, view, positions),
            query_read,
        )

    def reads(self, query: str) -> bool:
        """Whether the embedding model reads `query` (memcli.index.coverage)."""
        from memcli.index import coverage

        return coverage.reads(self.settings.index.model, query)

    def read_mask(
        self, query: str, query_read: bool, view: SearchView, positions: np.ndarray
    ) -> np.ndarray | None:
        """Per candidate, how much the embedding model's cosine counts (0 to 1: it reads
        the query, `query_read`, and the entry, or part of the entry;
        memcli.index.coverage); None when it reads every script."""
        from memcli.index import coverage

        model = self.settings.index.model
        if coverage.multilingual(model):
            return None
        glossed = self.settings.search.gloss_vote if self.indexer.glossed else 0.0
        query_vote = 1.0 if query_read else glossed if coverage.has_han(query) else 0.0
        if query_vote <= 0.0:
            return np.zeros(len(positions), dtype=np.float64)
        ordered = view.ordered
        return np.fromiter(
            (
                min(query_vote, coverage.semantic_vote(model, ordered[p].text, glossed))
                for p in positions.tolist()
            ),
            dtype=np.float64,
            count=len(positions),
        )


class KeywordOnly:
    """Search over the keyword side alone, built in memory from the Markdown files: no
    embedding model and no index. What a hook answers with while the embeddings cannot
    be used yet (the one-time model preparation not done, the workspace never indexed):
    a block from the words the prompt shares with the memories rather than nothing.
    `search` and `view` have the shape memcli.services.inject.inject takes."""

    def __init__(self, store: Store, settings: Settings) -> None:
        from memcli.index.keyword import KeywordIndex
        from memcli.index.sync import keyword_text
        from memcli.index.tokenize import tokenize

        self.settings = settings
        entries = unique_entries(store.entries(include_archived=False))
        self._view = SearchView(entries)
        cfg = settings.search
        self.index = KeywordIndex.build(
            [tokenize(keyword_text(e)) for e in entries], cfg.bm25_k1, cfg.bm25_b
        )

    def view(self) -> SearchView:
        return self._view

    def search(
        self,
        query: str,
        *,
        types: Any = None,
        limit: int = 10,
        touch: bool = False,
        floor: float | None = None,
    ) -> list[Hit]:
        """The entries sharing words with `query`, ranked in keyword mode (`touch` is
        accepted and ignored: nothing is counted as accessed)."""
        from memcli.logic.search import Signals, rank, ranking_time

        ordered = self._view.ordered
        expanded = expand_query(query, self.settings.synonyms)
        scores = self.index.scores(expanded)
        allowed = scores > 0
        if types:
            allowed &= np.array([e.type in set(types) for e in ordered], dtype=bool)
        positions = np.flatnonzero(allowed)
        signals = Signals(
            positions, np.zeros(len(positions)), scores[positions], self.index.ideal(expanded)
        )
        return rank(
            ordered,
            signals,
            settings=self.settings.search,
            mode="keyword",
            now=ranking_time(),
            limit=limit,
            floor=0.0 if floor is None else floor,
            arrays=self._view.arrays,
        )


def inject_keyword_only(rt: Runtime, request: InjectRequest) -> Packed:
    """The inject block of `request` from the keyword side alone (KeywordOnly): relevance
    is a shared word, as in keyword mode; no model is loaded and no index is touched."""
    import dataclasses

    from memcli.services.inject import inject
    from memcli.services.runtime import Runtime

    search = dataclasses.replace(rt.settings.search, mode="keyword")
    settings = dataclasses.replace(rt.settings, search=search)
    keyword_rt = Runtime(rt.root, settings=settings, env=rt.env, notify=rt.notify)
    only = KeywordOnly(keyword_rt.store, settings)
    return inject(keyword_rt, request, only.search, only.view)


def checked_hits(
    service: SearchService,
    q: SearchQuery,
    ready: Callable[[], object],
    access: Callable[[], dict[str, Any]],
    progress: Progress | None = None,
    floor: float | None = None,
) -> list[Hit]:
    """The hits of `q` once its values are checked (an empty query, an unknown mode, a
    limit below 1: ValidationError) and then the workspace (`ready`); the `access`
    counts are shown by --explain, never move a score."""
    from memcli.core.errors import ValidationError
    from memcli.core.filters import filter_entries
    from memcli.core.validate import check_query
    from memcli.logic.search import check_mode, ranking_time

    if q.query is None or not q.query.strip():
        raise ValidationError("the search query is empty", hint="give some words to search for")
    check_query(q.query)
    cfg = service.settings.search
    mode = check_mode(q.mode or cfg.mode)
    limit = cfg.limit if q.limit is None else q.limit
    if limit < 1:
        raise ValidationError(f"--limit must be at least 1 (got {limit})")
    ready()
    entry_filter = None
    if q.types or q.since or q.until or q.keywords:

        def entry_filter(entries: list[Entry]) -> list[Entry]:
            return filter_entries(
                entries,
                types=q.types or None,
                since=q.since,
                until=q.until,
                keywords=q.keywords or None,
                synonyms=service.settings.synonyms,
            )

    return service.search(
        q.query,
        mode=mode,
        limit=limit,
        min_score=cfg.min_score if q.min_score is None else q.min_score,
        floor=floor,
        include_archived=q.include_archived,
        entry_filter=entry_filter,
        now=ranking_time(),
        access=access(),
        progress=progress,
    )
