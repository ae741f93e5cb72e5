"""The Memory facade: one object per workspace that the CLI, the MCP server and Python
callers all use. It holds the workspace's Runtime (settings, store, index, access
statistics, LLM) and hands each call to the service that does it:
memcli.services.entries (read, edit, log), .intake (add with its automatic maintenance,
extract, import), .inject and .search. Its upkeep (compress, reflect, forget, restore,
history, undo, doctor) is its base class, memcli.services.upkeep.Upkeep.

`search`, `inject`, `add`, `list` and `get` take the request a surface built
(memcli.core.requests) as is; a Python caller may give the plain arguments instead
(`search("text", limit=5)`), from which the request is built once. Search itself
(validation, filters, the ranked hits) is still done here, on its way to
services/search.py."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.core.requests import AddRequest, GetRequest, InjectRequest, ListRequest, SearchQuery
from memcli.services.runtime import Runtime, shared_key
from memcli.services.upkeep import Upkeep
from memcli.store.workspace import Resolved

# A read (search, inject, get) imports only what it uses: the services that edit, add,
# review or maintain are imported by the methods that call them (tests/process/
# test_cold_imports.py holds the cold read path's module list).
if TYPE_CHECKING:
    from memcli.core.models import Entry
    from memcli.index.embedder import Embedder
    from memcli.index.sync import Progress, SyncReport
    from memcli.logic.extract import Decision
    from memcli.logic.inject import Packed
    from memcli.logic.search import Hit
    from memcli.services.conversations import ImportedConversation
    from memcli.services.entries import AddResult, EntryDetail
    from memcli.services.indexing import IndexManager
    from memcli.services.search import SearchService, SearchView
    from memcli.store.access import AccessStats
    from memcli.store.config import Settings
    from memcli.store.store import Store


class Memory(Upkeep):
    """Long-term memory of one workspace.

    >>> mem = Memory("workspace")           # doctest: +SKIP
    >>> mem.add("Prefers pytest", type="preference")  # doctest: +SKIP
    """

    def __init__(
        self,
        workspace: str | Path | None = None,
        *,
        settings: Settings | None = None,
        env: Mapping[str, str] | None = None,
        embedder_factory: Callable[[], Embedder] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.runtime = Runtime(
            workspace,
            settings=settings,
            env=env,
            embedder_factory=embedder_factory,
            notify=notify,
        )
        self.root: Path = self.runtime.root
        self.store: Store = self.runtime.store
        self._embedder_factory = embedder_factory
        self._searcher: SearchService | None = None

    # ------------------------------------------------------------------ setup

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def access(self) -> AccessStats:
        return self.runtime.access

    @property
    def index_manager(self) -> IndexManager:
        return self.runtime.index_manager

    @property
    def searcher(self) -> SearchService:
        """Searches over the index (memcli.services.search)."""
        if self._searcher is None:
            from memcli.services.search import SearchService

            self._searcher = SearchService(self.store, self.index_manager, self.settings)
        return self._searcher

    def init(self) -> list[Path]:
        """Create the workspace files that are missing (and `.gitattributes` naming the
        entry-aware merge driver, registered when the workspace is in a git
        repository); returns the files created."""
        from memcli.store.gitmerge import setup
        from memcli.store.links import follow
        from memcli.store.workspace import init_workspace

        follow(self.root, ".gitattributes")  # a refused link: refused before any write
        had_attributes = (self.root / ".gitattributes").exists()
        created = init_workspace(self.root)
        setup(self.root)
        if not had_attributes and (self.root / ".gitattributes").exists():
            created.append(self.root / ".gitattributes")
        return created

    def ready(self) -> Store:
        """The store, once the workspace is known to exist (WorkspaceError otherwise)."""
        return self.runtime.require()

    _ready = ready  # the search block's spelling, until it moves to services/search.py

    def long_lived(self) -> None:
        """Serve many requests from this process (the watch daemon): new
        embeddings and access counts stay in memory until `flush()`."""
        self.runtime.long_lived()

    def flush(self) -> None:
        """Write what `long_lived` kept in memory (access counts, embeddings)."""
        self.runtime.flush()

    # ------------------------------------------------------------------ reading

    def entries(self, include_archived: bool = False) -> list[Entry]:
        from memcli.services import entries

        return entries.all_entries(self.runtime, include_archived)

    def list(
        self,
        request: ListRequest | None = None,
        *,
        types: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        keywords: Sequence[str] | None = None,
        include_archived: bool = False,
        pinned: bool = False,
        sort: str = "file",
        limit: int | None = None,
    ) -> list[Entry]:
        """Entries filtered by type, creation time, keyword and pin; in file order, or
        sorted by `created` / `updated` (newest first, undated last) or `importance`
        (highest first); at most `limit`. The selection is `request`, or the one the
        keyword arguments describe."""
        if request is None:
            request = ListRequest(
                types=tuple(types or ()),
                keywords=tuple(keywords or ()),
                since=since,
                until=until,
                include_archived=include_archived,
                pinned=pinned,
                sort=sort,
                limit=limit,
            )
        from memcli.services import entries

        return entries.list_entries(self.runtime, request)

    def get(self, entry: str | GetRequest) -> EntryDetail:
        """One entry (by id, or a GetRequest) with its access statistics."""
        from memcli.services import entries

        entry_id = entry.entry_id if isinstance(entry, GetRequest) else entry
        return entries.get(self.runtime, entry_id)

    def stats(self, *, days: float = 30.0) -> dict[str, Any]:
        """Counts by type and by file, archive size, and how the memory is used: average
        importance, entries with keywords, those no search or inject returned in the
        last `days` days, the most used (memcli.services.stats)."""
        from memcli.services.stats import summary

        return summary(self.runtime, days)

    # ------------------------------------------------------------------ index and search

    def index(self, *, rebuild: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date (from scratch with rebuild)."""
        self._ready()
        report = self.index_manager.sync(rebuild=rebuild, progress=progress)
        if self._embedder_factory is None and self.settings.index.onnx:
            from memcli.index import onnx_embedder, query_engine

            manager = self.index_manager
            if not onnx_embedder.is_exported(manager.model_id):
                query_engine.export(self.settings.index.model, manager.embedder)
        return report

    def search(
        self,
        query: str | SearchQuery,
        *,
        mode: str | None = None,
        types: Sequence[str] | None = None,
        keywords: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
        min_score: float | None = None,
        include_archived: bool = False,
        touch: bool = True,
        progress: Progress | None = None,
        floor: float | None = None,
    ) -> list[Hit]:
        """Ranked entries for a SearchQuery, or for `query` text and the keyword
        arguments (see memcli.logic.search for the formula); hits whose relevance is
        below `floor` are left out (default: search.relevance_floor, or none when
        `min_score` is given: the person's own threshold replaces the floor)."""
        if isinstance(query, SearchQuery):
            q = query
        else:
            q = SearchQuery(
                query,
                mode=mode,
                types=tuple(types or ()),
                keywords=tuple(keywords or ()),
                since=since,
                until=until,
                limit=limit,
                min_score=min_score,
                include_archived=include_archived,
                touch=touch,
            )
        return self._search(q, progress, floor)

    def _search(self, q: SearchQuery, progress: Progress | None, floor: float | None) -> list[Hit]:
        from memcli.services.search import checked_hits

        if floor is None and q.min_score is not None:  # asked for: replaces the floor
            floor = 0.0
        if q.query and (q.mode or self.settings.search.mode) != "keyword":
            self.index_manager.start_query_embedder([q.query])  # while the index loads
        hits = checked_hits(self.searcher, q, self._ready, self.access.load, progress, floor)
        if q.touch and hits:
            self.access.touch(h.entry.id for h in hits)
        return hits

    def _search_view(self, progress: Progress | None) -> tuple[object, SearchView]:
        """The index backend and the entries in view (memcli.services.search)."""
        self._ready()
        view = self.searcher.view(progress)
        return self.index_manager.backend, view

    # ------------------------------------------------------------------ inject

    def inject(
        self,
        context: str | InjectRequest | None = None,
        *,
        max_tokens: int | None = None,
        encoding: str | None = None,
        fmt: str = "markdown",
        types: Sequence[str] | None = None,
        touch: bool = True,
    ) -> Packed:
        """A memory block of at most `max_tokens` tokens for a prompt: for an
        InjectRequest, or for `context` and the keyword arguments.

        Pinned entries go into every block, first; corrections come first where they are
        relevant to the context. With context, the others must earn their place:
        relevant to the context (memcli.logic.inject.is_relevant: above the relevance
        floor) or a profile entry (a preference of importance ≥ profile_importance);
        they rank by similarity_weight · search score
        against the context + confidence_weight · confidence, and nothing else
        fills the block. Without context, every entry ranks by importance × confidence ×
        recency. Entries that make it into the block count as accessed (they
        were recalled), unless touch is False.
        """
        from memcli.services.inject import inject

        if isinstance(context, InjectRequest):
            request = context
        else:
            request = InjectRequest(context, max_tokens, encoding, fmt, tuple(types or ()), touch)
        # every hit: inject has its own relevance rule (memcli.logic.inject.is_relevant)
        search = functools.partial(self.search, floor=0.0)
        return inject(self.runtime, request, search, lambda: self._search_view(None)[1])

    # ------------------------------------------------------------------ extract, import

    def extract(
        self, messages: Sequence[dict], *, source: str | None = None, dry_run: bool = False
    ) -> list[Decision]:
        """Turn a conversation into entries (the configured LLM, else offline rules),
        deciding ADD / UPDATE / NOOP for each statement; with dry_run nothing is written.
        An LLM failure raises before anything is written."""
        from memcli.services import intake

        return intake.extract(self.runtime, messages, source=source, dry_run=dry_run)

    def import_items(
        self,
        items: Sequence[Any],
        *,
        dry_run: bool = False,
        source: str | None = None,
        by: str = "import",
    ) -> list[tuple[str, Any, str | None]]:
        """Add imported memories (`memcli.adapters.portability.ImportItem`) through `add`:
        each gives ("add", item, id) or ("exists", item, id of the entry it repeats); with
        dry_run nothing is written (ids of new entries are None). by="person" files them
        as the person's own (`--as-mine`); otherwise their corrections, pins and
        importance ≥ 0.9 wait for `memcli review`."""
        from memcli.services import intake

        return intake.import_items(self.runtime, items, dry_run=dry_run, source=source, by=by)

    def import_conversation(
        self, text: str, source: str, *, dry_run: bool = False
    ) -> list[ImportedConversation]:
        """Import the conversations in `text` (OpenAI-style messages, ChatGPT's
        conversations.json, LoCoMo-style JSON; `source` names the file) as ordered logs
        under conversations/, one entry per turn; with dry_run nothing is written."""
        from memcli.adapters.conversations import parse_conversations
        from memcli.services.conversations import import_conversations

        found = parse_conversations(text, source)
        return import_conversations(self.runtime, found, dry_run=dry_run)

    # ------------------------------------------------------------------ writing

    def add(
        self,
        text: str | AddRequest,
        *,
        type: str = "fact",  # noqa: A002 - the CLI flag's name
        importance: float | None = None,
        confidence: float | None = None,
        keywords: Sequence[str] | None = None,
        source: str | None = None,
        pin: bool = False,
        allow_secret: bool = False,
        by: str = "agent",
    ) -> AddResult:
        """Add an entry (an AddRequest, or `text` and the keyword arguments), or update
        the existing entry with the same normalized text; then the automatic reflect /
        compress when memcli.toml turns them on.

        `by` says who wrote it (`by=` metadata, docs/maintenance.md): "agent" (the default: a
        program through the API or MCP) may fade with age; "person" (the CLI) never does,
        and a person repeating an entry a program wrote confirms it.

        Text that looks like it holds a credential is refused unless allow_secret, which
        marks the entry `secret=ok` (inject leaves unmarked ones out)."""
        if isinstance(text, AddRequest):
            request = text
        else:
            request = AddRequest(
                text,
                type=type,
                importance=importance,
                confidence=confidence,
                keywords=None if keywords is None else tuple(keywords),
                source=source,
                pin=pin,
                allow_secret=allow_secret,
                by=by,
            )
        from memcli.services import intake

        return intake.add(self.runtime, request)

    def edit(
        self,
        entry_id: str,
        *,
        text: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        keywords: Sequence[str] | None = None,
        source: str | None = None,
        pin: bool | None = None,
        allow_secret: bool = False,
        by: str = "agent",
    ) -> Entry:
        """Change an entry's text and/or metadata; stamps its id. New text that looks
        like it holds a credential is refused unless allow_secret, which marks the entry
        `secret=ok` (also for its current text). New text without `keywords` recomputes
        the automatic keywords (memcli.logic.keywords.recomputed_keywords); keywords a
        person set stay.

        `by` says who edits, as for `add` and `forget`: "agent" (the default: a program
        through the API) changes what a program wrote and nobody confirmed in place (its
        pin or importance ≥ 0.9 waits in `memcli review`); an entry the person stands
        behind (hand-written, added, confirmed, pinned) stays as it is, and the agent's
        version waits beside it as a proposal, which is returned (`review=rewrite:ID`,
        as extract's rewrite): `review confirm` gives the person's entry its text,
        `review reject` archives it. "person" (`memcli edit`) applies everything and
        marks the entry the person's: it no longer fades with age."""
        from memcli.services import edits
        from memcli.services.review import agent_edit

        changes = edits.Changes(
            text, importance, confidence, keywords, source, pin, allow_secret=allow_secret
        )
        if by == "person":
            return edits.edit(self.runtime, entry_id, changes, by="person")
        return agent_edit(self.runtime, entry_id, changes, by=by)

    def log(
        self,
        text: str,
        *,
        importance: float | None = None,
        keywords: Sequence[str] | None = None,
        allow_secret: bool = False,
    ) -> Entry:
        """Append a timestamped note to today's episode file (episodes/YYYY-MM-DD.md)."""
        from memcli.services import entries

        return entries.log(
            self.runtime, text, importance=importance, keywords=keywords, allow_secret=allow_secret
        )


_SHARED: dict[tuple[object, ...], Memory] = {}


def shared_memory(workspace: str | Path | None = None) -> Memory:
    """One Memory per workspace and settings in this process, so a long-lived process
    (the watch daemon) keeps its model and index warm across requests."""
    key = shared_key(workspace)
    root = key[0]
    if key not in _SHARED:
        for old in [k for k in _SHARED if k[0] == str(root)]:
            del _SHARED[old]  # settings changed: start over with the new ones
        _SHARED[key] = Memory(Resolved(root))  # resolved by shared_key: taken as is
    return _SHARED[key]
