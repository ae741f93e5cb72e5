"""Maintenance: compress and reflect (docs/maintenance.md) as plans, their diff and
their application, and the automatic reflect / compress after a write.

Planning gathers the entries, their vectors, the access statistics and the LLM, and
leaves the decisions to the pure planners of memcli.logic.compress (with
memcli.logic.consolidation and memcli.logic.forgetting) and memcli.logic.reflect;
applying a plan is memcli.store.changes.apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from memcli.core.errors import ValidationError
from memcli.core.models import Entry, utc_now
from memcli.services.entries import id_maker, live_entries
from memcli.services.runtime import Runtime, operation

if TYPE_CHECKING:
    from memcli.logic.reflect import Trigger
    from memcli.store.changes import Applied, Plan


def plan_compress(rt: Runtime, *, target_tokens: int | None = None) -> Plan:
    """What compress would do; nothing is written. An LLM, when configured, writes the
    consolidated entries; its failure raises LLMError."""
    from memcli.adapters.tokens import get_counter
    from memcli.logic.compress import Context
    from memcli.logic.compress import plan_compress as plan
    from memcli.logic.consolidation import llm_summary
    from memcli.store.changes import preview
    from memcli.store.markdown import render_entry_lines

    if target_tokens is not None and target_tokens < 0:
        raise ValidationError(f"--target-tokens must be 0 or more (got {target_tokens})")
    store = rt.require()
    rt.index_manager.ensure()
    entries = live_entries(rt)
    vectors = rt.index_manager.vectors_for(entries)
    llm = rt.llm()
    ctx = Context(
        rt.settings.compress,
        utc_now(),
        id_maker(rt),
        rt.access.load(),
        (lambda members: llm_summary(llm, members)) if llm else None,
        forget_scope=rt.settings.forget.scope,
        files=store.files,
    )
    counter = get_counter(rt.settings.inject.encoding)

    def tokens_after(plan: Plan) -> int:
        texts = preview(store, plan)
        return sum(
            counter.count(texts[n][1] if n in texts else store.load(n).serialize())
            for n in store.files.names
        )

    def entry_tokens(entry: Entry) -> int:
        return counter.count("".join(render_entry_lines(entry.text, entry.meta, "\n")))

    return plan(
        entries,
        vectors,
        ctx,
        target_tokens=target_tokens,
        tokens_after=tokens_after,
        entry_tokens=entry_tokens,
    )


def diff(rt: Runtime, plan: Plan) -> str:
    """A plan as a unified diff of the files it would change."""
    from memcli.store.changes import unified_diff

    return unified_diff(rt.require(), plan)


@operation("apply")
def apply(rt: Runtime, plan: Plan) -> Applied:
    """Write a plan: archive copies first, entries that changed meanwhile left alone;
    access counts of merged entries are added to the entry that replaced them."""
    from memcli.store.changes import apply as apply_plan

    applied = apply_plan(rt.require(), plan)
    written = set(applied.written)
    for target, sources in plan.access_merges:
        if target in written:
            rt.access.merge(target, [s for s in sources if s in applied.archived])
    return applied


@operation("compress")
def compress(rt: Runtime, *, target_tokens: int | None = None, dry_run: bool = False) -> Plan:
    """Plan and (unless dry_run) apply compress; returns the plan."""
    plan = plan_compress(rt, target_tokens=target_tokens)
    if not dry_run and not plan.is_empty:
        apply(rt, plan)
    return plan


def plan_reflect(rt: Runtime, *, force: bool = False) -> tuple[Trigger, Plan]:
    """Whether reflection is due, and the insights it would write."""
    from memcli.logic.reflect import (
        check_trigger,
        extractive_insights,
        is_insight,
        last_reflection,
        llm_insights,
        recent,
    )
    from memcli.logic.reflect import plan_reflect as plan
    from memcli.store.changes import Plan

    rt.require()
    cfg = rt.settings.reflect
    entries = live_entries(rt)
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
    llm = rt.llm()
    index = rt.index_manager
    why: list[str] = []
    if llm is None:

        def embed(texts: Sequence[str]) -> np.ndarray:  # words: cached like entries
            return index.vectors_for([Entry("", t, "fact", "", 0) for t in texts])

        insights, why = extractive_insights(pool, index.vectors_for(pool), cfg, embed)
    else:
        others = [e for e in entries if not is_insight(e)]
        vectors = index.vectors_for(others)

        def retrieve(question: str) -> list[Entry]:
            from memcli.index.sync import query_text

            qvec = index.query_embedder.embed([query_text(question, index.glossed)])[0]
            best = np.argsort(-(vectors @ qvec))[:8]
            return [others[int(i)] for i in best]

        insights = llm_insights(pool, llm, retrieve, cfg)
    return trigger, plan(insights, entries, now, why, rt.store.files)


@operation("reflect")
def reflect(rt: Runtime, *, force: bool = False, dry_run: bool = False) -> tuple[Trigger, Plan]:
    """Plan and (unless dry_run) write reflections; returns the trigger and plan."""
    trigger, plan = plan_reflect(rt, force=force)
    if not dry_run and not plan.is_empty:
        apply(rt, plan)
    return trigger, plan


def after_write(rt: Runtime) -> list[str]:
    """The automatic reflect / compress of memcli.toml ([reflect] auto, [compress]
    auto) after add or extract; returns what they did. Failures become notices."""
    from memcli.core.errors import MemcliError

    done: list[str] = []
    if not (rt.settings.reflect.auto or rt.settings.compress.auto):
        return done
    try:
        if rt.settings.reflect.auto:
            _, plan = reflect(rt)
            if plan.writes:
                done.append(f"reflect: {len(plan.writes)} insight(s)")
                rt.notify(f"reflected: {len(plan.writes)} insight(s) written")
        if rt.settings.compress.auto:
            plan = compress(rt)
            if not plan.is_empty:
                done.append(f"compress: {len(plan.actions)} action(s)")
                rt.notify(f"compressed: {len(plan.actions)} action(s) applied")
    except MemcliError as exc:
        rt.notify(f"automatic reflect/compress skipped: {exc.message}")
    return done
