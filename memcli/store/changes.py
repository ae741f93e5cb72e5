"""Plans of changes to the Markdown (entries written, entries moved to archive.md), shown
as a unified diff and applied safely. compress, reflect and forget build plans here.

Applying is guarded entry by entry: an entry a person or another process changed since
the plan was made is left alone (and reported), never overwritten. The archive copy is
written before an entry leaves its file, so a crash leaves a copy in both places, never
in neither.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from memcli.core.models import ARCHIVE_FILE, Entry, format_time, utc_now
from memcli.store.markdown import Document, parse
from memcli.store.store import Store

ARCHIVE_KEYS = ("archived", "reason", "from", "type", "replaced_by")
ARCHIVE_HEADER = (
    "# Archive\n\nEntries that forget, compress or merge removed. "
    "`memcli restore ID` brings one back.\n\n## Archived\n"
)


@dataclass(frozen=True)
class Write:
    """A new entry (`replaces` None) or a new version of `replaces`, in `entry.file`."""

    entry: Entry
    replaces: Entry | None = None


@dataclass(frozen=True)
class Removal:
    """An entry that moves to archive.md, with why and what took its place."""

    entry: Entry
    reason: str
    replaced_by: str | None = None


@dataclass(frozen=True)
class Action:
    """One line of a plan's summary: what kind of step, on which ids, and why."""

    kind: str
    summary: str
    ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "summary": self.summary, "ids": list(self.ids)}


