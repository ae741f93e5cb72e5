"""The Memory facade: one object per workspace that the CLI, the MCP server and Python
callers all use. It wires the store, the index and the ranking together."""

from __future__ import annotations

import datetime as dt
import functools
import os
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli.core.errors import ConflictError, NotFoundError, ValidationError
from memcli.core.models import (
    ARCHIVE_FILE,
    BY_KEY,
    LEARNINGS_FILE,
    MEMORY_FILE,
    Entry,
    file_for_type,
    format_time,
    heading_type,
    is_valid_id,
    normalize_text,
    parse_time,
    slugify,
    utc_now,
)
from memcli.core.validate import (
    MAX_QUERY_CHARS,
    check_keywords,
    check_meta_value,
    check_query,
    check_text,
    clean_context,
    is_own_file,
)
from memcli.index.embedder import Embedder
from memcli.index.sync import Progress, SyncReport
from memcli.logic.keywords import extract_keywords
from memcli.services.indexing import IndexManager
from memcli.services.search import SearchService, SearchView, is_priority, synonyms_of
from memcli.store.access import Access, AccessStats
from memcli.store.config import Settings, load_settings
from memcli.store.markdown import Document, id_prefix_for
from memcli.store.store import Store
from memcli.store.workspace import init_workspace, require_workspace, resolve_workspace

if TYPE_CHECKING:
    from memcli.logic.extract import Decision
    from memcli.logic.inject import Packed
    from memcli.logic.reflect import Trigger
    from memcli.logic.search import Hit
    from memcli.store.changes import Applied, Plan


@dataclass(frozen=True)
class AddResult:
    """What `add` did: `action` is "added" or "updated" (an existing duplicate)."""

    entry: Entry
    action: str

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "entry": self.entry.to_dict()}


@dataclass(frozen=True)
class EntryDetail:
    """An entry with its access statistics (seed 001 get_memory_detail)."""

    entry: Entry
    access: Access

    def to_dict(self) -> dict[str, Any]:
        data = self.entry.to_dict()
        data["access_count"] = self.access.count
        data["last_accessed"] = self.access.last
        return data


