"""Editors racing memcli (issue 14): people save memory.md while agents write to it.

    .venv/bin/python bench/editors.py                 # every editor style, full size
    .venv/bin/python bench/editors.py --saves 20 --ops 10 --styles inplace,stale

(bench/editors.py runs this module's main(); the code lives here because
tests/process/test_reliability.py runs trial() at CI size, and tests never import bench/.)

Each trial copies the sample workspace, starts one editor process saving memory.md the
way a kind of editor does, and memcli writers in their own processes (add, edit,
forget, extract, compress, through the library), all at once; a real `memcli watch`
runs beside them. Editor styles:

- `inplace`: truncate, then write (VS Code, nano, `cat >`), in two pieces;
- `rename`: write a temp file, then rename it over the file (vim's default, JetBrains);
- `backup`: copy the file to `memory.md~`, then truncate and write (vim backupcopy=yes);
- `stale`: keeps one buffer it never reloads and saves it in place again and again, as
  a person does who keeps an editor open while an agent writes.

The careful editors (all but `stale`) reload the file before each save when it changed
on disk, as editors do. Afterwards every line each side was told was written is looked
for: an editor's saved line must be in the files; an entry memcli acknowledged must be
in the files, or, where an editor's save removed it (a stale buffer; a careful
editor's reload-then-save window), recorded by memcli as removed (`memcli history
--removed`) with its text, so it can be brought back. Anything else is lost.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.reliability import (  # noqa: E402 - after the path set-up
    ENV,
    _records,
    _spawn,
    _vocabulary,
    entries_of,
    fresh_workspace,
    phrase,
    start_watcher,
    stop_watcher,
)

STYLES = ("inplace", "rename", "backup", "stale")
OPERATIONS = ("add", "edit", "forget", "extract", "compress")

EDITOR = r"""
import os, random, shutil, sys, time
sys.path.insert(0, os.environ["PYTHONPATH"])
from tests.support.reliability import phrase, _vocabulary
path, count, style, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
go, stop = sys.argv[5], sys.argv[6]
rng = random.Random(seed)
words = _vocabulary()
open(go + ".editor-ready", "w").close()
while not os.path.exists(go):
    time.sleep(0.01)

def read():
    with open(path, "rb") as f:
        return f.read()

def insert(text, line):
    return text.replace("## Facts\n", "## Facts\n" + line, 1)

def save_in_place(data):
    with open(path, "wb") as f:          # O_TRUNC: the file is empty from here...
        cut = rng.randrange(len(data) + 1)
        f.write(data[:cut]); f.flush()
        time.sleep(rng.random() * 0.004)  # ...and half written here
        f.write(data[cut:]); f.flush(); os.fsync(f.fileno())

buffer = read().decode()  # the stale editor's buffer, never reloaded
done = 0
while done < count and not os.path.exists(stop):
    line = f"- Editor {style} {done}: {phrase(rng, words)}\n"  # unrelated texts
    if style == "stale":
        time.sleep(0.02 + rng.random() * 0.08)  # typing
        buffer = insert(buffer, line)
        save_in_place(buffer.encode())
    else:
        loaded = read()
        time.sleep(0.01 + rng.random() * 0.04)  # typing
        if read() != loaded:  # changed on disk: reload, as editors do, and type again
            continue
        data = insert(loaded.decode(), line).encode()
        if style == "inplace":
            save_in_place(data)
        elif style == "backup":
            shutil.copyfile(path, path + "~")
            save_in_place(data)
        else:
            tmp = os.path.join(os.path.dirname(path), ".memory.md.swp")
            with open(tmp, "wb") as f:
                f.write(data); f.flush(); os.fsync(f.fileno())
            os.replace(tmp, path)
    print(line.strip()[2:], flush=True)
    done += 1
"""

WORKER = r"""
import json, os, random, sys, time
sys.path.insert(0, os.environ["PYTHONPATH"])
from tests.support.reliability import phrase, _vocabulary
from memcli.services.memory import Memory
from memcli.core.errors import MemcliError

kind, root, log_path, count, seed, go = sys.argv[1:7]
count, seed = int(count), int(seed)
targets = sys.argv[7].split(",") if len(sys.argv) > 7 and sys.argv[7] else []
rng = random.Random(seed)
words = _vocabulary()
mem = Memory(root, notify=lambda m: None)
mem.search("warm up", touch=False)  # model loaded before the race starts
log = open(log_path, "a", buffering=1)
open(log_path + ".ready", "w").close()
while not os.path.exists(go):
    time.sleep(0.01)

def ack(**record):
    log.write(json.dumps(record) + "\n")