@dataclass
class Plan:
    writes: list[Write] = field(default_factory=list)
    removals: list[Removal] = field(default_factory=list)
    #: (survivor id, merged ids): access counts to add up when applied
    access_merges: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.writes and not self.removals

    def removed_ids(self) -> set[str]:
        return {r.entry.id for r in self.removals}

    def to_dict(self) -> dict[str, object]:
        return {
            "actions": [a.to_dict() for a in self.actions],
            "written": [w.entry.to_dict() for w in self.writes],
            "archived": [
                {"id": r.entry.id, "reason": r.reason, "replaced_by": r.replaced_by}
                for r in self.removals
            ],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Applied:
    """What applying a plan did; `skipped` names entries that changed meanwhile."""

    written: list[str]
    archived: list[str]
    skipped: list[str]

    def to_dict(self) -> dict[str, object]:
        return {"written": self.written, "archived": self.archived, "skipped": self.skipped}


def archived_copy(entry: Entry, reason: str, replaced_by: str | None, now: str) -> Entry:
    """The entry as archive.md stores it: same id and text, where it came from and why."""
    meta = {k: v for k, v in entry.meta.items() if k not in ARCHIVE_KEYS}
    meta["id"] = entry.id
    meta.update({"archived": now, "reason": reason, "from": entry.file, "type": entry.type})
    if replaced_by:
        meta["replaced_by"] = replaced_by
    return replace(entry, type="archived", file=ARCHIVE_FILE, meta=meta, id_explicit=True)


def add_to_archive(copies: Sequence[Entry]) -> Callable[[Document], list[str]]:
    """A change that puts archived copies into archive.md (idempotent)."""

    def change(doc: Document) -> list[str]:
        if not doc.blocks:
            doc.blocks = parse(ARCHIVE_HEADER, doc.filename).blocks
        done = []
        for copy in copies:
            if doc.find(copy.id) is None:
                doc.insert_entry(copy)
            done.append(copy.id)
        return done

    return change


def _same(current: Entry, planned: Entry) -> bool:
    return current.text == planned.text and current.meta == planned.meta


def _file_change(
    writes: Sequence[Write], removals: Sequence[Removal]
) -> Callable[[Document], tuple[list[str], list[str], list[str]]]:
    """A change for one entry file: rewrite, insert and remove entries, each only if the
    entry still reads as planned. Returns (written, removed, skipped) ids."""

    def change(doc: Document) -> tuple[list[str], list[str], list[str]]:
        written, removed, skipped = [], [], []
        for write in writes:
            new = replace(write.entry, id_explicit=True)
            if write.replaces is None:
                if doc.find(new.id) is None:
                    doc.insert_entry(new)
                written.append(new.id)
                continue
            block = doc.find(write.replaces.id)
            if block is None or not _same(block.entry, write.replaces):
                skipped.append(write.replaces.id)
                continue
            doc.replace_block(block, new)
            written.append(new.id)
        for removal in removals:
            block = doc.find(removal.entry.id)
            if block is None:
                continue  # already gone (a re-applied change)
            if not _same(block.entry, removal.entry):
                skipped.append(removal.entry.id)
                continue
            doc.remove_entry(removal.entry.id)
            removed.append(removal.entry.id)
        return written, removed, skipped

    return change


def _by_file(plan: Plan) -> dict[str, tuple[list[Write], list[Removal]]]:
    files: dict[str, tuple[list[Write], list[Removal]]] = {}
    for write in plan.writes:
        files.setdefault(write.entry.file, ([], []))[0].append(write)
    for removal in plan.removals:
        files.setdefault(removal.entry.file, ([], []))[1].append(removal)
    return files


def _copies(plan: Plan, now: str) -> list[Entry]:
    return [archived_copy(r.entry, r.reason, r.replaced_by, now) for r in plan.removals]


def preview(store: Store, plan: Plan) -> dict[str, tuple[str, str]]:
    """file -> (text now, text after the plan), for the files the plan touches."""
    now = format_time(utc_now())
    result: dict[str, tuple[str, str]] = {}
    if plan.removals:
        doc = _fresh(store, ARCHIVE_FILE)
        before = doc.serialize()
        add_to_archive(_copies(plan, now))(doc)
        result[ARCHIVE_FILE] = (before, doc.serialize())
    for name, (writes, removals) in _by_file(plan).items():
        doc = _fresh(store, name)
        before = doc.serialize()
        _file_change(writes, removals)(doc)
        result[name] = (before, doc.serialize())
    return result


def _fresh(store: Store, name: str) -> Document:
    """A private, mutable parse of one file."""
    return parse(store.load(name).serialize(), name, store.files)


def unified_diff(store: Store, plan: Plan) -> str:
    """The plan as a unified diff of the files it changes (entry files first)."""
    texts = preview(store, plan)
    order = sorted(texts, key=lambda name: (name == ARCHIVE_FILE, name))
    parts = []
    for name in order:
        before, after = texts[name]
        parts.extend(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=f"a/{name}",
                tofile=f"b/{name}",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in parts)


def apply(store: Store, plan: Plan) -> Applied:
    """Write the plan: archive copies first, then new and rewritten entries, then the
    removals; an archive copy whose removal was skipped is taken back out."""
    now = format_time(utc_now())
    copies = _copies(plan, now)
    if copies:
        store.update(ARCHIVE_FILE, add_to_archive(copies))
    files = _by_file(plan)
    # files that gain entries before files that lose them: never in neither place
    order = sorted(files, key=lambda name: (not files[name][0], name))
    written: list[str] = []
    archived: list[str] = []
    skipped: list[str] = []
    for name in order:
        writes, removals = files[name]
        done, removed, passed = store.update(name, _file_change(writes, removals))
        written += done
        archived += removed
        skipped += passed
    not_removed = {r.entry.id for r in plan.removals} - set(archived)
    if not_removed:
        # skipped (changed meanwhile) or already gone: keep the archive as it was for
        # those still live in their file
        live = {e.id for name in files for e in store.load(name).entries()}
        take_back = not_removed & live
        if take_back:

            def drop(doc: Document) -> None:
                for entry_id in take_back:
                    found = doc.find(entry_id)
                    # only the copy this apply wrote: an older archived entry with the
                    # same id (forgotten before, live again since) stays
                    if found is not None and found.entry.meta.get("archived") == now:
                        doc.remove_entry(entry_id)

            store.update(ARCHIVE_FILE, drop)
    return Applied(written, archived, sorted(set(skipped)))
