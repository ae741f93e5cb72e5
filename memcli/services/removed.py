"""Entries that are in no file any more but whose text the history holds, and bringing
one back (`memcli history --removed`, `memcli restore ID`).

Each removed entry is given with its LAST version (the newest version of any file that
held it: a person's edit before they deleted it included) and how it went:
- `deleted`: a save by hand (an editor) removed it;
- `removed`: an editor's stale buffer, saved right after memcli wrote the entry;
- `reverted`: the same, over memcli's edit of it (the entry is there, with older text);
- `undone`: `undo` took back the change that made it;
- `lost`: a memcli write removed it and it is nowhere else (a move between files cut
  short): `doctor` asks for attention, as for `removed` and `reverted`.
Only versions of the workspace's own entry files are read; a log line naming another
file is left out here and refused where it would be used (naming its line).
"""

from __future__ import annotations

import os
from typing import Any

from memcli.core.models import ARCHIVE_FILE, Entry
from memcli.core.registry import BUILTIN, Registry
from memcli.services.observed import observe_all
from memcli.store.document import Document
from memcli.store.history_log import own_file, refuse
from memcli.store.history_objects import changed_span
from memcli.store.markdown import Parsed, parse_file
from memcli.store.store import Store

NEEDS_ATTENTION = ("removed", "reverted", "lost")


def present(store: Store) -> tuple[dict[str, str], set[str]]:
    """id -> text, and every text, of the entries in the files now (archive.md too)."""
    texts_by_id: dict[str, str] = {}
    texts: set[str] = set()
    for entry in store.entries(include_archived=True, warn=lambda problem: None):
        texts_by_id[entry.id] = entry.text  # (a file that is not UTF-8 is left out)
        texts.add(entry.text)
    return texts_by_id, texts


def removed_entries(store: Store) -> list[dict[str, Any]]:
    """Entries in no file now whose text the history holds (and entries whose memcli
    edit a stale save reverted), newest first, one per id. Each: id, text, type, file,
    t (when it went), meta, kind (above), line (the log line it comes from)."""
    observe_all(store)
    by_id, texts = present(store)
    stale = _stale_saves(store, by_id, texts)
    found = _last_versions(store, set(by_id))
    out = [item for item in stale if item["kind"] == "reverted"]
    stale_removed = {item["id"] for item in stale if item["kind"] == "removed"}
    for item in found:
        if item["text"] in texts:
            continue  # back under another id (a merge renamed it), or written again
        if item["id"] in stale_removed:
            item["kind"] = "removed"
        out.append(item)
    return sorted(out, key=lambda item: item["t"], reverse=True)


def _stale_saves(store: Store, by_id: dict[str, str], texts: set[str]) -> list[dict]:
    seen: set[str] = set()
    out = []
    for item in reversed(store.history.lost_entries()):
        if item["id"] in seen or not own_file(item.get("file"), store.files):
            continue
        seen.add(item["id"])
        if item.get("text") in texts:
            continue  # back, or edited again since
        if item.get("kind", "removed") == "removed" and item["id"] in by_id:
            continue
        out.append(item)
    return out


def _last_versions(store: Store, now: set[str]) -> list[dict[str, Any]]:
    """For each id in no file now: its newest version in the history and how it went.
    Each version is compared with the one it replaced, and only the entries around the
    bytes that changed are parsed (an add to a 690 KB file parses a line or two)."""
    history = store.history
    files = store.files
    versions = [r for r in history.versions() if own_file(r.get("file"), files)]
    records = [r for r in versions if r.get("prev")]
    last: dict[str, tuple[Entry, dict]] = {}  # id -> its text before it went, and when
    for record in records:
        try:
            before, after = history.get(record["prev"]), history.get(record["sha"])
        except KeyError:
            continue  # pruned
        old, new = _around_change(before, after, record["file"], files)
        for entry in _gone(old, new):
            if entry.id not in now:
                last[entry.id] = (entry, record)
    operations = {op["opid"]: op for op in history.operations()} if last else {}
    found = _in_deleted_files(store, versions, now | set(last))
    for entry_id, (entry, record) in last.items():
        kind = _how(record, entry_id, operations, store)
        if kind == "lost" and _moved(entry, record, records, store):
            continue  # the same entry under another id: its later edits are edits
        found.append(
            {
                "id": entry_id, "text": entry.text, "type": entry.type,
                "file": record["file"], "meta": dict(entry.meta), "t": record["t"],
                "line": record["_line"], "kind": kind,
            }
        )
    return found


def _in_deleted_files(store: Store, versions: list[dict], skip: set[str]) -> list[dict]:
    """The entries of a file deleted as a whole (its newest version in the history, the
    file not there now) that are in no file now: `deleted`, as of that version."""
    newest: dict[str, dict] = {}
    for record in versions:
        newest[record["file"]] = record
    found = []
    for name, record in newest.items():
        if os.path.lexists(store.root / name):
            continue
        parsed = _parse(store, record["sha"], name)
        for entry in parsed.entries if parsed is not None else []:
            if entry.id in skip:
                continue
            skip.add(entry.id)
            found.append(
                {
                    "id": entry.id, "text": entry.text, "type": entry.type, "file": name,
                    "meta": dict(entry.meta), "t": record["t"], "line": record["_line"],
                    "kind": "deleted",
                }
            )
    return found


def _moved(entry: Entry, gone: dict, records: list[dict], store: Store) -> bool:
    """Whether the memcli operation that took `entry` out of its file wrote its text,
    under another id, into a file (`review reject` puts the person's version held in
    archive.md back in place of the rewrite, under the rewritten entry's id): the entry
    went on under that id, and nothing was lost when that one is edited later."""
    opid = gone.get("opid")
    if not opid:
        return False
    for record in records:
        if record.get("opid") != opid:
            continue
        try:
            before = store.history.get(record["prev"])
            after = store.history.get(record["sha"])
        except KeyError:
            continue  # pruned
        _, new = _around_change(before, after, record["file"], store.files)
        if any(e.text == entry.text and e.id != entry.id for e in new.values()):
            return True
    return False