for i in range(count):
    try:
        if kind == "add":
            text = f"Agent{seed} {phrase(rng, words)}"
            ack(op="add", id=mem.add(text, type="fact").entry.id, text=text)
        elif kind == "edit":
            target = targets[i % len(targets)]
            text = f"Revised{seed} {phrase(rng, words)}"
            mem.edit(target, text=text)
            ack(op="edit", id=target, text=text)
        elif kind == "forget" and i < len(targets):
            forgotten = mem.forget(targets[i], by="person")
            ack(op="forget", id=targets[i], text=forgotten.entry.text)
        elif kind == "extract":
            said = phrase(rng, words)
            messages = [{"role": "user", "content": f"Please remember that {said}."}]
            for d in mem.extract(messages, source=f"chat{seed}x{i}"):
                if d.action == "ADD":
                    ack(op="add", id=d.entry_id, text=d.candidate.text)
        elif kind == "compress":
            base = phrase(rng, words, 9)
            for text in (base, base + " indeed"):  # a near-duplicate pair to merge
                entry = mem.add(text, type="fact").entry
                ack(op="added-for-compress", id=entry.id, text=text)
            plan = mem.compress()
            ack(op="compress", actions=len(plan.actions))
    except MemcliError as exc:
        ack(op="error", kind=kind, message=exc.message)
