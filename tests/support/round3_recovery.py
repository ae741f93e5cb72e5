"""Issue 25's recovery findings as faults run for real: a process killed between the
writes of a multi-file operation, log lines naming files outside the workspace, history
growth, undo after hand edits, full disks, a person's own deletions in an editor.

tests/process/test_round3_recovery.py asserts on these functions; `scenarios()` gives
bench/reliability.py one (attempts, harmless) count per finding.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "workspace"  # as tests.support.env (which imports pytest: bench does not)

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
    mem.forget(arg, by="person")
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
    mem.forget(VICTIM, by="person")


def _setup_undo_forget(mem) -> None:  # noqa: ANN001
    mem.forget(VICTIM, by="person")


def _setup_undo_restore(mem) -> None:  # noqa: ANN001
    mem.forget(VICTIM, by="person")
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
    from memcli.services.recovery import diagnose

    doctor = diagnose(Memory(root, notify=lambda m: None).store)  # doctor's file checks
    again = run_crashing(root, op, arg, 0) if not _IN_PROCESS[0] else _run_here(root, op, arg)
    settled = places(root, text)
    return {
        "case": name, "crashed": crashed, "after_crash": after_crash,
        "doctor_ok": doctor["ok"], "doctor": doctor, "again": again.returncode,
        "again_err": again.stderr[-400:], "settled": settled, "final": final,
    }


def _run_here(root: Path, op: str, arg: str) -> subprocess.CompletedProcess[str]:
    """The operation run again in this process (it is not killed this time)."""
    code = CRASH.split("from memcli.services.memory import Memory", 1)[1]
    namespace = {"sys": type("S", (), {"argv": ["-c", str(root), "0", op, arg]})}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec("from memcli.services.memory import Memory" + code, namespace)  # noqa: S102
    except Exception as exc:  # noqa: BLE001 - reported as the child's failure would be
        return subprocess.CompletedProcess([op], 1, "", repr(exc))
    return subprocess.CompletedProcess([op], 0, "done", "")


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


_IN_PROCESS = [False]  # scenarios run the CLI in this process (Typer's runner): quicker


@contextlib.contextmanager
def in_process() -> Iterator[None]:
    _IN_PROCESS[0] = True
    try:
        yield
    finally:
        _IN_PROCESS[0] = False


def memcli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`memcli -w ROOT ARGS…` in a child process (or through Typer's runner here)."""
    if _IN_PROCESS[0]:
        from typer.testing import CliRunner

        from memcli.surfaces.cli.app import app

        result = CliRunner().invoke(app, ["-w", str(root), *args])
        err = result.stderr + ("Traceback" if result.exception and result.exit_code not in
                               (0, 1, 2) else "")
        return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, err)
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

def history_bytes(root: Path, detached: bool = True) -> int:
    """Bytes under .memcli/history (without detached/: the replaced files kept a couple
    of minutes for an editor's late bytes, at most MAX_DETACHED per file)."""
    total = 0
    for path in (root / ".memcli" / "history").rglob("*"):
        if path.is_file() and (detached or "detached" not in path.parts):
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
    rng = random.Random(kb)
    size, i = 0, 0
    while size < kb * 1000:  # about as compressible as real notes (zlib: ~45 %)
        line = (f"- Service {rng.getrandbits(40):x} of team {rng.randrange(999)} uses port "
                f"{rng.randrange(1024, 65536)} <!-- id=mbig{i:06d} -->\n")
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
    """History KB after `adds` adds on a 690 KB memory.md, run `per_process` at a time
    in separate processes (1: as CLI commands and hooks do): in all, and without the
    replaced files kept a while under detached/."""
    root = big_workspace(where)
    memcli(root, "history", "--limit", "1")  # the history knows the file
    start, start_kept = history_bytes(root), history_bytes(root, detached=False)
    done, first = 0, None
    while done < adds:
        n = min(per_process, adds - done)
        child = subprocess.run([sys.executable, "-c", ADDS, str(root), str(n), str(done)],
                               capture_output=True, text=True, env=env(), timeout=300)
        if child.returncode != 0:
            raise AssertionError(f"add {done} failed: {child.stderr[-1500:]}")
        done += n
        if first is None:
            first = history_bytes(root, detached=False) - start_kept
    kept = history_bytes(root, detached=False)
    return {"memory_kb": (root / "memory.md").stat().st_size / 1000, "start_kb": start / 1000,
            "first_add_kb": (first or 0) / 1000, "after_kb": history_bytes(root) / 1000,
            "after_without_detached_kb": kept / 1000,
            "per_add_kb": (kept - start_kept) / adds / 1000, "adds": adds}


# ------------------------------------------------------------------ 4: undo after hand edits

def undo_after_hand_edit(where: Path) -> dict[str, object]:
    """memcli edits an entry, a person edits the same entry by hand, then undo twice:
    never two entries with one id, and the second undo reaches further back."""
    from memcli.services.memory import Memory
    from memcli.store.store import duplicate_ids

    root = fresh(where, "undo-hand")
    mem = Memory(root, notify=lambda m: None)
    added = mem.add("The release train leaves every second Thursday").entry
    mem.edit(VICTIM, text="Prefers pytest, always with fixtures", by="person")
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
        mem.edit(VICTIM, text="Prefers pytest, always with fixtures", by="person")

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
ENOSPC = OSError(errno.ENOSPC, "No space left on device")
if sys.argv[2] == "history":  # memory.md written, then the history cannot keep it
    from memcli.store import history
    orig = history.History.record
    def record(self, file, data, *, source, prev=None, **extra):
        if source == "memcli":
            raise history._unwritable(self.dir, ENOSPC)
        return orig(self, file, data, source=source, prev=prev, **extra)
    history.History.record = record
elif sys.argv[2] == "object":  # no history object can be written: before any file write
    real = os.fsync
    def fsync(fd):
        if "/history/objects/" in os.readlink(f"/proc/self/fd/{fd}"):
            raise ENOSPC
        return real(fd)
    os.fsync = fsync
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
    """Each multi-file operation killed (a real child, os._exit) between its writes."""
    with in_process():  # the kills are real; the run afterwards is in this process
        results = [crash_between_writes(where, case) for case in MULTI_FILE_OPS]
    return _count(results, _harmless_crash)


def scenario_paths(where: Path) -> tuple[int, int]:
    with in_process():
        return _count(outside_paths(where), _harmless_path)


def scenario_growth(where: Path) -> tuple[int, int]:
    """3 adds, one process each, on a 690 KB memory.md: harmless when each add keeps
    under a tenth of the file for good, and all of .memcli/history stays under the
    file's size times (MAX_DETACHED + 2)."""
    from memcli.store.history import MAX_DETACHED

    result = growth(where, adds=3)
    return 2, int(result["per_add_kb"] < result["memory_kb"] / 10) + int(
        result["after_kb"] < (MAX_DETACHED + 2) * result["memory_kb"])


def scenario_undo(where: Path) -> tuple[int, int]:
    with in_process():
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
    with in_process():
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