def _gone(old: dict[str, Entry], new: dict[str, Entry]) -> list[Entry]:
    """The entries of `old` that `new` no longer has. An entry without an id comment is
    known by its text: one whose text was edited gets another id, so as many id-less
    entries as `new` gained are taken as edited, not gone."""
    gone = [e for i, e in old.items() if i not in new]
    gained = sum(1 for i, e in new.items() if i not in old and not e.id_explicit)
    out = []
    for entry in gone:
        if not entry.id_explicit and gained:
            gained -= 1
            continue
        out.append(entry)
    return out


def _around_change(
    a: bytes, b: bytes, name: str, files: Registry = BUILTIN
) -> tuple[dict[str, Entry], dict[str, Entry]]:
    """The entries (id -> entry) of `a` and of `b` around where they differ: whole
    entries (continuation lines included), read under the section heading above them."""
    start, end_a, end_b = changed_span(a, b)
    start = a.rfind(b"\n", 0, start) + 1
    while start > 0 and (a[start : start + 1] in (b" ", b"\t")
                         or b[start : start + 1] in (b" ", b"\t")):  # a continuation line
        start = a.rfind(b"\n", 0, start - 1) + 1
    tail = a[end_a:]  # the same bytes as b[end_b:]
    stop = 0
    if (end_a and a[end_a - 1] != 0x0A) or (end_b and b[end_b - 1] != 0x0A):
        newline = tail.find(b"\n")  # the change ends inside a line: the rest of it
        stop = len(tail) if newline < 0 else newline + 1
    while stop < len(tail) and tail[stop : stop + 1] in (b" ", b"\t"):  # continuations
        newline = tail.find(b"\n", stop)
        stop = len(tail) if newline < 0 else newline + 1
    context = _context(a, start)
    return (
        _entries_in(context + a[start : end_a + stop], name, files),
        _entries_in(context + b[start : end_b + stop], name, files),
    )


def _context(data: bytes, start: int) -> bytes:
    """Front matter and the nearest heading above byte `start`."""
    front = b""
    if data.startswith(b"---\n"):
        close = data.find(b"\n---\n", 3)
        if close >= 0 and close + 5 <= start:
            front = data[: close + 5]
    at = data.rfind(b"\n#", len(front), start)
    if at >= 0:
        line_end = data.find(b"\n", at + 1)
        return front + data[at + 1 : line_end + 1]
    if data[len(front) : len(front) + 1] == b"#" and len(front) < start:
        return front + data[len(front) : data.find(b"\n", len(front)) + 1]
    return front


def _entries_in(data: bytes, name: str, files: Registry = BUILTIN) -> dict[str, Entry]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return {}
    return {e.id: e for e in parse_file(text, name, files).entries}


def _parse(store: Store, digest: str, name: str) -> Parsed | None:
    try:
        text = store.history.get(digest).decode("utf-8-sig")
    except (KeyError, UnicodeDecodeError):
        return None
    return parse_file(text, name, store.files)


def _how(gone: dict | None, entry_id: str, operations: dict[str, dict], store: Store) -> str:
    """How an entry left the file: by hand, by an undo of what made it, or lost."""
    if gone is None or gone.get("source") != "memcli":
        return "deleted"
    undone = operations.get(str(gone.get("undoes") or ""))
    if gone.get("op") == "undo" and undone is not None and _made(undone, entry_id, store):
        return "undone"
    return "lost"


def _made(op: dict, entry_id: str, store: Store) -> bool:
    """Whether operation `op` brought `entry_id` into the files (no file it wrote had it
    before)."""
    for write in op["writes"]:
        if not write.get("prev"):
            continue
        parsed = _parse(store, write["prev"], write["file"])
        if parsed is None or any(e.id == entry_id for e in parsed.entries):
            return False
    return True


def restore_removed(store: Store, entry_id: str) -> Entry | None:
    """Put an entry that is in no file now back into the file and section of its last
    version (archive.md's entries into the file they came from), with that version's
    text; or, for a reverted edit, memcli's text back into the entry. None when the
    history holds no such entry (or it is back already)."""
    for item in removed_entries(store):
        if item["id"] == entry_id:
            break
    else:
        for planted in store.history.lost_entries():  # a log line naming another file
            if planted.get("id") == entry_id and not own_file(planted.get("file"), store.files):
                raise refuse(store.history.log_path, {"_line": planted["line"], **planted},
                             "restore")
        return None
    if not own_file(item.get("file"), store.files):
        raise refuse(store.history.log_path, {"_line": item.get("line"), **item}, "restore")
    meta = dict(item.get("meta") or {})
    entry_type = item.get("type") or "fact"
    target = item["file"]
    if target == ARCHIVE_FILE:  # deleted from the archive: back where it came from
        entry_type = str(meta.get("type") or "fact")
        back = meta.get("from")
        target = back if own_file(back, store.files) else store.files.file_for_type(entry_type)
        for key in ("archived", "reason", "from", "type", "replaced_by"):
            meta.pop(key, None)
        if target == ARCHIVE_FILE:
            target = store.files.file_for_type(entry_type)
    meta["id"] = item["id"]
    if "/" in target:  # an episode file: its folder may be gone (or a link)
        store.make_folder(target.rsplit("/", 1)[0])
    entry = Entry(
        id=item["id"], text=item["text"], type=entry_type, file=target, line=0, meta=meta,
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