log.close()
"""


@dataclass
class Trial:
    style: str
    editor_saves: int = 0
    memcli_acks: int = 0
    editor_lost: int = 0
    editor_lost_bytes: int = 0
    memcli_lost: int = 0  # acknowledged, not in the files, not recorded as removed
    memcli_removed_recorded: int = 0  # removed by an editor's save, kept in the history
    originals_lost: int = 0
    duplicated: int = 0
    problems: int = 0
    errors: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0


def trial(work: Path, style: str, saves: int, ops: int, seed: int = 1) -> Trial:
    """One editor of `style` making `saves` saves against memcli writers doing `ops`
    operations of each kind, with a watcher running."""
    started = time.time()
    root = fresh_workspace(work, with_index=True)
    from memcli.services.memory import Memory

    mem = Memory(root, notify=lambda m: None)
    original, _, _ = entries_of(root)
    rng = random.Random(seed)
    words = _vocabulary()
    edit_targets = [mem.add(f"Edit target {phrase(rng, words)}").entry.id for _ in range(4)]
    forget_targets = [mem.add(f"Forget target {phrase(rng, words)}").entry.id for _ in range(4)]
    before = {e.id: e.text for e in entries_of(root)[0]}
    watcher = start_watcher(root)
    logs = work / "logs"
    logs.mkdir()
    plan = [
        ("add", ops, seed * 10 + 1, ""),
        ("edit", ops, seed * 10 + 2, ",".join(edit_targets)),
        ("forget", len(forget_targets), seed * 10 + 3, ",".join(forget_targets)),
        ("extract", max(1, ops // 2), seed * 10 + 4, ""),
        ("compress", max(1, ops // 5), seed * 10 + 5, ""),
    ]
    go, stop = work / "go", work / "stop"
    workers = [
        _spawn(WORKER, kind, str(root), str(logs / f"{kind}.jsonl"), str(n), str(s), str(go), t)
        for kind, n, s, t in plan
    ]
    editor = _spawn(
        EDITOR,
        str(root / "memory.md"),
        str(saves),
        style,
        str(seed),
        str(go),
        str(stop),
        stdout=subprocess.PIPE,
    )
    deadline = time.time() + 300
    editor_ready = Path(str(go) + ".editor-ready")
    while time.time() < deadline:  # everyone loaded, then all start at once
        if len(list(logs.glob("*.ready"))) >= len(workers) and editor_ready.exists():
            break
        if any(p.poll() is not None for p in [*workers, editor]):
            break
        time.sleep(0.05)
    go.touch()
    result = Trial(style)
    for proc in workers:
        _, err = proc.communicate(timeout=1200)
        if proc.returncode != 0:
            result.errors.append(err.strip().splitlines()[-1] if err.strip() else "exit")
    stop.touch()  # the editor stops once the writers are done
    out, err = editor.communicate(timeout=1200)
    if editor.returncode != 0:
        result.errors.append(err.strip().splitlines()[-1] if err.strip() else "editor exit")
    time.sleep(1.0)  # let the watcher see the last save
    stop_watcher(watcher)
    check = subprocess.run(  # what a person would run to look: observes the files once more
        [sys.executable, "-m", "memcli", "-w", str(root), "history", "--removed", "--json"],
        env=ENV,
        capture_output=True,
        text=True,
    )
    removed = _removed_texts(check.stdout) if check.returncode == 0 else Counter()
    if check.returncode != 0:
        result.errors.append(f"history: {check.stderr.strip()[-200:]}")

    saved_lines = out.splitlines()
    result.editor_saves = len(saved_lines)
    records = [r for p in sorted(logs.glob("*.jsonl")) for r in _records(p)]
    result.errors += [r["message"] for r in records if r["op"] == "error"]
    live, archived, problems = entries_of(root)
    result.problems = len(problems)
    texts = Counter(e.text for e in live) + Counter(e.text for e in archived)
    for line in saved_lines:
        if texts[line] == 0:
            result.editor_lost += 1
            result.editor_lost_bytes += len(line.encode()) + 3
            result.details.append(f"editor line lost: {line}")
    acked = [r for r in records if r["op"] in ("add", "added-for-compress")]
    last_edit = {r["id"]: r["text"] for r in records if r["op"] == "edit"}
    wanted = [r["text"] for r in acked] + list(last_edit.values())
    result.memcli_acks = len(acked) + sum(r["op"] in ("edit", "forget") for r in records)
    compressed = any(r["op"] == "compress" and r["actions"] for r in records)
    for text in wanted:
        if texts[text] > 0:
            continue
        if removed[text] > 0:
            result.memcli_removed_recorded += 1
        elif compressed and _merged_away(text, texts):
            continue  # compress merged the near-duplicate pair: the longer text stands
        else:
            result.memcli_lost += 1
            result.details.append(f"memcli entry lost: {text}")
    archived_ids = {e.id for e in archived}
    for r in records:
        if r["op"] != "forget" or r["id"] in archived_ids or removed[r["text"]] > 0:
            continue
        if texts[r["text"]] == 0:  # text nowhere (live again after a stale save is kept)
            result.memcli_lost += 1
            result.details.append(f"forget not archived: {r['id']}")
    for entry in original:
        if texts[entry.text] == 0 and removed[entry.text] == 0:
            result.originals_lost += 1
            result.details.append(f"original lost: {entry.text[:60]}")
    edited = set(last_edit)
    forgotten = {r["id"] for r in records if r["op"] == "forget"}
    original_ids = {e.id for e in original}
    for entry_id, text in before.items():  # the targets added before the race
        if entry_id in edited or entry_id in forgotten or entry_id in original_ids:
            continue
        if texts[text] == 0 and removed[text] == 0:
            result.originals_lost += 1
            result.details.append(f"target lost: {text}")
    ids = Counter(e.id for e in live)
    result.duplicated = sum(1 for c in ids.values() if c > 1)
    result.seconds = time.time() - started
    return result


def _removed_texts(stdout: str) -> Counter:
    try:
        data = json.loads(stdout)
    except ValueError:
        return Counter()
    data = data.get("data", data) if isinstance(data, dict) else data  # the --json envelope
    items = data.get("removed", data) if isinstance(data, dict) else data
    return Counter(item.get("text", "") for item in items if isinstance(item, dict))


def _merged_away(text: str, texts: Counter) -> bool:
    """compress keeps one of a near-duplicate pair (`x` and `x indeed`)."""
    other = text[: -len(" indeed")] if text.endswith(" indeed") else text + " indeed"
    return texts[other] > 0


def run(work: Path, styles: list[str], saves: int, ops: int, trials: int) -> list[Trial]:
    results = []
    for style in styles:
        for t in range(trials):
            where = work / f"{style}{t}"
            where.mkdir(parents=True)
            result = trial(where, style, saves, ops, seed=t + 1)
            print(_row(result), flush=True)
            results.append(result)
    return results


def _row(r: Trial) -> str:
    return (
        f"{r.style:8} saves {r.editor_saves:4} acks {r.memcli_acks:4} | editor lost "
        f"{r.editor_lost} ({r.editor_lost_bytes} B) | memcli lost {r.memcli_lost}, removed by "
        f"the editor and recorded {r.memcli_removed_recorded} | originals lost "
        f"{r.originals_lost} | dup {r.duplicated} | problems {r.problems} | "
        f"errors {len(r.errors)} | {r.seconds:.0f} s"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--styles", default=",".join(STYLES))
    parser.add_argument(
        "--saves", type=int, default=5000, help="most editor saves per trial (it saves until "
        "the writers are done)"
    )
    parser.add_argument("--ops", type=int, default=30, help="memcli operations of each kind")
    parser.add_argument("--trials", type=int, default=2, help="trials per style")
    args = parser.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        results = run(Path(tmp), args.styles.split(","), args.saves, args.ops, args.trials)
    print("\nstyle    | trials | editor saves | memcli acks | editor lines lost | lost bytes "
          "| memcli lost | removed+recorded | originals lost | errors")
    for style in args.styles.split(","):
        rs = [r for r in results if r.style == style]
        print(
            f"{style:8} | {len(rs)} | {sum(r.editor_saves for r in rs)} | "
            f"{sum(r.memcli_acks for r in rs)} | {sum(r.editor_lost for r in rs)} | "
            f"{sum(r.editor_lost_bytes for r in rs)} | {sum(r.memcli_lost for r in rs)} | "
            f"{sum(r.memcli_removed_recorded for r in rs)} | "
            f"{sum(r.originals_lost for r in rs)} | {sum(len(r.errors) for r in rs)}"
        )
    for r in results:
        for line in (r.errors + r.details)[:10]:
            print(f"  - {r.style}: {line}")


if __name__ == "__main__":
    main()
