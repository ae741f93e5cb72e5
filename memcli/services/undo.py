"""`memcli undo`: take back the newest change to the files, memcli's own operation or a
save someone made by hand, as a three-way merge (the change taken back out of whatever
the files hold now, so later edits stay).

- An operation whose changes are no longer in the files is passed over (and named), and
  undo goes on to the one before: it never gets stuck.
- The undo never leaves two entries with one id: an entry it would bring back whose id
  an entry of the files already carries (moved or edited since) stays as it is now; the
  undo's older text stays in `memcli history ID`.
- Files that gain entries are written before files that lose them, so a crash between
  two writes leaves an entry in two places (the next undo finishes the job), never in
  none. An undo cut short is resumed by the next `undo`.
- Only the workspace's own entry files are written: a log line naming any other file
  is refused with its line number.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memcli.core.errors import MemcliError
from memcli.core.models import ARCHIVE_FILE
from memcli.services.observed import observe_all, when
from memcli.store.document import Document, EntryBlock
from memcli.store.history_log import own_file, refuse
from memcli.store.markdown import parse
from memcli.store.store import Store


@dataclass
class UndoPlan:
    """Taking operation `opid` back: the new text of each file it wrote."""

    op: str
    opid: str
    t: str
    files: dict[str, tuple[str, str]]  # name -> (current text, text after undo)
    conflicts: int = 0
    #: operations passed over (their changes are no longer in the files): op, opid, t
    passed: list[dict[str, str]] = field(default_factory=list)
    #: ids the undo would have repeated: kept as they read now
    kept: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "opid": self.opid, "t": self.t, "files": sorted(self.files),
                "conflicts": self.conflicts, "passed": self.passed, "kept": self.kept}


def plan_undo(store: Store) -> UndoPlan:
    """The newest change not yet undone that still has something to take back, as new
    file texts. Undos are not undone (run the command again instead), nor are merges of
    an editor's late bytes."""
    observe_all(store)
    history = store.history
    records = history.records()
    operations = history.operations()
    undone = _undo_files(records)
    passed: list[dict[str, str]] = []
    for op in reversed(operations):
        if op.get("undoes") or op["op"] == "write":
            continue  # "write": no command's (bytes an editor wrote late, merged back)
        started = undone.get(op["opid"])
        if started is not None and not (started[0] - started[1]):
            continue  # undone, every file
        for write in op["writes"]:
            if not own_file(write["file"], store.files):
                raise refuse(history.log_path, {"_line": write["line"], **write}, "undo")
        plan = _plan_one(store, op, only=(started[0] - started[1]) if started else None)
        if plan.files:
            plan.passed = passed
            return plan
        passed.append({"op": op["op"], "opid": op["opid"], "t": op["t"]})
    what = f"; {len(passed)} change(s) whose effects are no longer in the files" if passed else ""
    raise MemcliError(
        f"nothing to undo: the history of {store.root} holds no change that is not "
        f"undone yet{what}",
        hint="`memcli history` shows what it holds",
    )


def _undo_files(records: list[dict]) -> dict[str, tuple[set[str], set[str]]]:
    """opid -> (files its undo set out to write, files the undo wrote)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for record in records:
        target = record.get("undoes")
        if not target:
            continue
        planned, written = out.setdefault(str(target), (set(), set()))
        if record.get("event") == "undo":
            planned.update(str(f) for f in record.get("files", []))
        elif record.get("event") == "undo-done":
            written.update(planned)
        elif "sha" in record:
            written.add(str(record.get("file")))
    return out


def _plan_one(store: Store, op: dict, only: set[str] | None = None) -> UndoPlan:
    from memcli.store.history_objects import DamagedObject
    from memcli.store.merge import merge_text

    files: dict[str, tuple[str, str]] = {}
    conflicts = 0
    for name in dict.fromkeys(w["file"] for w in op["writes"]):
        if only is not None and name not in only:
            continue
        writes = [w for w in op["writes"] if w["file"] == name]
        try:
            before = _text(store, writes[0]["prev"])
            after = _text(store, writes[-1]["sha"])
        except DamagedObject as exc:
            raise MemcliError(
                f"cannot undo {op['op']} of {when(op['t'])}: the history of {name} is "
                f"damaged ({store.history.objects.path(exc.digest)}: {exc.why}); nothing "
                "was changed",
                hint="`memcli doctor` lists the damage; the files themselves are as they were",
            ) from None
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
    files, kept = _no_repeated_ids(store, files)
    return UndoPlan(op["op"], op["opid"], op["t"], files, conflicts, kept=kept)


def _no_repeated_ids(
    store: Store, files: dict[str, tuple[str, str]]
) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Drop the entries an undo would bring back whose id an entry of the files already
    carries (outside archive.md); returns the files and those ids."""
    docs: dict[str, Document] = {}
    now: dict[str, set[tuple[str, str]]] = {}
    counts: Counter[str] = Counter()
    for name in store.entry_files():
        if name in files:
            continue
        counts.update(e.id for e in store.load(name).entries())
    for name, (current, new) in files.items():
        if name == ARCHIVE_FILE:
            continue
        docs[name] = parse(new, name, store.files)
        now[name] = {(e.id, e.text) for e in parse(current, name, store.files).entries()}
        counts.update(e.id for e in docs[name].entries())
    kept: list[str] = []
    out = dict(files)
    for name, doc in docs.items():
        drop: list[EntryBlock] = []
        for block in doc.entry_blocks():
            entry = block.entry
            if counts[entry.id] > 1 and (entry.id, entry.text) not in now[name]:
                drop.append(block)
                counts[entry.id] -= 1
                kept.append(entry.id)
        if drop:
            doc.blocks = [b for b in doc.blocks if not any(b is d for d in drop)]
            text = doc.serialize()
            out[name] = (files[name][0], text)
            if text == files[name][0]:
                del out[name]
    return out, sorted(set(kept))


def apply_undo(store: Store, plan: UndoPlan) -> None:
    """Write the undo, each file through the guarded update (re-merged if a file changed
    since planning): files that gain entries first, so an entry is never in neither
    place; the files it sets out to write are logged first, so an undo cut short is
    finished by the next."""
    from memcli.store.files import guarded_update
    from memcli.store.history import operation, undoing
    from memcli.store.merge import merge_text

    def gains(name: str) -> bool:
        before, after = plan.files[name]
        was = {e.id for e in parse(before, name).entries()}
        return any(e.id not in was for e in parse(after, name).entries())

    order = sorted(plan.files, key=lambda n: (not gains(n), n == ARCHIVE_FILE))
    with operation("undo"), undoing(plan.opid):
        store.history.note_undo(plan.opid, order)
        for name in order:
            planned_from, planned_to = plan.files[name]

            def change(text: str, a: str = planned_from, b: str = planned_to,
                       file: str = name) -> tuple[str | None, None]:
                result = b if text == a else merge_text(a, text, b).text
                problems = parse(result, file, store.files).problems
                if problems:
                    raise MemcliError(
                        f"cannot undo {plan.op}: {problems[0]}; nothing more was changed",
                        hint="edit the file by hand; `memcli history` shows its versions",
                    )
                return (result if result != text else None), None

            guarded_update(
                store.path(name), store._lock_path(name), change, store.history, name
            )
        store.history.note_undo(plan.opid, order, done=True)


def _text(store: Store, digest: str | None) -> str:
    if not digest:
        return ""
    return store.history.get(digest).decode("utf-8")


def _read(store: Store, name: str) -> str:
    from memcli.store.files import read_text

    path = store.path(name)
    return read_text(path) if path.exists() else ""
