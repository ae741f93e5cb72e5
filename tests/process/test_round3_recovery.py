"""Issue 25, recovery: a kill between the writes of a multi-file operation, file names
in the history log outside the workspace, history growth, undo after hand edits and
past an operation with nothing to take back, full disks, and a person's own edits.
Each runs the fault for real (child processes, the CLI); tests/support/round3_recovery.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import round3_recovery as r3


@pytest.mark.parametrize("case", r3.MULTI_FILE_OPS, ids=[c[0] for c in r3.MULTI_FILE_OPS])
def test_a_kill_between_two_writes_never_loses_the_entry(tmp_path: Path, case: tuple) -> None:
    result = r3.crash_between_writes(tmp_path, case)
    assert result["crashed"], result
    assert result["after_crash"], f"{case[0]}: the entry is in no file after the kill"
    if len(result["after_crash"]) > 1:  # in two places: doctor says so
        assert not result["doctor_ok"] and result["doctor"]["in_both"], result["doctor"]
    assert result["again"] == 0, result["again_err"]
    assert result["settled"] == [result["final"]], result


def test_doctor_reports_an_entry_only_the_history_holds(tmp_path: Path) -> None:
    """The state today's undo of a restore left after a kill: the entry in neither
    memory.md nor archive.md; doctor must not say ok."""
    from memcli.services.memory import Memory
    from memcli.store.history import operation

    root = r3.fresh(tmp_path)
    mem = Memory(root, notify=lambda m: None)
    text = mem.get(r3.VICTIM).entry.text
    mem.forget(r3.VICTIM, by="person")
    mem.restore(r3.VICTIM)
    with operation("undo"):  # today's order: memory.md first, killed before archive.md
        mem.store.update("memory.md", lambda doc: doc.remove_entry(r3.VICTIM))
    assert r3.places(root, text) == []
    report = Memory(root, notify=lambda m: None).doctor()
    assert not report["ok"]
    [item] = [i for i in report["removed_entries"] if i["id"] == r3.VICTIM]
    assert item["kind"] == "lost" and item["text"] == text
    done = r3.memcli(root, "restore", r3.VICTIM)
    assert done.returncode == 0, done.stderr
    assert r3.places(root, text) == ["memory.md"]


def test_file_names_from_the_log_are_confined_to_the_entry_files(tmp_path: Path) -> None:
    with r3.in_process():  # the real CLI code, without five times four interpreters
        results = r3.outside_paths(tmp_path)
    for result in results:
        undo, restore, doctor = result["undo"], result["restore"], result["doctor"]
        assert result["untouched"], result["file"]
        assert result["markdown_untouched"], result["file"]
        assert undo.returncode != 0 and f"log.jsonl:{result['line']}" in undo.stderr, (
            result["file"], undo.stdout, undo.stderr)
        assert "Traceback" not in undo.stderr + restore.stderr + doctor.stderr
        assert restore.returncode != 0, (result["file"], restore.stdout)
        assert f"log.jsonl:{result['removed_line']}" in restore.stderr, restore.stderr
        assert "memcli restore mplanted01" not in doctor.stdout
        assert f"log.jsonl:{result['removed_line']}" in doctor.stdout, doctor.stdout


def test_undo_after_a_hand_edit_never_repeats_an_id(tmp_path: Path) -> None:
    with r3.in_process():
        result = r3.undo_after_hand_edit(tmp_path)
    assert not result["duplicates"]
    assert all(o.returncode == 0 for o in result["outputs"]), [o.stderr for o in result["outputs"]]
    assert "undid hand edit" in result["outputs"][0].stdout
    assert result["added_gone"]  # the third undo reached the add before the edits
    with r3.in_process():
        result = r3.undo_never_repeats_an_id(tmp_path)
    assert result["outcome"].returncode == 0, result["outcome"].stderr
    assert not result["duplicates"] and result["texts"] == ["Prefers pytest and markers"]
    assert result["added_gone"]
    assert "stays as it reads now" in result["outcome"].stdout + result["outcome"].stderr


def test_undo_passes_over_an_operation_with_nothing_to_take_back(tmp_path: Path) -> None:
    result = r3.undo_passes_over_empty(tmp_path)
    said = result["outcome"].stdout + result["outcome"].stderr
    assert result["outcome"].returncode == 0, said
    assert "passed over add" in said and result["first_gone"], said


def test_full_disk_messages_say_what_happened(tmp_path: Path) -> None:
    for result in r3.full_disk(tmp_path):
        said = result["done"].stdout + result["done"].stderr
        assert result["written"] == result["expect_written"], (result["point"], said)
        assert "Traceback" not in said, said
        assert not result["temps"], result["temps"]
        if result["written"]:
            assert "nothing was changed" not in said and "history" in said, said
        else:
            assert result["done"].returncode != 0 and "nothing was changed" in said, said


@pytest.mark.parametrize("rename", [False, True], ids=["in-place", "rename"])
def test_entries_deleted_in_an_editor_are_listed_restored_and_undone(
    tmp_path: Path, rename: bool
) -> None:
    with r3.in_process():  # the real watcher and processes: the slow test below
        result = r3.own_deletions(tmp_path, rename)
    assert len(result["listed"]) == 3, result
    assert result["restored"].returncode == 0, result["restored"].stderr
    assert result["text_back"], "restore must bring back the last text (the hand edit)"
    assert all(u.returncode == 0 for u in result["undos"]), [u.stderr for u in result["undos"]]
    assert "undid restore" in result["undos"][0].stdout
    assert "undid hand edit" in result["undos"][1].stdout
    assert result["back_after_undo"] == result["gone"] and result["edited_back"]
    assert not result["duplicates"]


@pytest.mark.slow
def test_the_watcher_records_hand_saves_that_restore_and_undo_then_use(watched) -> None:
    """The real watcher sees a hand edit and then a save deleting three entries (with no
    memcli command between them): each becomes a version, so the edited text is what
    `restore` brings back and `undo` takes the deletion back."""
    import hashlib
    import time

    from memcli.services.memory import Memory
    from memcli.store.history import History
    from memcli.store.store import duplicate_ids

    root, _ = watched
    memory = root / "memory.md"

    def seen() -> None:
        want = hashlib.sha256(memory.read_bytes()).hexdigest()
        deadline = time.time() + 60
        while History(root / ".memcli").head("memory.md") != want:
            assert time.time() < deadline, "the watcher did not record the save"
            time.sleep(0.1)

    text = memory.read_text()
    old = "Writes type hints on every public Python function"
    memory.write_text(text.replace(old, "Writes type hints on every function"))  # in place
    seen()
    lines = [ln for ln in memory.read_text().splitlines(keepends=True)
             if not any(f"id={i} " in ln for i in (r3.VICTIM, r3.OTHER, "m5d1e7b3"))]
    tmp = memory.with_name(".memory.md.swp")
    tmp.write_text("".join(lines))
    tmp.replace(memory)  # saved by rename
    seen()
    listed = r3.memcli(root, "history", "--removed")
    assert all(i in listed.stdout for i in (r3.VICTIM, r3.OTHER, "m5d1e7b3")), listed.stdout
    restored = r3.memcli(root, "restore", r3.OTHER)
    assert restored.returncode == 0, restored.stderr
    assert "Writes type hints on every function" in memory.read_text()
    assert old not in memory.read_text()
    for _ in range(2):  # the restore, then the deletion
        done = r3.memcli(root, "undo", "--yes")
        assert done.returncode == 0, done.stderr
    entries = Memory(root, notify=lambda m: None).entries()
    ids = {e.id for e in entries}
    assert {r3.VICTIM, r3.OTHER, "m5d1e7b3"} <= ids and not duplicate_ids(entries)


def test_temp_files_of_a_killed_write_are_cleaned_by_the_next(tmp_path: Path) -> None:
    import os
    import time

    root = r3.fresh(tmp_path)
    child = r3.run_crashing(root, "forget", r3.VICTIM, 1)  # killed before its first swap
    assert child.returncode == 9
    [left] = list(root.glob(".archive.md.*.tmp"))  # what the kill left
    young = root / ".memory.md.another-writer.tmp"  # a write still in progress
    young.write_text("partial")
    old = time.time() - 3600
    os.utime(left, (old, old))
    done = r3.memcli(root, "forget", r3.VICTIM)
    assert done.returncode == 0, done.stderr
    assert not left.exists() and young.exists()
