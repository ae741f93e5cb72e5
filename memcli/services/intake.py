"""What comes in from outside: an added entry as the surfaces mean it (the entry, then
the automatic reflect / compress), the results of extracting a conversation (ADD /
UPDATE / NOOP, docs/maintenance.md) and imported memories. All of it goes through
memcli.services.entries.add, so every way in dedups the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memcli.core.errors import ValidationError
from memcli.core.models import Entry, normalize_text
from memcli.core.requests import AddRequest
from memcli.core.validate import check_meta_value, clean_text
from memcli.services import entries
from memcli.services.maintain import after_write
from memcli.services.review import proposed, rewrite
from memcli.services.runtime import Runtime, operation

if TYPE_CHECKING:
    from memcli.logic.extract import Decision


@operation("add")
def add(rt: Runtime, request: AddRequest) -> entries.AddResult:
    """Add an entry (or update its exact duplicate), then the automatic reflect /
    compress when memcli.toml turns them on."""
    result = entries.add(rt, request)
    after_write(rt)
    return result


@operation("extract")
def statements(rt: Runtime, messages: Sequence[dict]) -> list[Any]:
    """The statements worth remembering in a conversation (logic.statements.Candidate),
    found by the configured LLM, else by the offline rules."""
    from memcli.logic.statements import candidates, llm_candidates

    llm = rt.llm()
    return llm_candidates(messages, llm) if llm else candidates(messages)


@operation("extract")  # one operation of the history: `memcli undo` takes it all back
def extract(
    rt: Runtime,
    messages: Sequence[dict],
    *,
    source: str | None = None,
    dry_run: bool = False,
    found: Sequence[Any] | None = None,
) -> list[Decision]:
    """Turn a conversation into entries (the configured LLM, else offline rules),
    deciding ADD / UPDATE / NOOP for each statement; with dry_run nothing is written.
    An LLM failure raises before anything is written. `found`: the statements, found
    already (`statements`; memcli.services.layers sends each layer its own)."""
    from memcli.logic.extract import plan, screen

    check_meta_value("--source", source)
    if found is None:
        found = statements(rt, messages)

    def embed(texts: Sequence[str]) -> np.ndarray:
        return rt.index_manager.vectors_for([Entry("", t, "fact", "", 0) for t in texts])

    decisions = screen(plan(found, entries.all_entries(rt), embed))
    if dry_run:
        return decisions
    for decision in decisions:  # every text checked before the first write
        if decision.action in ("ADD", "UPDATE"):
            _checked(decision.stored or decision.candidate.text, "a statement")
    applied = []
    for decision in decisions:
        c = decision.candidate
        text = decision.stored or c.text
        if decision.action == "ADD":
            request = AddRequest(
                text, type=c.type, importance=c.importance, source=source, by="extract"
            )
            entry = entries.add(rt, request).entry
            applied.append(replace(decision, entry_id=entry.id))
        elif decision.action == "UPDATE" and decision.entry_id:
            current = entries.find(rt, decision.entry_id)
            waiting = proposed(rt, current, text)
            if waiting is not None:  # said again: the proposal waits as it is
                why = f"proposed already: {waiting.id} waits in `memcli review`"
                applied.append(replace(decision, action="NOOP", reason=why))
                continue
            if normalize_text(text) == normalize_text(current.text):  # a repeat: no new text
                request = AddRequest(
                    current.text, type=c.type, importance=c.importance, source=source, by="extract"
                )
                entries.add(rt, request)
            else:
                sources = ",".join(s for s in [current.source, source] if s) or None
                # a program's own entry is rewritten in place; the person's stays as
                # it is and extract's text waits beside it (memcli.services.review)
                rewrite(rt, current, text, importance=c.importance, source=sources, by="extract")
            applied.append(decision)  # its id: the entry it updates (or proposes to)
        else:
            applied.append(decision)
    if any(d.action in ("ADD", "UPDATE") for d in applied):
        after_write(rt)
    return applied


@operation("import")
def import_items(
    rt: Runtime,
    items: Sequence[Any],
    *,
    dry_run: bool = False,
    source: str | None = None,
    by: str = "import",
) -> list[tuple[str, Any, str | None]]:
    """Add imported memories (`memcli.adapters.portability.ImportItem`) through `add`:
    each gives ("add", item, id) or ("exists", item, id of the entry it repeats); with
    dry_run nothing is written (ids of new entries are None). `by="person"` (`import
    --as-mine`) files them as the person's own; otherwise (`by=import`) a correction, a
    pin or an importance ≥ 0.9 they carry waits for review (memcli.core.review). Every
    item's text is checked before the first is written."""
    for number, item in enumerate(items, 1):
        _checked(item.text, f"item {number}")
    seen = {normalize_text(e.text): e.id for e in entries.all_entries(rt)}
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
        request = AddRequest(
            item.text,
            type=item.type,
            importance=item.importance,
            source=source,
            by=by,
            created=item.created,  # the source's date (checked where it was read)
        )
        result = add(rt, request)
        seen[key] = result.entry.id
        out.append(("add" if result.action == "added" else "exists", item, result.entry.id))
    return out


def _checked(text: str, where: str) -> None:
    """ValidationError naming `where` unless `text` can be stored; nothing is written."""
    try:
        clean_text(text)
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc.message}", hint=exc.hint) from None
