"""What the file history gives back, for people: past versions (`memcli history`) and
the health check of the Markdown (`doctor`). Entries that left the files and `restore`
of them are memcli.services.removed, `undo` memcli.services.undo (re-exported here).

The history itself (`memcli.store.history`) only records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcli.core.errors import UnreadableFileError
from memcli.core.models import ARCHIVE_FILE, Entry
from memcli.services.observed import observe_all as observe_all
from memcli.services.observed import when as when
from memcli.services.removed import NEEDS_ATTENTION
from memcli.services.removed import removed_entries as removed_entries
from memcli.services.removed import restore_removed as restore_removed
from memcli.services.undo import UndoPlan as UndoPlan
from memcli.services.undo import apply_undo as apply_undo
from memcli.services.undo import plan_undo as plan_undo
from memcli.store.markdown import parse
from memcli.store.store import Store

# ------------------------------------------------------------------------ versions


@dataclass
class Version:
    """One version of a file in the history, with what it changed in entries."""

    t: str
    file: str
    sha: str
    source: str  # memcli | external | recovered
    op: str | None
    added: list[str] = field(default_factory=list)  # entry ids
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    text: str | None = None  # the entry's text in this version (history of one entry)

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if v is not None}
        return data


def _entries_of(store: Store, digest: str | None, file: str) -> dict[str, Entry] | None:
    if not digest:
        return {}
    try:
        text = store.history.get(digest).decode("utf-8-sig")
    except (KeyError, UnicodeDecodeError):
        return None
    return {e.id: e for e in parse(text, file, store.files).entries()}


def versions(
    store: Store, *, entry_id: str | None = None, file: str | None = None, limit: int = 20
) -> list[Version]:
    """The newest versions first: of one file, of every file, or the versions in which
    entry `entry_id` changed (with its text then)."""
    observe_all(store)
    out: list[Version] = []
    for record in reversed(store.history.versions(file)):
        if len(out) >= limit:
            break
        before = _entries_of(store, record.get("prev"), record["file"])
        after = _entries_of(store, record["sha"], record["file"])
        if before is None or after is None:
            continue  # pruned
        version = Version(
            t=record["t"],
            file=record["file"],
            sha=record["sha"],
            source=record.get("source", "memcli"),
            op=record.get("op"),
            added=[i for i in after if i not in before],
            removed=[i for i in before if i not in after],
            changed=[i for i in after if i in before and after[i].text != before[i].text],
        )
        if entry_id is not None:
            if entry_id not in version.added + version.removed + version.changed:
                continue
            version.text = after[entry_id].text if entry_id in after else None
        elif not (version.added or version.removed or version.changed):
            continue  # the same entries (prose, blank lines): not worth a line
        out.append(version)
    return out


# ------------------------------------------------------------------------ doctor


def diagnose(store: Store, merge: bool = True) -> dict[str, Any]:
    """What needs a person's attention: parse problems, duplicate ids, entries that are
    in no file but the history (a stale editor save, a move between files cut short),
    entries in a live file and archive.md at once (a forget, restore or undo cut short),
    history log lines naming files outside the workspace. Entries deleted by hand are
    listed, not a problem. Bytes an editor wrote into a file memcli had replaced are
    merged back on the way (and reported), unless `merge` is False (another layer's
    files: then only listed, `late_writes`)."""
    from memcli.store.gitmerge import conflict_entries
    from memcli.store.history_log import own_file
    from memcli.store.store import duplicate_ids

    problems: list[str] = []
    entries: list[Entry] = []
    archived: dict[str, Entry] = {}
    unreadable = set()
    for name in store.entry_files(include_archived=True):
        try:
            doc = store.load(name)
        except UnreadableFileError as exc:  # reported like a parse problem, with its line
            problems.append(f"{name}:{exc.line}: {exc.reason}")
            unreadable.add(name)
            continue
        problems += [str(p) for p in doc.problems]
        if name != ARCHIVE_FILE:
            entries += doc.entries()
        else:
            archived = {e.id: e for e in doc.entries()}
    for record in store.history.records():
        if "file" in record and not own_file(record["file"], store.files):
            problems.append(
                f"{store.history.log_path}:{record['_line']}: names {record['file']!r}, "
                "not one of this workspace's entry files: memcli ignores it (remove the line)"
            )
    from memcli.core.validate import invisible_problem

    for entry in entries:  # a hand edit memcli's writes would have refused
        hidden = invisible_problem(entry.text, f"entry {entry.id}")
        if hidden:
            problems.append(
                f"{entry.file}:{entry.line}: {hidden} (inject strips it from blocks; "
                "remove it in your editor)"
            )
    duplicates = [
        f"id {i} at " + ", ".join(f"{e.file}:{e.line}" for e in places)
        for i, places in duplicate_ids(entries).items()
    ]
    in_both = [
        f"{e.id} is in {e.file}:{e.line} and {ARCHIVE_FILE}:{archived[e.id].line} (a "
        f"forget, restore or undo was cut short): `memcli forget {e.id}` keeps it "
        f"archived, `memcli restore {e.id}` keeps it in {e.file}"
        for e in entries
        if e.id in archived and archived[e.id].text == e.text
    ]
    merged, late = [], []
    for name in store.entry_files(include_archived=True):
        if name not in unreadable and store.history.late_writes(name) and not problems:
            if merge:
                store.update(name, lambda doc: None)  # a write merges them back
            (merged if merge else late).append(name)
    gone = removed_entries(store)
    removed = [item for item in gone if item["kind"] in NEEDS_ATTENTION]
    objects = store.history.objects  # damage met reading the versions above
    problems += [
        f"{objects.path(sha)}: a damaged history object ({why}): the versions built on it "
        "cannot be shown or undone; the files themselves are unaffected"
        for sha, why in sorted(objects.damaged.items())
    ]
    conflicts = [
        f"{e.file}:{e.line}: {e.id} is the other side of a git merge of {e.meta['conflict']}; "
        "keep one text (edit or forget the other) and remove conflict="
        for e in conflict_entries(entries)
    ]
    return {
        "workspace": str(store.root),
        "problems": problems,
        "duplicate_ids": duplicates,
        "in_both": in_both,
        "removed_entries": removed,
        "deleted_entries": [item for item in gone if item["kind"] not in NEEDS_ATTENTION],
        "merged_late_writes": merged,
        **({} if merge else {"late_writes": late}),
        "merge_conflicts": conflicts,
        "ok": not (problems or duplicates or removed or conflicts or in_both),
    }
