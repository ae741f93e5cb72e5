"""What the file history gives back: past versions, entries an editor's save removed,
undo of memcli's last operation, and the health check (`doctor`).

The history itself (`memcli.store.history`) only records; this module reads it for
people: it plans an undo as a three-way merge (the operation's change taken back out of
whatever the files hold now, so later edits stay), brings removed entries back, and
says what needs attention.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from memcli.core.errors import MemcliError, UnreadableFileError
from memcli.core.models import ARCHIVE_FILE, Entry, file_for_type
from memcli.store.markdown import Document, parse
from memcli.store.store import Store


def observe_all(store: Store) -> list[dict]:
    """Record the current content of every Markdown file in the history (an external
    change becomes a version); returns entries an external save removed just now."""
    lost: list[dict] = []
    for name in store.entry_files(include_archived=True):
        lost += store.observe(name)
    return lost


def _present(store: Store) -> tuple[dict[str, str], set[str]]:
    texts_by_id: dict[str, str] = {}
    texts: set[str] = set()
    for entry in store.entries(include_archived=True, warn=lambda problem: None):
        texts_by_id[entry.id] = entry.text  # (a file that is not UTF-8 is left out)
        texts.add(entry.text)
    return texts_by_id, texts


def removed_entries(store: Store) -> list[dict]:
    """Entries memcli wrote that an external save (a stale editor buffer) removed, or
    whose memcli edit it reverted, and that are not back in any file (archive.md
    included); newest first, one per id. Each: id, text, type, file, t (when the save
    was seen), meta, kind ("removed" or "reverted")."""
    observe_all(store)
    by_id, texts = _present(store)
    seen: set[str] = set()
    out = []
    for item in reversed(store.history.lost_entries()):
        if item["id"] in seen:
            continue
        seen.add(item["id"])
        if item.get("text") in texts:
            continue  # back, or edited again since
        if item.get("kind", "removed") == "removed" and item["id"] in by_id:
            continue
        out.append(item)
    return out


def restore_removed(store: Store, entry_id: str) -> Entry | None:
    """Put an entry an external save removed back into its file and section (or, for
    a reverted edit, memcli's text back into the entry); None when no entry with that
    id was removed (or it is back already)."""
    for item in removed_entries(store):
        if item["id"] == entry_id:
            break
    else:
        return None
    target = item["file"] if item["file"] in ("memory.md", "learnings.md") else None
    if target is None and not str(item["file"]).startswith("episodes/"):
        target = file_for_type(item.get("type") or "fact")
    target = target or item["file"]
    entry = Entry(
        id=item["id"],
        text=item["text"],
        type=item.get("type") or "fact",
        file=target,
        line=0,
        meta=dict(item.get("meta") or {"id": item["id"]}),
        id_explicit=True,
    )

    def put_back(doc: Document) -> Entry:
        found = doc.find(entry.id)
        if found is None:
            return doc.insert_entry(entry)
        if found.entry.text == entry.text:
            return found.entry
        return doc.replace_entry(entry.id, entry)

    return store.update(target, put_back)


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
    return {e.id: e for e in parse(text, file).entries()}


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


# ------------------------------------------------------------------------ undo


@dataclass
class UndoPlan:
    """Taking operation `opid` back: the new text of each file it wrote."""

    op: str
    opid: str
    t: str
    files: dict[str, tuple[str, str]]  # name -> (current text, text after undo)
    conflicts: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "opid": self.opid, "t": self.t, "files": sorted(self.files),
                "conflicts": self.conflicts}


def plan_undo(store: Store) -> UndoPlan:
    """The newest memcli operation not yet undone, as new file texts. Undos are not
    undone (run the command again instead), nor are merges of an editor's late bytes
    (they are the person's, not a command's)."""
    from memcli.store.merge import merge_text

    observe_all(store)
    operations = store.history.operations()
    undone = {op["undoes"] for op in operations if op.get("undoes")}
    for op in reversed(operations):
        if op.get("undoes") or op["opid"] in undone or op["op"] == "write":
            continue  # "write": no command's (bytes an editor wrote late, merged back)
        break
    else:
        raise MemcliError(
            f"nothing to undo: the history of {store.root} holds no memcli operation "
            "that is not undone yet",
            hint="`memcli history` shows what it holds",
        )
    files: dict[str, tuple[str, str]] = {}
    conflicts = 0
    for name in dict.fromkeys(w["file"] for w in op["writes"]):
        writes = [w for w in op["writes"] if w["file"] == name]
        try:
            before = _text(store, writes[0]["prev"])
            after = _text(store, writes[-1]["sha"])
        except KeyError:
            raise MemcliError(
                f"cannot undo {op['op']} of {when(op['t'])}: the history of {name} no "
                "longer has those versions (pruned)",
            ) from None
        current = _read(store, name)
        merged = merge_text(after, current, before)
        conflicts += merged.conflicts
        if merged.text != current:
            files[name] = (current, merged.text)
    return UndoPlan(op["op"], op["opid"], op["t"], files, conflicts)


def apply_undo(store: Store, plan: UndoPlan) -> None:
    """Write the undo, each file through the guarded update (re-merged if a file changed
    since planning); archive.md last, so an entry is never in neither place."""
    from memcli.store.files import guarded_update
    from memcli.store.history import operation, undoing
    from memcli.store.merge import merge_text

    order = sorted(plan.files, key=lambda n: n == ARCHIVE_FILE)
    with operation("undo"), undoing(plan.opid):
        for name in order:
            planned_from, planned_to = plan.files[name]

            def change(text: str, a: str = planned_from, b: str = planned_to,
                       file: str = name) -> tuple[str | None, None]:
                result = b if text == a else merge_text(a, text, b).text
                problems = parse(result, file).problems
                if problems:
                    raise MemcliError(
                        f"cannot undo {plan.op}: {problems[0]}; nothing more was changed",
                        hint="edit the file by hand; `memcli history` shows its versions",
                    )
                return (result if result != text else None), None

            guarded_update(
                store.root / name, store._lock_path(name), change, store.history, name
            )


def _text(store: Store, digest: str | None) -> str:
    if not digest:
        return ""
    return store.history.get(digest).decode("utf-8")


def _read(store: Store, name: str) -> str:
    from memcli.store.files import read_text

    path = store.root / name
    return read_text(path) if path.exists() else ""


def when(t: str) -> str:
    """A history time stamp in local time, for people."""
    try:
        moment = dt.datetime.strptime(t[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.UTC)
    except ValueError:
        return t
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


# ------------------------------------------------------------------------ doctor


def diagnose(store: Store) -> dict[str, Any]:
    """What needs a person's attention: parse problems, duplicate ids, entries an
    editor's save removed. Bytes an editor wrote into a file memcli had replaced are
    merged back on the way (and reported)."""
    from memcli.store.store import duplicate_ids

    problems: list[str] = []
    entries: list[Entry] = []
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
    merged = []
    for name in store.entry_files(include_archived=True):
        if name not in unreadable and store.history.late_writes(name) and not problems:
            store.update(name, lambda doc: None)  # a write merges them back
            merged.append(name)
    removed = removed_entries(store)
    from memcli.store.gitmerge import conflict_entries

    conflicts = [
        f"{e.file}:{e.line}: {e.id} is the other side of a git merge of {e.meta['conflict']}; "
        "keep one text (edit or forget the other) and remove conflict="
        for e in conflict_entries(entries)
    ]
    return {
        "workspace": str(store.root),
        "problems": problems,
        "duplicate_ids": duplicates,
        "removed_entries": removed,
        "merged_late_writes": merged,
        "merge_conflicts": conflicts,
        "ok": not (problems or duplicates or removed or conflicts),
    }
