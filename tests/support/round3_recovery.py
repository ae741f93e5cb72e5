"""Issue 25's recovery findings as faults run for real: a process killed between the
writes of a multi-file operation, log lines naming files outside the workspace, history
growth, undo after hand edits, full disks, a person's own deletions in an editor.

tests/process/test_round3_recovery.py asserts on these functions; `scenarios()` gives
bench/reliability.py one (attempts, harmless) count per finding.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.env import ROOT, SAMPLE

VICTIM = "m8f3a2c1"  # an entry of memory.md in the sample workspace
OTHER = "m2a7c9e0"  # the entry next to it

#: A child that runs one operation and is killed (os._exit, as kill -9 or a power
#: loss would leave it) right before its Nth file swap: the writes before it are on
#: disk, the ones after never happen.
CRASH = r"""
import os, sys
from memcli.store import files
real, calls, at = files._swap_in, [0], int(sys.argv[2])
def swap(tmp, path):
    calls[0] += 1
    if calls[0] == at:
        os._exit(9)
    return real(tmp, path)
files._swap_in = swap
from memcli.services.memory import Memory
mem = Memory(sys.argv[1], notify=lambda m: None)
op, arg = sys.argv[3], sys.argv[4]
if op == "forget":
    mem.forget(arg)
elif op == "restore":
    mem.restore(arg)
elif op == "undo":
    mem.undo(mem.plan_undo())
elif op == "merge":  # compress's apply: one entry rewritten, another archived into it
    from memcli.store.changes import Plan, Removal, Write, apply
    from memcli.store.history import operation
    from dataclasses import replace
    keep, drop = (mem.get(i).entry for i in arg.split(","))
    merged = replace(keep, text=keep.text + " (merged)")
    with operation("compress"):
        apply(mem.store, Plan(writes=[Write(merged, keep)], removals=[Removal(drop, "merged", keep.id)]))
