"""The file history (issue 14): every version kept, entries a stale editor save removed
noticed and brought back, undo, doctor, and editors that save in place racing a write."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.surfaces.cli.app import app
from tests.support.cli import envelope


def stale_save(path: Path, content: bytes) -> None:
    """What an editor holding an old buffer does: truncate, then write it."""
    with open(path, "wb") as handle:
        handle.write(content)


def test_stale_save_over_an_agent_add_is_noticed_and_restorable(
    workspace: Path, runner: CliRunner
) -> None:
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    buffer = memory.read_bytes()  # the editor loaded the file...
    added = mem.add("Deploys go out on Tuesdays after the standup").entry
    stale_save(memory, buffer + b"- A line the person typed\n")  # ...and saved it later
    removed = mem.removed()
    assert [(r["id"], r["text"], r["kind"]) for r in removed] == [(added.id, added.text, "removed")]
    result = runner.invoke(app, ["-w", str(workspace), "history", "--removed", "--json"])
    assert result.exit_code == 0
    assert [r["id"] for r in envelope(result.stdout)["removed"]] == [added.id]
    doctor = runner.invoke(app, ["-w", str(workspace), "doctor"])
    assert doctor.exit_code == 1 and f"memcli restore {added.id}" in doctor.stdout
    result = runner.invoke(app, ["-w", str(workspace), "restore", added.id])
    assert result.exit_code == 0, result.output
    text = memory.read_text()
    assert added.text in text and "A line the person typed" in text  # both kept
    assert mem.removed() == []
    assert runner.invoke(app, ["-w", str(workspace), "doctor"]).exit_code == 0


def test_stale_save_reverting_an_edit_is_noticed_and_reapplied(workspace: Path) -> None:
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    target = mem.add("The staging database is Postgres 16").entry
    buffer = memory.read_bytes()
    mem.edit(target.id, text="The staging database is Postgres 17")
    stale_save(memory, buffer)
    [item] = mem.removed()
    assert (item["id"], item["kind"], item["text"]) == (
        target.id,
        "reverted",
        "The staging database is Postgres 17",
    )
    mem.restore(target.id)
    assert mem.get(target.id).entry.text == "The staging database is Postgres 17"
    assert mem.removed() == []


def test_a_person_deleting_their_own_line_is_listed_but_not_a_problem(
    workspace: Path, runner: CliRunner
) -> None:
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    mem.add("Something memcli wrote")
    text = memory.read_text()
    line = next(ln for ln in text.splitlines() if "Likes dark editor themes" in ln)
    memory.write_text(text.replace(line + "\n", "", 1))  # a hand-written line
    [item] = mem.removed()
    assert (item["kind"], item["text"]) == ("deleted", "Likes dark editor themes")
    assert runner.invoke(app, ["-w", str(workspace), "doctor"]).exit_code == 0


def test_history_lists_versions_and_the_changes_of_one_entry(
    workspace: Path, runner: CliRunner
) -> None:
    mem = Memory(workspace)
    entry = mem.add("Team lunch is on Fridays").entry
    mem.edit(entry.id, text="Team lunch is on Thursdays")
    memory = workspace / "memory.md"
    memory.write_text(memory.read_text().replace("on Thursdays", "on Wednesdays"))  # by hand
    result = runner.invoke(app, ["-w", str(workspace), "history", entry.id, "--json"])
    assert result.exit_code == 0, result.output
    versions = envelope(result.stdout)["versions"]
    assert [(v["source"], v.get("op"), v["text"]) for v in versions] == [
        ("external", None, "Team lunch is on Wednesdays"),
        ("memcli", "edit", "Team lunch is on Thursdays"),
        ("memcli", "add", "Team lunch is on Fridays"),
    ]
    result = runner.invoke(app, ["-w", str(workspace), "history"])
    assert result.exit_code == 0 and "memcli edit" in result.stdout


def test_undo_takes_back_the_last_operation_and_keeps_later_edits(
    workspace: Path, runner: CliRunner
) -> None:
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    original = memory.read_text()
    first = mem.add("Uses Neovim with the lazy.nvim plugin manager").entry
    second = mem.add("Prefers tabs of four spaces in Go code").entry
    with memory.open("a") as handle:  # a hand edit after both
        handle.write("- Hand-written after the adds\n")
    before = memory.read_text()
    preview = runner.invoke(app, ["-w", str(workspace), "undo"])  # a pipe: a preview
    assert preview.exit_code == 0, preview.output
    assert "preview: nothing was changed" in preview.stderr and "--yes" in preview.stderr
    assert "error" not in preview.output and "+- Hand-written" not in preview.stdout
    assert "-- Hand-written after the adds" in preview.stdout  # the diff it would apply
    assert memory.read_text() == before
    result = runner.invoke(app, ["-w", str(workspace), "undo", "--yes"])  # the hand save
    assert result.exit_code == 0 and "undid hand edit" in result.output, result.output
    text = memory.read_text()
    assert "Hand-written after the adds" not in text and second.text in text
    result = runner.invoke(app, ["-w", str(workspace), "undo", "--yes"])
    assert result.exit_code == 0, result.output
    text = memory.read_text()
    assert second.text not in text and first.text in text
    assert runner.invoke(app, ["-w", str(workspace), "undo", "--yes"]).exit_code == 0
    assert memory.read_text() == original


def test_undo_forget_brings_the_entry_back_and_empties_the_archive(workspace: Path) -> None:
    mem = Memory(workspace)
    memory_before = (workspace / "memory.md").read_text()
    victim = next(e for e in mem.entries() if e.file == "memory.md" and e.id_explicit)
    mem.forget(victim.id, by="person")
    assert victim.id not in (workspace / "memory.md").read_text()
    mem.undo(mem.plan_undo())
    assert (workspace / "memory.md").read_text() == memory_before
    assert victim.id not in {
        e.id for e in Memory(workspace).entries(include_archived=True) if e.file == "archive.md"
    }


def test_write_waits_for_an_in_place_save_in_progress(workspace: Path) -> None:
    """An editor truncated the file and has not written yet: memcli must not build on
    the empty file, but wait and build on what the editor writes."""
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    mem.add("Known to the history first")  # the history knows the file with content
    content = memory.read_bytes() + b"- Saved by the editor\n"
    handle = open(memory, "wb")  # noqa: SIM115 - truncated now, written below
    done: list[str] = []
    thread = threading.Thread(target=lambda: done.append(mem.add("Added meanwhile").entry.id))
    thread.start()
    time.sleep(0.3)
    handle.write(content)
    handle.close()
    thread.join(timeout=10)
    text = memory.read_text()
    assert done and "Added meanwhile" in text and "Saved by the editor" in text
    assert "Known to the history first" in text and "Likes dark editor themes" in text


@pytest.mark.parametrize("recently_modified", [True, False])
def test_bytes_written_late_into_the_replaced_file_are_merged_back(
    workspace: Path, recently_modified: bool
) -> None:
    """An editor opened the file (in place) just before memcli replaced it and writes
    after: its bytes land in the old file, which memcli keeps and merges back."""
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    if recently_modified:
        os.utime(memory)  # the editor is at work: the file was just modified
    else:
        os.utime(memory, (time.time() - 60, time.time() - 60))
    handle = open(memory, "r+b")  # noqa: SIM115 - the editor's open file (old inode)
    content = handle.read()
    added = mem.add("Written by memcli while the editor had the file open").entry
    handle.seek(0)
    handle.write(content.replace(b"## Facts\n", b"## Facts\n- Typed in the editor\n", 1))
    handle.truncate()
    handle.close()
    report = mem.doctor()  # any later write merges them; doctor does it and says so
    assert report["merged_late_writes"] == ["memory.md"]
    text = memory.read_text()
    assert "Typed in the editor" in text and added.text in text


def test_history_is_pruned_but_keeps_the_newest_versions(tmp_path: Path) -> None:
    from memcli.store.history import KEEP_PER_FILE, History

    history = History(tmp_path, keep_days=0, keep_mb=0.0001)
    for i in range(KEEP_PER_FILE + 10):
        history.record("memory.md", f"- version {i} {'x' * 200}\n".encode(), source="memcli")
    history.prune()
    kept = history.versions("memory.md")
    assert len(kept) == KEEP_PER_FILE
    assert history.get(kept[-1]["sha"]).startswith(f"- version {KEEP_PER_FILE + 9}".encode())
    objects = list((tmp_path / "history" / "objects").rglob("*"))
    assert len([p for p in objects if p.is_file()]) == KEEP_PER_FILE


def test_history_keeps_each_content_once_and_prunes_by_age(tmp_path: Path) -> None:
    """Content-addressed (one object per content, however often it is recorded) and
    pruned by age: versions older than keep_days go, younger ones stay even beyond the
    newest KEEP_PER_FILE, as long as the objects fit in keep_mb."""
    from memcli.store.history import KEEP_PER_FILE, History

    history = History(tmp_path, keep_days=30, keep_mb=100)
    same = b"- the same content, saved again and again\n"
    for _ in range(5):
        history.record("memory.md", same, source="memcli")
    history.record("learnings.md", same, source="memcli")
    objects = tmp_path / "history" / "objects"
    assert len([p for p in objects.rglob("*") if p.is_file()]) == 1
    old, young = 10, KEEP_PER_FILE + 5
    for i in range(old + young):
        history.record("memory.md", f"- version {i}\n".encode(), source="memcli")
    log = tmp_path / "history" / "log.jsonl"
    records = history.records()
    for record in records:  # memory.md's repeats and first 10 versions: 40 days ago
        text = history.get(record["sha"])
        if record["file"] == "memory.md" and (text == same or int(text.split()[2]) < old):
            record["t"] = "2020-01-01T00:00:00Z"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    history.prune()
    texts = [history.get(v["sha"]).decode() for v in history.versions("memory.md")]
    assert len(texts) == young  # every young version, more than KEEP_PER_FILE
    assert all(t.startswith("- version ") and int(t.split()[2]) >= old for t in texts)
    assert [v["file"] for v in history.versions("learnings.md")] == ["learnings.md"]
    assert history.get(history.versions("learnings.md")[0]["sha"]) == same  # still shared


def test_a_read_cut_inside_a_character_mid_save_waits_for_the_rest(workspace: Path) -> None:
    memory = workspace / "memory.md"
    data = memory.read_bytes() + "- 发布前在预发环境跑一遍迁移\n".encode()
    cut = len(data) - 5  # inside a CJK character
    handle = open(memory, "wb")  # noqa: SIM115 - an editor's in-place save, half done
    handle.write(data[:cut])
    handle.flush()

    def finish() -> None:
        time.sleep(0.2)
        handle.write(data[cut:])
        handle.close()

    thread = threading.Thread(target=finish)
    thread.start()
    texts = [e.text for e in Memory(workspace).entries()]
    thread.join()
    assert "发布前在预发环境跑一遍迁移" in texts


def test_doctor_checks_model_index_watcher_and_git(
    workspace: Path, runner: CliRunner, tmp_path: Path
) -> None:
    import subprocess

    result = runner.invoke(app, ["-w", str(workspace), "doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = envelope(result.stdout)
    by_name = {c["name"]: c for c in report["checks"]}
    assert set(by_name) == {"config", "model", "languages", "onnx", "index", "watcher"}  # no git
    assert "not running" in by_name["watcher"]["detail"]
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    result = runner.invoke(app, ["-w", str(workspace), "doctor"])
    assert result.exit_code == 1 and "memcli git setup" in result.stdout
    assert runner.invoke(app, ["-w", str(workspace), "git", "setup"]).exit_code == 0
    assert runner.invoke(app, ["-w", str(workspace), "doctor"]).exit_code == 0
    manifest = workspace / ".memcli" / "index" / "manifest.json"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text("{not json")
    result = runner.invoke(app, ["-w", str(workspace), "doctor", "--json"])
    failed = json.loads(result.stdout)  # exit 1: the envelope says so, with the report
    assert failed["ok"] is False and failed["error"]["code"] == "unhealthy"
    index = {c["name"]: c for c in failed["data"]["checks"]}["index"]
    assert result.exit_code == 1 and not index["ok"] and "--rebuild" in index["detail"]


def test_restore_brings_back_the_last_text_an_entry_had(workspace: Path) -> None:
    """Deleted by hand, restored, edited by hand, deleted again: restore gives the
    edited text (its last version), never the one from the first deletion."""
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    entry = mem.add("The build cache lives on the NAS").entry

    def delete() -> None:
        text = memory.read_text()
        line = next(ln for ln in text.splitlines(keepends=True) if f"id={entry.id} " in ln)
        memory.write_text(text.replace(line, ""))
        assert entry.id in {item["id"] for item in mem.removed()}  # seen and listed

    delete()
    mem.restore(entry.id)
    memory.write_text(memory.read_text().replace(entry.text, "The build cache lives on S3"))
    mem.removed()  # the edit is seen
    delete()
    back = mem.restore(entry.id)
    assert back.text == "The build cache lives on S3"
    assert memory.read_text().count(f"id={entry.id} ") == 1


def test_an_undo_that_found_a_file_already_done_is_finished(workspace: Path) -> None:
    """An undo planned for two files finds one of them already as the undo would leave
    it (written meanwhile by no one's operation): the undo is complete, and the next
    undo goes to the change before it without passing over this one."""
    mem = Memory(workspace)
    earlier = mem.add("A fact added before the forget").entry
    victim = next(e for e in mem.entries() if e.file == "memory.md" and e.id_explicit)
    mem.forget(victim.id, by="person")
    plan = mem.plan_undo()
    assert sorted(plan.files) == ["archive.md", "memory.md"]
    mem.store.update("archive.md", lambda doc: doc.remove_entry(victim.id))  # op "write"
    mem.undo(plan)
    assert victim.id in (workspace / "memory.md").read_text()
    following = mem.plan_undo()
    assert (following.op, following.passed) == ("add", [])
    mem.undo(following)
    assert earlier.text not in (workspace / "memory.md").read_text()


def test_editing_an_entry_without_an_id_is_not_a_deletion(workspace: Path) -> None:
    mem = Memory(workspace)
    memory = workspace / "memory.md"
    memory.write_text(memory.read_text().replace("Likes dark editor themes",
                                                 "Likes light editor themes"))
    assert mem.removed() == []
    memory.write_text(memory.read_text().replace("- Likes light editor themes\n", ""))
    assert [(i["kind"], i["text"]) for i in mem.removed()] == [
        ("deleted", "Likes light editor themes")]


@pytest.mark.parametrize("deleted", ["memory.md", "episodes"])
def test_entries_of_a_file_deleted_whole_are_listed_and_restorable(
    workspace: Path, deleted: str
) -> None:
    """A whole file removed by hand (memory.md, or every episode file with its folder):
    each entry it held is listed `deleted` and can be brought back (the list was empty)."""
    from tests.support.fakes import HashingEmbedder

    mem = Memory(workspace, embedder_factory=HashingEmbedder, notify=lambda message: None)
    mem.log("Deployed the billing API today")
    mem.removed()  # the files as they are, seen
    before = {e.id: e.text for e in mem.list() if e.file.startswith(deleted)}
    assert before
    target = workspace / deleted
    if target.is_dir():
        import shutil

        shutil.rmtree(target)
    else:
        target.unlink()
    listed = {item["id"]: (item["text"], item["kind"]) for item in mem.removed()}
    assert listed == {i: (text, "deleted") for i, text in before.items()}
    some = next(iter(before))
    assert mem.restore(some).text == before[some]
    assert some not in {item["id"] for item in mem.removed()}