def _operation(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Group the file writes of a Memory method as one operation of the history
    (`memcli history`, `memcli undo`); an outer operation names nested ones."""

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(*args: Any, **kwargs: Any) -> Any:
            from memcli.store.history import operation

            with operation(name):
                return method(*args, **kwargs)

        return run

    return wrap


class Memory:
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
        env = os.environ if env is None else env
        self.root = resolve_workspace(workspace, env)
        self.store = Store(self.root)
        self._settings = settings
        self._env = env
        self._embedder_factory = embedder_factory
        self._notify = notify or _notice_stderr
        self._index: IndexManager | None = None
        self._searcher: SearchService | None = None

    # ------------------------------------------------------------------ setup

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.root, self._env)
            if self._settings.ignored:
                from memcli.store.trust import untrusted_notice

                self._notify(untrusted_notice(self.root / "memcli.toml", self._settings.ignored))
        return self._settings

    @cached_property
    def access(self) -> AccessStats:
        return AccessStats(self.store.state_dir)

    @property
    def index_manager(self) -> IndexManager:
        if self._index is None:
            from memcli.index.embedder import SentenceTransformerEmbedder, model_id_for

            settings = self.settings.index
            bm25 = (self.settings.search.bm25_k1, self.settings.search.bm25_b)
            if self._embedder_factory is not None:
                self._index = IndexManager(
                    self.store, settings, self._embedder_factory, notify=self._notify, bm25=bm25
                )
                return self._index

            def fast_query() -> Embedder | None:
                from memcli.index import onnx_embedder

                model_id = model_id_for(settings.model)
                if not settings.onnx or not onnx_embedder.is_exported(model_id):
                    return None
                try:
                    return onnx_embedder.OnnxEmbedder(model_id, settings.model)
                except Exception:  # noqa: BLE001 - a broken export: use torch instead
                    return None

            def export_after_bulk(embedder: Embedder) -> None:
                from memcli.index import onnx_embedder

                if settings.onnx:
                    onnx_embedder.export(settings.model, embedder)

            self._index = IndexManager(
                self.store,
                settings,
                lambda: SentenceTransformerEmbedder(settings.model, settings.batch_size),
                notify=self._notify,
                query_factory=fast_query,
                after_bulk=export_after_bulk,
                bm25=bm25,
            )
        return self._index

    @property
    def searcher(self) -> SearchService:
        """Searches over the index (memcli.services.search)."""
        if self._searcher is None:
            self._searcher = SearchService(self.store, self.index_manager, self.settings)
        return self._searcher

    def init(self) -> list[Path]:
        """Create the workspace files that are missing (and `.gitattributes` naming the
        entry-aware merge driver, registered when the workspace is in a git
        repository); returns the files created."""
        from memcli.store.gitmerge import setup

        had_attributes = (self.root / ".gitattributes").exists()
        created = init_workspace(self.root)
        setup(self.root)
        if not had_attributes and (self.root / ".gitattributes").exists():
            created.append(self.root / ".gitattributes")
        return created

    def _ready(self) -> Store:
        require_workspace(self.root)
        return self.store

    # ------------------------------------------------------------------ reading

    def entries(self, include_archived: bool = False) -> list[Entry]:
        return self._ready().entries(include_archived)

    def list(
        self,
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
        (highest first); at most `limit`."""
        found = filter_entries(
            self.entries(include_archived),
            types=types,
            since=since,
            until=until,
            keywords=keywords,
            synonyms=self.settings.synonyms,
        )
        if pinned:
            found = [e for e in found if e.pinned]
        if sort in ("created", "updated"):
            oldest = dt.datetime.min.replace(tzinfo=dt.UTC)

            def moment(e: Entry) -> dt.datetime:
                when = (e.updated or e.created) if sort == "updated" else e.created
                return when or oldest

            found = sorted(found, key=moment, reverse=True)  # stable: file order in ties
        elif sort == "importance":
            found = sorted(found, key=lambda e: e.importance, reverse=True)
        elif sort != "file":
            raise ValidationError(
                f"unknown sort order {sort!r}", hint="file, created, updated or importance"
            )
        return found[:limit] if limit is not None else found

    def get(self, entry_id: str) -> EntryDetail:
        entry = self._find(entry_id, include_archived=True)
        return EntryDetail(entry, self.access.get(entry.id))

    def _find(self, entry_id: str, include_archived: bool = False) -> Entry:
        entry_id = entry_id.strip()
        found = [e for e in self.entries(include_archived) if e.id == entry_id]
        if not found and self._ready().settle():  # read mid-save? look again once quiet
            found = [e for e in self.entries(include_archived) if e.id == entry_id]
        live = [e for e in found if e.file != ARCHIVE_FILE]
        if len(live) > 1:
            raise ConflictError(
                f"id {entry_id} is used by {len(live)} entries: "
                + ", ".join(f"{e.file}:{e.line}" for e in live),
                hint="give one of them another id (edit its <!-- id=... --> comment)",
            )
        if found:
            return live[0] if live else found[0]
        where = "memory.md, learnings.md, episodes/" + (
            " or archive.md" if include_archived else ""
        )
        raise NotFoundError(
            f"no entry with id {entry_id!r} in {where} of {self.root}",
            hint="`memcli list` shows the ids",
        )

    def stats(self) -> dict[str, Any]:
        """Counts by type and by file, plus archive size."""
        entries = self.entries()
        archived = self.store.load(ARCHIVE_FILE).entries()
        return {
            "workspace": str(self.root),
            "entries": len(entries),
            "by_type": dict(sorted(Counter(e.type for e in entries).items())),
            "by_file": dict(Counter(e.file for e in entries)),
            "archived": len(archived),
            "pinned": sum(1 for e in entries if e.pinned),
        }

    # ------------------------------------------------------------------ index and search

    def index(self, *, rebuild: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index up to date (from scratch with rebuild)."""
        self._ready()
        report = self.index_manager.sync(rebuild=rebuild, progress=progress)
        if self._embedder_factory is None and self.settings.index.onnx:
            from memcli.index import onnx_embedder

            manager = self.index_manager
            if not onnx_embedder.is_exported(manager.model_id):
                onnx_embedder.export(self.settings.index.model, manager.embedder)
        return report

    def search(
        self,
        query: str,
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
    ) -> list[Hit]:
        """Ranked entries for `query` (see memcli.logic.search for the formula)."""
        from memcli.logic.search import check_mode

        if query is None or not query.strip():
            raise ValidationError("the search query is empty", hint="give some words to search for")
        check_query(query)
        cfg = self.settings.search
        mode = check_mode(mode or cfg.mode)
        limit = cfg.limit if limit is None else limit
        if limit < 1:
            raise ValidationError(f"--limit must be at least 1 (got {limit})")
        self._ready()
        entry_filter = None
        if types or since or until or keywords:

            def entry_filter(entries: list[Entry]) -> list[Entry]:
                return filter_entries(
                    entries,
                    types=types,
                    since=since,
                    until=until,
                    keywords=keywords,
                    synonyms=self.settings.synonyms,
                )

        hits = self.searcher.search(
            query,
            mode=mode,
            limit=limit,
            min_score=cfg.min_score if min_score is None else min_score,
            include_archived=include_archived,
            entry_filter=entry_filter,
            now=ranking_time(),
            access=self.access.load(),  # shown by --explain; never moves a score
            progress=progress,
        )
        if touch and hits:
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
        context: str | None = None,
        *,
        max_tokens: int | None = None,
        encoding: str | None = None,
        fmt: str = "markdown",
        types: Sequence[str] | None = None,
        touch: bool = True,
    ) -> Packed:
        """A memory block of at most `max_tokens` tokens for a prompt.

        Pinned entries and corrections come first. With context, the others must earn
        their place (DESIGN §4): relevant to the context (memcli.logic.inject.is_relevant: above
        the relevance floor) or a profile entry (a preference or correction of importance
        ≥ profile_importance); they rank by similarity_weight · search score against the
        context + confidence_weight · confidence (seed 000), and nothing else fills the
        block. Without context, every entry ranks by importance × confidence × recency
        (seed 003). Entries that make it into the block count as accessed (they were
        recalled), unless touch is False.
        """
        packed = self._pack(context, max_tokens, encoding, fmt, types)
        if touch and packed.chosen:
            self.access.touch(c.entry.id for c in packed.chosen)
        return packed

    def _pack(
        self,
        context: str | None,
        max_tokens: int | None,
        encoding: str | None,
        fmt: str,
        types: Sequence[str] | None,
    ) -> Packed:
        from memcli.adapters.tokens import get_counter
        from memcli.logic.inject import SCAN_AT_LEAST, Candidate, is_profile, is_relevant, pack
        from memcli.logic.search import check_mode, half_life, recency

        cfg = self.settings.inject
        budget = cfg.max_tokens if max_tokens is None else max_tokens
        counter = get_counter(encoding or cfg.encoding)
        now = ranking_time()
        if context is not None and len(context) > MAX_QUERY_CHARS:
            self._notify(
                f"the context is {len(context):,} characters long: its last "
                f"{MAX_QUERY_CHARS:,} are used"
            )
        context = None if context is None else clean_context(context)
        if context is not None and context.strip():
            hits = self.search(context, types=types, limit=10_000, touch=False)
            _, view = self._search_view(None)
            wanted = {check_type(t) for t in types or []}
            mode = check_mode(self.settings.search.mode)
            # Only entries that earn their place: relevant to the context, a profile entry,
            # or pinned / a correction. Unrelated trivia never fills the budget.
            candidates = [
                Candidate(
                    h.entry,
                    cfg.similarity_weight * h.score + cfg.confidence_weight * h.entry.confidence,
                    _priority(h.entry),
                )
                for h in hits
                if not _expired(h.entry, now)
                and (
                    _priority(h.entry)
                    or is_profile(h.entry, cfg)
                    or is_relevant(h.components["semantic"], h.components["keyword"], mode, cfg)
                )
            ]
            taken = {c.entry.id for c in candidates}
            # Profile entries the search did not return (beyond its candidate pool) are
            # scored on confidence alone.
            for entry in view.by_confidence:
                if (
                    entry.id in taken
                    or not is_profile(entry, cfg)
                    or _priority(entry)
                    or (wanted and entry.type not in wanted)
                    or _expired(entry, now)
                ):
                    continue
                candidates.append(Candidate(entry, cfg.confidence_weight * entry.confidence))
                taken.add(entry.id)
            # Pinned entries and corrections go in even when the search did not return
            # them: the most confident first, until they could fill the budget many times
            # over (pack looks no further than a few budgets' worth).
            spare = added = 0
            for entry in view.priority:
                if spare > 8 * budget and added >= 2 * SCAN_AT_LEAST:
                    break
                if entry.id in taken or (wanted and entry.type not in wanted):
                    continue
                if not _expired(entry, now):
                    candidates.append(
                        Candidate(entry, cfg.confidence_weight * entry.confidence, True)
                    )
                    spare += len(entry.text) // 3 + 2
                    added += 1
        else:
            entries = [
                e for e in filter_entries(self.entries(), types=types) if not _expired(e, now)
            ]
            search_cfg = self.settings.search
            candidates = [
                Candidate(
                    e,
                    e.importance * e.confidence * recency(e, now, half_life(e, search_cfg)),
                    _priority(e),
                )
                for e in entries
            ]
        return pack(candidates, budget, counter, fmt, cfg.reserved_share)

    # ------------------------------------------------------------------ extract

    @_operation("extract")
    def extract(
        self, messages: Sequence[dict], *, source: str | None = None, dry_run: bool = False
    ) -> list[Decision]:
        """Turn a conversation into entries (the configured LLM, else offline rules),
        deciding ADD / UPDATE / NOOP for each statement; with dry_run nothing is written.
        An LLM failure raises before anything is written."""
        from memcli.adapters.llm import client_from
        from memcli.logic.extract import candidates, llm_candidates, plan, screen

        check_meta_value("--source", source)
        llm = client_from(self.settings.llm)
        found = llm_candidates(messages, llm) if llm else candidates(messages)

        def embed(texts: Sequence[str]) -> np.ndarray:
            return self.index_manager.vectors_for([Entry("", t, "fact", "", 0) for t in texts])

        decisions = screen(plan(found, self.entries(), embed))
        if dry_run:
            return decisions
        applied = []
        for decision in decisions:
            c = decision.candidate
            text = decision.stored or c.text
            if decision.action == "ADD":
                entry = self._add(
                    text, type=c.type, importance=c.importance, source=source, by="extract"
                ).entry
                applied.append(replace(decision, entry_id=entry.id))
            elif decision.action == "UPDATE" and decision.entry_id:
                current = self._find(decision.entry_id)
                if normalize_text(text) != normalize_text(current.text):
                    self._archive_superseded(current)  # first: never in neither place
                sources = ",".join(s for s in [current.source, source] if s) or None
                entry = self.edit(
                    decision.entry_id,
                    text=text,
                    importance=max(current.importance, c.importance),
                    source=sources,
                )
                applied.append(replace(decision, entry_id=entry.id))
            else:
                applied.append(decision)
        if any(d.action in ("ADD", "UPDATE") for d in applied):
            self.after_write()
        return applied

    def _archive_superseded(self, entry: Entry) -> None:
        """A copy of `entry` as it reads now, put in archive.md under a fresh id as
        superseded by the entry (extract's UPDATE); `memcli restore` brings it back."""
        from memcli.store.changes import add_to_archive, archived_copy

        old_id = new_id(self.entries(include_archived=True), id_prefix_for(entry.file))
        old = replace(entry, id=old_id, meta={**entry.meta, "id": old_id})
        copy = archived_copy(old, f"superseded by {entry.id}", entry.id, format_time(utc_now()))
        self.store.update(ARCHIVE_FILE, add_to_archive([copy]))

    # ------------------------------------------------------------------ compress, reflect, log

    def _live_entries(self) -> list[Entry]:
        """Entries of memory.md, learnings.md and episodes/, first of each id."""
        seen: dict[str, Entry] = {}
        for entry in self.entries():
            seen.setdefault(entry.id, entry)
        return list(seen.values())

    def _id_maker(self) -> Callable[[str], str]:
        """file -> a fresh id (prefix of that file) not used anywhere in the workspace."""
        taken = self.entries(include_archived=True)

        def make(file: str) -> str:
            entry_id = new_id(taken, id_prefix_for(file))
            taken.append(Entry(entry_id, "", "fact", file, 0))
            return entry_id

        return make

    def plan_compress(self, *, target_tokens: int | None = None) -> Plan:
        """What compress would do (DESIGN §5); nothing is written. An LLM, when
        configured, writes the consolidated entries; its failure raises LLMError."""
        from memcli.adapters.llm import client_from
        from memcli.adapters.tokens import get_counter
        from memcli.logic.compress import Context, plan_compress
        from memcli.store.changes import preview
        from memcli.store.markdown import render_entry_lines

        if target_tokens is not None and target_tokens < 0:
            raise ValidationError(f"--target-tokens must be 0 or more (got {target_tokens})")
        store = self._ready()
        self.index_manager.ensure()
        entries = self._live_entries()
        vectors = self.index_manager.vectors_for(entries)
        llm = client_from(self.settings.llm, self._env)
        ctx = Context(
            self.settings.compress,
            utc_now(),
            self._id_maker(),
            self.access.load(),
            (lambda members: llm_summary(llm, members)) if llm else None,
            forget_scope=self.settings.forget.scope,
        )
        counter = get_counter(self.settings.inject.encoding)

        def tokens_after(plan: Plan) -> int:
            texts = preview(store, plan)
            return sum(
                counter.count(texts[n][1] if n in texts else store.load(n).serialize())
                for n in (MEMORY_FILE, LEARNINGS_FILE)
            )

        def entry_tokens(entry: Entry) -> int:
            return counter.count("".join(render_entry_lines(entry.text, entry.meta, "\n")))

        return plan_compress(
            entries,
            vectors,
            ctx,
            target_tokens=target_tokens,
            tokens_after=tokens_after,
            entry_tokens=entry_tokens,
        )

    def diff(self, plan: Plan) -> str:
        """A plan as a unified diff of the files it would change."""
        from memcli.store.changes import unified_diff

        return unified_diff(self._ready(), plan)

    @_operation("apply")
    def apply(self, plan: Plan) -> Applied:
        """Write a plan: archive copies first, entries that changed meanwhile left alone;
        access counts of merged entries are added to the entry that replaced them."""
        from memcli.store.changes import apply

        applied = apply(self._ready(), plan)
        written = set(applied.written)
        for target, sources in plan.access_merges:
            if target in written:
                self.access.merge(target, [s for s in sources if s in applied.archived])
        return applied

    @_operation("compress")
    def compress(self, *, target_tokens: int | None = None, dry_run: bool = False) -> Plan:
        """Plan and (unless dry_run) apply compress; returns the plan."""
        plan = self.plan_compress(target_tokens=target_tokens)
        if not dry_run and not plan.is_empty:
            self.apply(plan)
        return plan

    def plan_reflect(self, *, force: bool = False) -> tuple[Trigger, Plan]:
        """Whether reflection is due, and the insights it would write (DESIGN §6)."""
        from memcli.adapters.llm import client_from
        from memcli.logic.reflect import (
            check_trigger,
            extractive_insights,
            is_insight,
            last_reflection,
            llm_insights,
            plan_reflect,
            recent,
        )
        from memcli.store.changes import Plan

        self._ready()
        cfg = self.settings.reflect
        entries = self._live_entries()
        now = utc_now()
        trigger = check_trigger(entries, now, cfg)
        if not trigger.due and not force:
            return trigger, Plan()
        if force:  # the latest entries, whether or not they are new
            dated = sorted(recent(entries, None), key=lambda e: e.created)
            undated = [e for e in entries if not is_insight(e) and e.created is None]
            pool = (undated + dated)[-cfg.window :]
        else:
            new = sorted(recent(entries, last_reflection(entries)), key=lambda e: e.created)
            pool = new[-cfg.window :]
        llm = client_from(self.settings.llm, self._env)
        if llm is None:
            insights = extractive_insights(pool, self.index_manager.vectors_for(pool), cfg)
        else:
            others = [e for e in entries if not is_insight(e)]
            vectors = self.index_manager.vectors_for(others)

            def retrieve(question: str) -> list[Entry]:
                qvec = self.index_manager.query_embedder.embed([question])[0]
                best = np.argsort(-(vectors @ qvec))[:8]
                return [others[int(i)] for i in best]

            insights = llm_insights(pool, llm, retrieve, cfg)
        return trigger, plan_reflect(insights, entries, now, self._id_maker())

    @_operation("reflect")
    def reflect(self, *, force: bool = False, dry_run: bool = False) -> tuple[Trigger, Plan]:
        """Plan and (unless dry_run) write reflections; returns the trigger and plan."""
        trigger, plan = self.plan_reflect(force=force)
        if not dry_run and not plan.is_empty:
            self.apply(plan)
        return trigger, plan

    @_operation("log")
    def log(
        self,
        text: str,
        *,
        importance: float | None = None,
        keywords: Sequence[str] | None = None,
        allow_secret: bool = False,
    ) -> Entry:
        """Append a timestamped note to today's episode file (episodes/YYYY-MM-DD.md)."""
        from memcli.core.models import EPISODES_DIR
        from memcli.store.markdown import parse

        text = clean_text(text)
        check_keywords("--keywords", keywords)
        secret = check_secret(text, allow_secret)
        check_unit("importance", importance)
        self._ready()
        now = utc_now()
        day = now.astimezone().date().isoformat()
        name = f"{EPISODES_DIR}/{day}.md"
        (self.root / EPISODES_DIR).mkdir(exist_ok=True)
        entry_id = new_id(self.entries(include_archived=True), id_prefix_for(name))
        meta = {"id": entry_id, "created": format_time(now)}
        if importance is not None:
            meta["imp"] = fmt_unit(importance)
        kws = clean_keywords(keywords) or extract_keywords(text)
        if kws:
            meta["kw"] = ",".join(kws)
        if secret:
            meta["secret"] = "ok"
        entry = Entry(entry_id, text, "episode", name, 0, meta, True)

        def append(doc: Document) -> Entry:
            if not doc.blocks:
                doc.blocks = parse(f"# {day}\n\n## Episodes\n", name).blocks
            found = doc.find(entry_id)
            return found.entry if found else doc.insert_entry(entry)

        return self.store.update(name, append)

    def after_write(self) -> list[str]:
        """The automatic reflect / compress of memcli.toml ([reflect] auto, [compress]
        auto) after add or extract; returns what they did. Failures become notices."""
        from memcli.core.errors import MemcliError

        done: list[str] = []
        if not (self.settings.reflect.auto or self.settings.compress.auto):
            return done
        try:
            if self.settings.reflect.auto:
                trigger, plan = self.reflect()
                if plan.writes:
                    done.append(f"reflect: {len(plan.writes)} insight(s)")
                    self._notify(f"reflected: {len(plan.writes)} insight(s) written")
            if self.settings.compress.auto:
                plan = self.compress()
                if not plan.is_empty:
                    done.append(f"compress: {len(plan.actions)} action(s)")
                    self._notify(f"compressed: {len(plan.actions)} action(s) applied")
        except MemcliError as exc:
            self._notify(f"automatic reflect/compress skipped: {exc.message}")
        return done

    # ------------------------------------------------------------------ writing

    @_operation("add")
    def add(
        self,
        text: str,
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
        """Add an entry, or update the existing entry with the same normalized text;
        then the automatic reflect / compress when memcli.toml turns them on.

        `by` says who wrote it (`by=` metadata, DESIGN §5.1): "agent" (the default: a
        program through the API or MCP) may fade with age; "person" (the CLI) never does,
        and a person repeating an entry a program wrote confirms it.

        Text that looks like it holds a credential is refused unless allow_secret, which
        marks the entry `secret=ok` (inject leaves unmarked ones out)."""
        result = self._add(
            text,
            type=type,
            importance=importance,
            confidence=confidence,
            keywords=keywords,
            source=source,
            pin=pin,
            allow_secret=allow_secret,
            by=by,
        )
        self.after_write()
        return result

    def _add(
        self,
        text: str,
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
        text = clean_text(text)
        entry_type = check_type(type)
        check_unit("importance", importance)
        check_unit("confidence", confidence)
        check_meta_value("--source", source)
        check_keywords("--keywords", keywords)
        secret = check_secret(text, allow_secret)
        keywords = clean_keywords(keywords)
        store = self._ready()
        now = format_time(utc_now())
        wanted = normalize_text(text)
        auto_keywords = [] if keywords else extract_keywords(text)

        for entry in store.entries():
            if normalize_text(entry.text) == wanted:
                return self._merge_duplicate(
                    entry, importance, confidence, keywords, source, pin, now, secret, by
                )

        target = file_for_type(entry_type)
        entry_id = new_id(store.entries(include_archived=True), id_prefix_for(target))

        def change(doc: Document) -> AddResult:
            mine = doc.find(entry_id)
            if mine is not None:  # already written (the change is re-applied after a race)
                return AddResult(mine.entry, "added")
            for entry in doc.entries():  # a duplicate added meanwhile
                if normalize_text(entry.text) == wanted:
                    merged = merged_meta(entry, importance, confidence, keywords, source, pin, now)
                    if secret:
                        merged["secret"] = "ok"
                    if by == "person":
                        merged[BY_KEY] = by
                    return AddResult(
                        doc.replace_entry(entry.id, replace(entry, meta=merged)), "updated"
                    )
            meta: dict[str, str] = {"id": entry_id}
            if importance is not None:
                meta["imp"] = fmt_unit(importance)
            if confidence is not None:
                meta["conf"] = fmt_unit(confidence)
            meta["created"] = now
            if keywords or auto_keywords:
                meta["kw"] = ",".join(keywords or auto_keywords)
            if source:
                meta["src"] = source
            if pin:
                meta["pin"] = "true"
            if secret:
                meta["secret"] = "ok"
            meta[BY_KEY] = by
            entry = Entry(meta["id"], text, entry_type, target, 0, meta, True)
            return AddResult(doc.insert_entry(entry), "added")

        return store.update(target, change)

    def _merge_duplicate(
        self,
        entry: Entry,
        importance: float | None,
        confidence: float | None,
        keywords: list[str],
        source: str | None,
        pin: bool,
        now: str,
        secret: bool = False,
        by: str = "agent",
    ) -> AddResult:
        def change(doc: Document) -> AddResult:
            current = doc.find(entry.id)
            if current is None:
                raise NotFoundError(f"entry {entry.id} disappeared during the update; run again")
            meta = merged_meta(current.entry, importance, confidence, keywords, source, pin, now)
            if secret:
                meta["secret"] = "ok"
            if by == "person":  # a person said it again: confirmed
                meta[BY_KEY] = by
            return AddResult(
                doc.replace_entry(entry.id, replace(current.entry, meta=meta)), "updated"
            )

        return self.store.update(entry.file, change)

    @_operation("edit")
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
        by: str | None = None,
    ) -> Entry:
        """Change an entry's text and/or metadata in place; stamps its id. `by="person"`
        (the CLI) marks it confirmed by a person: it no longer fades with age; None keeps
        who wrote it as it was. New text that
        looks like it holds a credential is refused unless allow_secret, which marks the
        entry `secret=ok` (also for its current text). New text without `keywords`
        recomputes the automatic keywords (recomputed_keywords); keywords a person set
        stay."""
        if text is not None:
            text = clean_text(text)
            check_secret(text, allow_secret)
        check_unit("importance", importance)
        check_unit("confidence", confidence)
        check_meta_value("--source", source)
        check_keywords("--keywords", keywords)
        found = self._find(entry_id)
        now = format_time(utc_now())

        def change(doc: Document) -> Entry:
            block = doc.find(found.id)
            if block is None:
                raise NotFoundError(
                    f"entry {found.id} changed or disappeared in {found.file} during the edit",
                    hint="run `memcli list` and try again",
                )
            meta = dict(block.entry.meta)
            meta["id"] = block.entry.id
            if importance is not None:
                meta["imp"] = fmt_unit(importance)
            if confidence is not None:
                meta["conf"] = fmt_unit(confidence)
            if keywords is not None:
                kws = clean_keywords(keywords)
                if kws:
                    meta["kw"] = ",".join(kws)
                else:
                    meta.pop("kw", None)
            elif text is not None:
                kws = recomputed_keywords(block.entry.keywords, block.entry.text, text)
                if kws:
                    meta["kw"] = ",".join(kws)
                elif kws is not None:
                    meta.pop("kw", None)
            if source is not None:
                meta["src"] = source
            if pin is not None:
                if pin:
                    meta["pin"] = "true"
                else:
                    meta.pop("pin", None)
            if allow_secret:
                meta["secret"] = "ok"
            meta["updated"] = now
            if by is not None:
                meta[BY_KEY] = by
            new = replace(
                block.entry, text=text if text is not None else block.entry.text, meta=meta
            )
            return doc.replace_entry(found.id, replace(new, id_explicit=True))

        return self.store.update(found.file, change)

    @_operation("forget")
    def forget(
        self, entry_id: str, *, reason: str = "forgotten", replaced_by: str | None = None
    ) -> Entry:
        """Move an entry to archive.md (restorable). Archive first, then remove: a crash
        in between leaves a copy in both places, never in neither."""
        from memcli.store.changes import add_to_archive, archived_copy

        check_meta_value("--reason", reason)
        if not reason or not reason.strip():
            raise ValidationError("--reason is empty", hint="say why, or leave it out")
        found = self._find(entry_id)
        now = format_time(utc_now())
        self.store.update(
            ARCHIVE_FILE, add_to_archive([archived_copy(found, reason, replaced_by, now)])
        )

        def remove(doc: Document) -> Entry:
            if doc.find(found.id) is None:
                return found
            return doc.remove_entry(found.id)

        self.store.update(found.file, remove)
        return found

    @_operation("restore")
    def restore(self, entry_id: str) -> Entry:
        """Bring an archived entry back to the file and section it came from."""
        archive = self._ready().load(ARCHIVE_FILE)
        block = archive.find(entry_id.strip())
        if block is None:
            from memcli.services.recovery import restore_removed

            back = restore_removed(self.store, entry_id.strip())  # a stale save removed it?
            if back is not None:
                return back
            raise NotFoundError(
                f"no archived entry with id {entry_id!r} in {self.root / ARCHIVE_FILE}",
                hint="`memcli list --include-archived --type archived` shows archived ids; "
                "`memcli history --removed` the entries an editor's save removed",
            )
        old = block.entry
        from memcli.store.changes import ARCHIVE_KEYS

        meta = {k: v for k, v in old.meta.items() if k not in ARCHIVE_KEYS}
        try:
            entry_type = check_type(old.meta.get("type") or "fact")
        except ValidationError:
            raise ValidationError(
                f"{ARCHIVE_FILE}:{old.line}: archived entry {old.id} has type="
                f"{old.meta.get('type')!r}, which is not a usable type; nothing was changed",
                hint="fix or remove type= in that entry's <!-- ... --> comment",
            ) from None
        target = old.meta.get("from") or file_for_type(entry_type)
        if not is_own_file(target, self.store.entry_files()):
            raise ValidationError(
                f"{ARCHIVE_FILE}:{old.line}: archived entry {old.id} names from={target!r}, "
                "which is not one of this workspace's entry files (memory.md, learnings.md, "
                "episodes/YYYY-MM-DD.md); nothing was changed",
                hint="fix or remove from= in that entry's <!-- ... --> comment (without it, "
                f"restore puts the entry in {file_for_type(entry_type)})",
            )
        if "/" in target:  # an episode file: its folder may be gone
            (self.root / target).parent.mkdir(exist_ok=True)
        restored = replace(old, type=entry_type, file=target, meta=meta, id_explicit=True)

        def put_back(doc: Document) -> Entry:
            if doc.find(old.id) is not None:
                return doc.find(old.id).entry  # type: ignore[union-attr]
            return doc.insert_entry(restored)

        result = self.store.update(target, put_back)
        self.store.update(ARCHIVE_FILE, lambda doc: doc.find(old.id) and doc.remove_entry(old.id))
        return result

    # ------------------------------------------------------------------ import

    @_operation("import")
    def import_items(
        self,
        items: Sequence[Any],
        *,
        dry_run: bool = False,
        source: str | None = None,
        by: str = "person",
    ) -> list[tuple[str, Any, str | None]]:
        """Add imported memories (`memcli.adapters.portability.ImportItem`) through `add`: each
        gives ("add", item, id) or ("exists", item, id of the entry it repeats); with
        dry_run nothing is written (ids of new entries are None)."""
        seen = {normalize_text(e.text): e.id for e in self.entries()}
        out: list[tuple[str, Any, str | None]] = []
        for item in items:
            key = normalize_text(item.text)
            if key in seen:
                out.append(("exists", item, seen[key]))
                continue
            if dry_run:
                seen[key] = None  # type: ignore[assignment]
                out.append(("add", item, None))
                continue
            result = self.add(
                item.text, type=item.type, importance=item.importance, source=source, by=by
            )
            seen[key] = result.entry.id
            out.append(("add" if result.action == "added" else "exists", item, result.entry.id))
        return out

    # ------------------------------------------------------------------ history

    def history(
        self, entry_id: str | None = None, *, file: str | None = None, limit: int = 20
    ) -> list[Any]:
        """Past versions of the files, newest first (`memcli.services.recovery.Version`); with
        `entry_id`, the versions in which that entry changed."""
        from memcli.services.recovery import versions

        return versions(self._ready(), entry_id=entry_id, file=file, limit=limit)

    def removed(self) -> list[dict[str, Any]]:
        """Entries memcli wrote that an editor's save removed since (not back in any
        file); `restore ID` brings one back."""
        from memcli.services.recovery import removed_entries

        return removed_entries(self._ready())

    def plan_undo(self) -> Any:
        """The undo of memcli's newest operation not yet undone (`recovery.UndoPlan`)."""
        from memcli.services.recovery import plan_undo

        return plan_undo(self._ready())

    def undo(self, plan: Any) -> None:
        """Write an undo planned by `plan_undo`."""
        from memcli.services.recovery import apply_undo

        apply_undo(self._ready(), plan)

    def doctor(self, extra: Sequence[Any] = ()) -> dict[str, Any]:
        """What needs attention in the workspace: the files (`memcli.services.recovery.diagnose`)
        and what surrounds them (`memcli.services.health`: model, ONNX export, index, git
        merge driver, and the surfaces' `extra` checks such as the watcher's)."""
        from memcli.services.health import checks
        from memcli.services.recovery import diagnose

        report = diagnose(self._ready())
        found = checks(self.root, self.settings, self.index_manager, extra)
        report["checks"] = [c.to_dict() for c in found]
        report["ok"] = report["ok"] and all(c.ok for c in found)
        return report


# ---------------------------------------------------------------------- helpers

_SHARED: dict[tuple[object, ...], Memory] = {}


def shared_memory(workspace: str | Path | None = None) -> Memory:
    """One Memory per workspace and settings in this process, so a long-lived process
    (the watch daemon) keeps its model and index warm across requests."""
    root = resolve_workspace(workspace)
    try:
        toml_stamp: object = (root / "memcli.toml").stat().st_mtime_ns
    except OSError:
        toml_stamp = None
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("MEMCLI_")))
    key = (str(root), toml_stamp, env)
    if key not in _SHARED:
        for old in [k for k in _SHARED if k[0] == str(root)]:
            del _SHARED[old]  # settings changed: start over with the new ones
        _SHARED[key] = Memory(root)
    return _SHARED[key]


def ranking_time() -> dt.datetime:
    """Now, to the minute: recency changes too little within a minute to matter, and two
    processes answering the same query a few seconds apart print the same scores."""
    return utc_now().replace(second=0)


_priority = is_priority


def _expired(entry: Entry, now: dt.datetime) -> bool:
    try:
        expires = entry.expires
    except ValueError:
        return False
    return expires is not None and expires < now


def _notice_stderr(message: str) -> None:
    print(f"notice: {message}", file=sys.stderr)


def clean_text(text: str) -> str:
    """Entry text as stored: no trailing spaces, no surrounding blank lines; refuse empty."""
    if text is None or not text.strip():
        raise ValidationError("the entry text is empty", hint="give the text to remember")
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    cleaned = "\n".join(lines).strip("\n")
    first = cleaned.split("\n", 1)[0]
    if not first.strip():
        raise ValidationError("the entry's first line is empty")
    # `<!--` and `-->` stay as written: memcli's own comment always ends the first line
    # and the parser reads only the last comment there, so the text round-trips.
    cleaned = cleaned.lstrip()
    check_text(cleaned)
    return cleaned


def check_secret(text: str, allow: bool) -> bool:
    """True when `text` looks like it holds a credential and that is allowed; raise
    ValidationError when it does and is not."""
    from memcli.core.credentials import describe, find

    found = find(text)
    if found and not allow:
        raise ValidationError(
            f"the text looks like it holds {describe(found)} (at character "
            f"{found[0].start + 1}); nothing was written",
            hint="keep secrets in a password manager; to remember it anyway pass "
            "--allow-secret (allow_secret=True), and it may then appear in inject blocks",
        )
    return bool(found)


def check_type(entry_type: str) -> str:
    slug = slugify(entry_type or "")
    if not slug or slug == "archived":
        raise ValidationError(
            f"{entry_type!r} is not a usable type",
            hint="use preference, fact, pattern, reflection, correction, skill, lesson or a word",
        )
    return heading_type(entry_type)  # `preferences` is `preference`, as `## Preferences`


def _filter_type(entry_type: str) -> str:
    """A type to filter by: any usable type, and "archived" (archive.md's entries)."""
    return "archived" if slugify(entry_type or "") == "archived" else check_type(entry_type)


def check_unit(name: str, value: float | None) -> None:
    if value is None:
        return
    if not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise ValidationError(f"{name} must be between 0 and 1 (got {value!r})")


def fmt_unit(value: float) -> str:
    return f"{float(value):.2f}".rstrip("0").rstrip(".") if value not in (0, 1) else str(int(value))


def recomputed_keywords(stored: Sequence[str], old_text: str, new_text: str) -> list[str] | None:
    """The keywords of an entry whose text changes from `old_text` to `new_text`, or None
    when they stay as they are.

    Automatic keywords are not marked in the files: `add` (and `log`, `extract`) store
    extract_keywords(text) as kw= when no keywords are given, and a later duplicate `add`
    appends the keywords it brings. So the stored keywords are automatic when they are
    exactly what extract_keywords gives for the old text, or begin with it (automatic
    ones, then keywords added since): those leading automatic ones are replaced by the
    new text's, the rest stay. Any other keywords (and any at all when the old text gives
    none) were set by a person (`--keywords`, by hand) and stay as they are."""
    auto_old = extract_keywords(old_text)
    have = list(stored)
    if (have and not auto_old) or [k.casefold() for k in have[: len(auto_old)]] != auto_old:
        return None
    rest = [k for k in have[len(auto_old) :] if k.casefold() not in auto_old]
    return clean_keywords(extract_keywords(new_text) + rest)


def clean_keywords(keywords: Sequence[str] | None) -> list[str]:
    result: list[str] = []
    for raw in keywords or []:
        for part in str(raw).split(","):
            word = " ".join(part.strip().split())
            if word and word not in result:
                result.append(word)
    return result


def merged_meta(
    entry: Entry,
    importance: float | None,
    confidence: float | None,
    keywords: list[str],
    source: str | None,
    pin: bool,
    now: str,
) -> dict[str, str]:
    """Metadata of an entry that a duplicate `add` merges into."""
    meta = dict(entry.meta)
    meta["id"] = entry.id
    if importance is not None and importance > entry.importance:
        meta["imp"] = fmt_unit(importance)
    if confidence is not None and confidence > entry.confidence:
        meta["conf"] = fmt_unit(confidence)
    kws = clean_keywords(entry.keywords + list(keywords))
    if kws:
        meta["kw"] = ",".join(kws)
    if source:
        sources = [s for s in (entry.source or "").split(",") if s]
        if source not in sources:
            sources.append(source)
        meta["src"] = ",".join(sources)
    if pin:
        meta["pin"] = "true"
    meta["updated"] = now
    return meta


#: hex digits of a minted id: 48 random bits, so two machines adding to one workspace in
#: git (merged by id) do not pick the same id (28 bits: a 1-in-3 chance at 10k each)
NEW_ID_HEX = 12


def new_id(existing: Sequence[Entry], prefix: str) -> str:
    """A fresh random id not used by any of `existing`."""
    taken = {e.id for e in existing}
    while True:
        candidate = prefix + os.urandom(NEW_ID_HEX // 2).hex()
        if candidate not in taken and is_valid_id(candidate):
            return candidate


def filter_entries(
    entries: Sequence[Entry],
    *,
    types: Sequence[str] | None = None,
    since: str | dt.datetime | None = None,
    until: str | dt.datetime | None = None,
    keywords: Sequence[str] | None = None,
    synonyms: tuple[tuple[str, ...], ...] = (),
) -> list[Entry]:
    """Entries matching every given filter (types: any of; keywords: all of, each
    satisfied by the keyword or one of its synonyms)."""
    wanted_types = {_filter_type(t) for t in types or []}
    since_t = _as_time(since, "--since")
    until_t = _as_time(until, "--until")
    if until_t is not None and isinstance(until, str) and len(until.strip()) == 10:
        until_t += dt.timedelta(days=1)  # a date means "through the end of that day"
    wanted_kw = [set(synonyms_of(k.casefold(), synonyms)) for k in clean_keywords(keywords)]
    result = []
    for entry in entries:
        if wanted_types and entry.type not in wanted_types:
            continue
        if since_t or until_t:
            created = entry.created
            if created is None:
                continue
            if since_t and created < since_t:
                continue
            if until_t and created >= until_t:
                continue
        if wanted_kw:
            have = {k.casefold() for k in entry.keywords}
            if not all(alternatives & have for alternatives in wanted_kw):
                continue
        result.append(entry)
    return result


def _as_time(value: str | dt.datetime | None, flag: str) -> dt.datetime | None:
    if value is None or isinstance(value, dt.datetime):
        return value
    try:
        return parse_time(value)
    except ValueError as exc:
        raise ValidationError(f"{flag}: {exc}") from None


SUMMARY_SYSTEM = (
    "You merge several memories about one person into one concise memory that keeps "
    'every distinct detail. Answer with a JSON object {"text": str}.'
)


def llm_summary(llm, members: Sequence[Entry]) -> str:  # noqa: ANN001 - LLMClient
    """An abstractive merge of `members`; LLMError on an answer of the wrong shape."""
    from memcli.adapters.llm import LLMError

    listing = "\n".join(f"- {' '.join(e.text.split())}" for e in members)
    answer = llm.chat_json(SUMMARY_SYSTEM, listing)
    text = answer.get("text") if isinstance(answer, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise LLMError('the LLM answer has no "text"; nothing was changed')
    return " ".join(text.split())