print("done")
"""


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = str(ROOT)
    out.setdefault("HF_HUB_OFFLINE", "1")
    return out


def fresh(where: Path, name: str = "ws") -> Path:
    root = where / name
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".memcli"))
    return root


def run_crashing(root: Path, op: str, arg: str, at: int) -> subprocess.CompletedProcess[str]:
    """Run `op` in a child killed before its `at`-th file swap (0: never killed)."""
    return subprocess.run(
        [sys.executable, "-c", CRASH, str(root), str(at), op, arg],
        capture_output=True, text=True, timeout=120, env=env(),
    )


def places(root: Path, text: str) -> list[str]:
    """The entry files (archive.md included) whose text holds `text`."""
    names = ["memory.md", "learnings.md", "archive.md"]
    return [n for n in names if (root / n).exists() and text in (root / n).read_text()]


# ----------------------------------------------------------------- 1: crash between writes

#: (name, set-up in process, operation in the child, its argument, the text that must
#: survive, where it ends up once the operation is run again without a crash)
def _setup_forget(mem) -> None:  # noqa: ANN001
    pass


def _setup_restore(mem) -> None:  # noqa: ANN001
    mem.forget(VICTIM)


def _setup_undo_forget(mem) -> None:  # noqa: ANN001
    mem.forget(VICTIM)


def _setup_undo_restore(mem) -> None:  # noqa: ANN001
    mem.forget(VICTIM)
    mem.restore(VICTIM)


def _setup_undo_merge(mem) -> None:  # noqa: ANN001
    from dataclasses import replace

    from memcli.store.changes import Plan, Removal, Write, apply
    from memcli.store.history import operation

    keep, drop = mem.get(OTHER).entry, mem.get(VICTIM).entry
    merged = replace(keep, text=keep.text + " (merged)")
    with operation("compress"):
        apply(mem.store, Plan(writes=[Write(merged, keep)], removals=[Removal(drop, "merged", OTHER)]))


MULTI_FILE_OPS: list[tuple[str, Callable, str, str, str]] = [
    ("forget", _setup_forget, "forget", VICTIM, "archive.md"),
    ("restore", _setup_restore, "restore", VICTIM, "memory.md"),
    ("undo of forget", _setup_undo_forget, "undo", "", "memory.md"),
    ("undo of restore", _setup_undo_restore, "undo", "", "archive.md"),
    ("compress apply (merge)", _setup_forget, "merge", f"{OTHER},{VICTIM}", "archive.md"),
    ("undo of compress apply", _setup_undo_merge, "undo", "", "memory.md"),
]


def crash_between_writes(where: Path, case: tuple, at: int = 2) -> dict[str, object]:
    """Run one multi-file operation killed before its `at`-th write, then check the
    victim's text is in some file; then run the operation again (undo: the next undo
    resumes it) and check it ends in exactly one place."""
    from memcli.services.memory import Memory

    name, setup, op, arg, final = case
    root = fresh(where, "crash-" + name.replace(" ", "-").replace("(", "").replace(")", ""))
    mem = Memory(root, notify=lambda m: None)
    text = mem.get(VICTIM).entry.text
    setup(mem)
    child = run_crashing(root, op, arg, at)
    crashed = child.returncode == 9
    after_crash = places(root, text)
    doctor = Memory(root, notify=lambda m: None).doctor()
    again = run_crashing(root, op, arg, 0)
    settled = places(root, text)
    return {
        "case": name, "crashed": crashed, "after_crash": after_crash,
        "doctor_ok": doctor["ok"], "doctor": doctor, "again": again.returncode,
        "again_err": again.stderr[-400:], "settled": settled, "final": final,
    }


def _harmless_crash(result: dict) -> bool:
    return bool(result["after_crash"]) and result["settled"] == [result["final"]] and (
        len(result["after_crash"]) == 1 or not result["doctor_ok"]
    )


# ------------------------------------------------------------- 2: paths from the log

def plant_operation(root: Path, file: str, old: bytes, new: bytes) -> int:
    """Append to the history a memcli `add` that changed `file` from old to new (as a
    tampered or copied workspace may hold); returns its log line number."""
    from memcli.store.history import History

    history = History(root / ".memcli")
    history.dir.mkdir(parents=True, exist_ok=True)
    prev, sha = history.put(old), history.put(new)
    record = {"t": "2099-01-01T00:00:00.000000Z", "file": file, "sha": sha, "prev": prev,
              "source": "memcli", "op": "add", "opid": "planted-1"}
    with open(history.log_path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    return sum(1 for _ in open(history.log_path, encoding="utf-8"))


def plant_removed(root: Path, file: str, entry_id: str = "mplanted01") -> int:
    """Append a stale-save `removed` event naming `file`; returns its log line."""
    from memcli.store.history import History

    history = History(root / ".memcli")
    history.dir.mkdir(parents=True, exist_ok=True)
    record = {"t": "2099-01-01T00:00:00.000000Z", "event": "removed", "file": file,
              "sha": history.put(b"x"), "entries": [
                  {"id": entry_id, "text": "planted text", "type": "fact",
                   "meta": {"id": entry_id}, "kind": "removed"}]}
    with open(history.log_path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    return sum(1 for _ in open(history.log_path, encoding="utf-8"))


def memcli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(root), *args],
        capture_output=True, text=True, timeout=120, env=env(),
    )


def outside_paths(where: Path) -> list[dict[str, object]]:
    """Each escaping name planted in the log of a fresh workspace: undo, restore and
    doctor run for real; what they said and whether anything outside changed."""
    out = []
    for i, file in enumerate(["../outside.txt", "episodes/../../x.md", "/tmp/abs.md",
                              "memory.md/../../y.md", "memcli.toml"]):
        base = where / f"paths{i}"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir()
        root = fresh(base)
        memcli(root, "list")  # the history knows the files
        target = (root / file) if not file.startswith("/") else Path(file)
        target = Path(os.path.normpath(target))
        existed = target.exists()
        before = target.read_bytes() if existed else None
        if not existed and file != "/tmp/abs.md":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"new\n")
            before = b"new\n"
        line = plant_operation(root, file, b"old\n", b"new\n")
        undo = memcli(root, "undo", "--yes")
        removed_line = plant_removed(root, file)
        restore = memcli(root, "restore", "mplanted01")
        doctor = memcli(root, "doctor")
        now = target.read_bytes() if target.exists() else None
        out.append({
            "file": file, "line": line, "removed_line": removed_line,
            "undo": undo, "restore": restore, "doctor": doctor,
            "untouched": now == before, "markdown_untouched": places(root, "planted text") == [],
        })
        if file == "/tmp/abs.md" and not existed:
            with contextlib.suppress(OSError):
                target.unlink()
    return out


def _harmless_path(result: dict) -> bool:
    undo, restore, doctor = result["undo"], result["restore"], result["doctor"]
    return bool(
        result["untouched"] and result["markdown_untouched"]
        and undo.returncode != 0 and f"log.jsonl:{result['line']}" in undo.stderr
        and restore.returncode != 0 and f"log.jsonl:{result['removed_line']}" in restore.stderr
        and "memcli restore mplanted01" not in doctor.stdout
        and f"log.jsonl:{result['removed_line']}" in doctor.stdout
    )


# ------------------------------------------------------------------ 3: history growth

def history_bytes(root: Path) -> int:
    total = 0
    for path in (root / ".memcli" / "history").rglob("*"):
        if path.is_file():
            total += path.stat().st_size
    return total


def big_workspace(where: Path, kb: int = 690) -> Path:
    """A workspace whose memory.md is about `kb` KB of distinct entries."""
    from memcli.store.workspace import init_workspace

    root = where / "big"
    shutil.rmtree(root, ignore_errors=True)
    init_workspace(root)
    memory = root / "memory.md"
    lines = [memory.read_text()]
    size, i = 0, 0
    while size < kb * 1000:
        line = (f"- Fact number {i} about service {i * 7919 % 10007} uses port "
                f"{1024 + i % 50000} <!-- id=mbig{i:06d} -->\n")
        lines.append(line)
        size += len(line)
        i += 1
    memory.write_text("".join(lines))
    return root


ADDS = r"""
import sys
from memcli.services.memory import Memory
mem = Memory(sys.argv[1], notify=lambda m: None)
for i in range(int(sys.argv[2])):
    mem.add(f"Added fact {sys.argv[3]} {i} about the build cache", type="fact")
"""


def growth(where: Path, adds: int = 200, per_process: int = 1) -> dict[str, float]:
    """History bytes after each of `adds` adds on a 690 KB memory.md, the adds run
    `per_process` at a time in separate processes (1: as CLI commands and hooks do)."""
    root = big_workspace(where)
    memcli(root, "list")
    start = history_bytes(root)
    sizes = []
    done = 0
    while done < adds:
        n = min(per_process, adds - done)
        subprocess.run([sys.executable, "-c", ADDS, str(root), str(n), str(done)],
                       check=True, capture_output=True, env=env(), timeout=300)
        done += n
        sizes.append(history_bytes(root))
    first = sizes[0] - start
    return {"memory_kb": (root / "memory.md").stat().st_size / 1000, "start_kb": start / 1000,
            "first_add_kb": first / 1000, "after_kb": sizes[-1] / 1000, "adds": adds}


# ------------------------------------------------------------------ 4: undo after hand edits

def undo_after_hand_edit(where: Path) -> dict[str, object]:
    """memcli edits an entry, a person edits the same entry by hand, then undo twice:
    never two entries with one id, and the second undo reaches further back."""
    from memcli.services.memory import Memory
    from memcli.store.store import duplicate_ids

    root = fresh(where, "undo-hand")
    mem = Memory(root, notify=lambda m: None)
    added = mem.add("The release train leaves every second Thursday").entry
    mem.edit(VICTIM, text="Prefers pytest, always with fixtures")
    memory = root / "memory.md"
    text = memory.read_text()
    memory.write_text(text.replace("Prefers pytest, always with fixtures",
                                   "Prefers pytest with fixtures and markers"))
    outputs = []
    for _ in range(3):
        outputs.append(memcli(root, "undo", "--yes"))
        entries = Memory(root, notify=lambda m: None).entries()
        if duplicate_ids(entries):
            break
    entries = Memory(root, notify=lambda m: None).entries()
    return {
        "duplicates": sorted(duplicate_ids(entries)),
        "outputs": outputs,
        "added_gone": added.text not in memory.read_text(),
        "victim_texts": [e.text for e in entries if e.id == VICTIM],
    }


def undo_passes_over_empty(where: Path) -> dict[str, object]:
    """An add whose entry a write that is no one's operation (bytes an editor wrote
    late, merged back) took out again: undo must not stop at it ("nothing to take
    back") but say so and take back the change before it."""
    from memcli.services.memory import Memory

    root = fresh(where, "undo-stuck")
    mem = Memory(root, notify=lambda m: None)
    first = mem.add("First fact for the stuck undo").entry
    second = mem.add("Second fact for the stuck undo").entry
    mem.store.update("memory.md", lambda doc: doc.remove_entry(second.id))  # op "write"
    outcome = memcli(root, "undo", "--yes")
    return {"outcome": outcome, "first_gone": first.text not in (root / "memory.md").read_text()}


def undo_never_repeats_an_id(where: Path) -> dict[str, object]:
    """One operation adds an entry and edits another, then a write that is no one's
    operation changes the edited entry again: undoing the operation conflicts on that
    entry; the result must not carry its id twice (it stays as it reads now)."""
    from dataclasses import replace

    from memcli.services.memory import Memory
    from memcli.store.history import operation
    from memcli.store.store import duplicate_ids

    root = fresh(where, "undo-dup")
    mem = Memory(root, notify=lambda m: None)
    with operation("import"):  # one operation: an entry added, another edited
        added = mem.add("Imported fact next to the edit").entry
        mem.edit(VICTIM, text="Prefers pytest, always with fixtures")

    def later(doc):  # noqa: ANN001, ANN202
        found = doc.find(VICTIM).entry
        return doc.replace_entry(VICTIM, replace(found, text="Prefers pytest and markers"))

    mem.store.update("memory.md", later)
    outcome = memcli(root, "undo", "--yes")
    entries = Memory(root, notify=lambda m: None).entries()
    return {"outcome": outcome, "duplicates": sorted(duplicate_ids(entries)),
            "texts": [e.text for e in entries if e.id == VICTIM],
            "added_gone": all(e.id != added.id for e in entries)}


# ------------------------------------------------------------------ 5: full disk

FULL_DISK = r"""
import errno, os, sys
from memcli.store import history_objects
real = os.write
def full(*a, **k):
    raise OSError(errno.ENOSPC, "No space left on device")
if sys.argv[2] == "history":  # memory.md written, then the history's object fails
    import memcli.store.files as files
    real_record = None
    from memcli.store import history
    orig = history.History.record
    def record(self, file, data, *, source, prev=None, **extra):
        if source == "memcli":
            raise history._unwritable(self.dir, OSError(errno.ENOSPC, "No space left on device"))
        return orig(self, file, data, source=source, prev=prev, **extra)
    history.History.record = record
elif sys.argv[2] == "object":  # the history's object cannot be written at all
    history_objects.os.fsync = full
from memcli.surfaces.cli.app import main
sys.argv = ["memcli", "-w", sys.argv[1], *sys.argv[3:]]
main()
"""


def full_disk(where: Path) -> list[dict[str, object]]:
    """Commands run with the disk full at one point: what they said, whether it is
    true, whether a traceback or a temp file was left."""
    out = []
    for point, args, expect_written in [
        ("history", ["add", "Full disk after the write"], True),
        ("object", ["add", "Full disk before the write"], False),
    ]:
        root = fresh(where, "full-" + point)
        memcli(root, "list")
        before = (root / "memory.md").read_bytes()
        done = subprocess.run([sys.executable, "-c", FULL_DISK, str(root), point, *args],
                              capture_output=True, text=True, timeout=120, env=env())
        written = (root / "memory.md").read_bytes() != before
        temps = [p for p in root.rglob(".*.tmp")]
        out.append({"point": point, "done": done, "written": written,
                    "expect_written": expect_written, "temps": temps})
    return out


def _harmless_full(result: dict) -> bool:
    done = result["done"]
    said = done.stdout + done.stderr
    truthful = ("nothing was changed" not in said) if result["written"] else (
        "nothing was changed" in said or "unchanged" in said)
    return bool(
        result["written"] == result["expect_written"] and truthful
        and "Traceback" not in said and not result["temps"]
    )


# ------------------------------------------------------------------ 6: own edits

def own_deletions(where: Path, rename: bool) -> dict[str, object]:
    """A person deletes three entries in an editor (written in place, or saved to a
    temp file renamed over memory.md): listed, restorable with their last text (a hand
    edit made before the deletion included), and the save undoable; no duplicate id."""
    from memcli.services.memory import Memory
    from memcli.store.store import duplicate_ids

    root = fresh(where, "own-" + ("rename" if rename else "inplace"))
    memory = root / "memory.md"
    mem = Memory(root, notify=lambda m: None)
    written = mem.add("The deploy freeze starts on December 20").entry
    memcli(root, "list")

    def save(text: str) -> None:
        if rename:
            tmp = memory.with_name(".memory.md.swp")
            tmp.write_text(text)
            os.replace(tmp, memory)
        else:
            memory.write_text(text)

    edited = "The deploy freeze starts on December 18"
    save(memory.read_text().replace(written.text, edited))  # a hand edit first…
    memcli(root, "history")  # …seen (by any memcli command that reads the history)
    gone = [VICTIM, OTHER, written.id]
    lines = [ln for ln in memory.read_text().splitlines(keepends=True)
             if not any(f"id={i} " in ln or f"id={i} -->" in ln for i in gone)]
    save("".join(lines))  # then three entries deleted
    listed = json.loads(memcli(root, "history", "--removed", "--json").stdout or "{}")
    listed_ids = {item["id"] for item in listed.get("data", listed).get("removed", [])}
    restored = memcli(root, "restore", written.id)
    text_back = edited in memory.read_text() and written.text not in memory.read_text()
    undos = [memcli(root, "undo", "--yes"), memcli(root, "undo", "--yes")]  # restore, save
    after = Memory(root, notify=lambda m: None).entries()
    ids = [e.id for e in after]
    return {
        "listed": sorted(listed_ids & set(gone)), "restored": restored, "text_back": text_back,
        "undos": undos, "back_after_undo": sorted(i for i in gone if i in ids),
        "edited_back": edited in memory.read_text(), "gone": sorted(gone),
        "duplicates": sorted(duplicate_ids(after)),
    }


# ------------------------------------------------------------------ scenarios

def _count(results: list, check: Callable[[dict], bool]) -> tuple[int, int]:
    return len(results), sum(1 for r in results if check(r))


def scenario_crash(where: Path) -> tuple[int, int]:
    return _count([crash_between_writes(where, case) for case in MULTI_FILE_OPS], _harmless_crash)


def scenario_paths(where: Path) -> tuple[int, int]:
    return _count(outside_paths(where), _harmless_path)


def scenario_growth(where: Path) -> tuple[int, int]:
    """30 adds, one process each, on a 690 KB memory.md: harmless when each add costs
    under a tenth of the file and the history stays under the file's size times 5."""
    result = growth(where, adds=30)
    per_add = (result["after_kb"] - result["start_kb"]) / result["adds"]
    return 2, int(per_add < result["memory_kb"] / 10) + int(
        result["after_kb"] < 5 * result["memory_kb"])


def scenario_undo(where: Path) -> tuple[int, int]:
    first = undo_after_hand_edit(where)
    second = undo_passes_over_empty(where)
    third = undo_never_repeats_an_id(where)
    ok1 = not first["duplicates"] and all(o.returncode == 0 for o in first["outputs"])
    said = second["outcome"].stdout + second["outcome"].stderr
    ok2 = second["outcome"].returncode == 0 and "passed over" in said and second["first_gone"]
    ok3 = third["outcome"].returncode == 0 and not third["duplicates"]
    return 3, int(ok1) + int(ok2) + int(ok3)


def scenario_full_disk(where: Path) -> tuple[int, int]:
    return _count(full_disk(where), _harmless_full)


def scenario_own_edits(where: Path) -> tuple[int, int]:
    results = [own_deletions(where, rename=False), own_deletions(where, rename=True)]

    def ok(r: dict) -> bool:
        return bool(len(r["listed"]) == 3 and r["restored"].returncode == 0 and r["text_back"]
                    and all(u.returncode == 0 for u in r["undos"]) and not r["duplicates"]
                    and r["back_after_undo"] == r["gone"] and r["edited_back"])

    return _count(results, ok)


def scenarios() -> list[tuple[str, Callable[[Path], tuple[int, int]]]]:
    """One scenario per recovery finding of issue 25: (name, run(scratch) -> (attempts,
    harmless))."""
    return [
        ("#2 kill between the writes of a multi-file operation", scenario_crash),
        ("#5 file names in the history log outside the workspace", scenario_paths),
        ("#6 history growth per add on a 690 KB memory.md", scenario_growth),
        ("#13 undo after a hand edit / an operation with nothing to take back", scenario_undo),
        ("#15 messages under a full disk", scenario_full_disk),
        ("own edits: deleted in an editor, listed, restored, undone", scenario_own_edits),
    ]


__all__ = ["scenarios", "errno"]
