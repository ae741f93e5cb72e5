"""The history store (issue 25, findings 6 and 16): versions kept as deltas, pruned by
size and age from whatever process writes, never an object a writer logged left
without its content, and the heads read from an index and the log's tail."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memcli.store.history import KEEP_PER_FILE, History


def stored(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / "history" / "objects").rglob("*") if p.is_file())


def big_text(rng: random.Random, lines: int = 3000) -> list[str]:
    return [f"- fact {i} {rng.getrandbits(64):x} about port {rng.randrange(65536)}\n"
            for i in range(lines)]


def test_versions_of_a_big_file_are_stored_as_small_deltas(tmp_path: Path) -> None:
    rng = random.Random(5)
    lines = big_text(rng)
    history = History(tmp_path)
    shas = [history.record("memory.md", "".join(lines).encode(), source="memcli")]
    whole = stored(tmp_path)
    for i in range(10):  # an add, an edit, a removal, ... each between the others
        at = rng.randrange(len(lines))
        if i % 3 == 0:
            lines.insert(at, f"- added {i}\n")
        elif i % 3 == 1:
            lines[at] = f"- edited {i}\n"
        else:
            del lines[at]
        shas.append(history.record("memory.md", "".join(lines).encode(), source="memcli",
                                   prev=shas[-1]))
    assert stored(tmp_path) - whole < whole / 10  # ten versions cost less than a tenth of one copy
    fresh = History(tmp_path)  # read back from disk, not from memory
    assert fresh.get(shas[-1]) == "".join(lines).encode()
    assert all(fresh.get(sha) for sha in shas)


def test_a_damaged_delta_is_never_read_as_a_wrong_version(tmp_path: Path) -> None:
    history = History(tmp_path)
    base = history.record("memory.md", b"- one\n" * 500, source="memcli")
    sha = history.record("memory.md", b"- one\n" * 500 + b"- two\n", source="memcli", prev=base)
    obj = tmp_path / "history" / "objects" / sha[:2] / sha[2:]
    assert obj.read_bytes().startswith(b"D")  # a delta
    (tmp_path / "history" / "objects" / base[:2] / base[2:]).write_bytes(
        __import__("zlib").compress(b"- another base\n" * 500))
    with pytest.raises(KeyError):
        History(tmp_path).get(sha)


def test_pruning_runs_when_every_write_is_its_own_process(tmp_path: Path) -> None:
    """Finding 6: a prune came only after 64 appends by one History object; CLI commands
    and hooks each write a few times and exit. Here each write is a new History (a new
    process), each version 20 KB of incompressible bytes, the limit 0.1 MB."""
    rng = random.Random(1)
    for i in range(KEEP_PER_FILE + 15):
        data = f"- version {i}\n".encode() + rng.randbytes(20_000).hex().encode()
        History(tmp_path, keep_days=0, keep_mb=0.1).record("memory.md", data, source="memcli")
    history = History(tmp_path, keep_days=0, keep_mb=0.1)
    assert len(history.versions("memory.md")) < KEEP_PER_FILE + 15
    kept = history.versions("memory.md")
    assert history.get(kept[-1]["sha"]).startswith(f"- version {KEEP_PER_FILE + 14}".encode())
    objects = [p for p in (tmp_path / "history" / "objects").rglob("*") if p.is_file()]
    assert len(objects) <= len(kept)


def test_a_prune_between_store_and_log_never_leaves_a_logged_version_without_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 16: a writer stores its object, another process prunes (the object is in
    no log line yet), then the writer logs it."""
    writer = History(tmp_path, keep_days=0, keep_mb=0)
    pruner = History(tmp_path, keep_days=0, keep_mb=0)
    for i in range(KEEP_PER_FILE + 2):
        writer.record("learnings.md", f"- lesson {i}\n".encode(), source="memcli")
    real = History._append

    def append_after_a_prune(self: History, record: dict, *args: object, **kw: object) -> None:
        if record.get("file") == "memory.md":
            pruner.prune()  # the object just stored is in no log line yet: it goes
        real(self, record, *args, **kw)

    monkeypatch.setattr(History, "_append", append_after_a_prune)
    data = b"- the version being logged\n"
    sha = writer.record("memory.md", data, source="memcli")
    monkeypatch.undo()
    assert History(tmp_path).get(sha) == data


def test_heads_come_from_the_index_and_the_log_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 6: every command read the whole log for each file's newest version."""
    from memcli.store import history as history_module
    from memcli.store import history_log

    writer = History(tmp_path)
    writer.observe("memory.md", b"- base\n")  # as a person left it
    for i in range(400):  # ≈ 90 KB of log
        writer.record(f"episodes/2026-01-{i % 28 + 1:02d}.md", f"- {i % 3}\n".encode(),
                      source="memcli")
    last = writer.record("memory.md", b"- base\n- newest\n", source="memcli")
    assert History(tmp_path).head("memory.md") == last  # a reader writes the index
    offsets: list[int] = []
    real = history_log.read

    def spy(path: Path, offset: int = 0, first_line: int = 1) -> tuple:
        offsets.append(offset)
        return real(path, offset, first_line)

    monkeypatch.setattr(history_log, "read", spy)
    monkeypatch.setattr(history_module, "read_log", spy)  # History.records()
    newer = writer.record("memory.md", b"- base\n- newest\n- newer still\n", source="memcli",
                          prev=last)
    assert History(tmp_path).head("memory.md") == newer
    # a stale buffer saved over memcli's line: noticed, from the index and the tail
    lost = History(tmp_path).observe("memory.md", b"- base\n- newest\n")
    assert [item["text"] for item in lost] == ["newer still"]
    assert offsets and min(offsets) > 64_000  # the tail only, every time


def test_a_prune_keeps_the_bases_the_kept_deltas_are_built_on(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = big_text(rng, 500)
    history = History(tmp_path, keep_days=0, keep_mb=0.001)
    sha = None
    for i in range(KEEP_PER_FILE + 10):  # one whole copy, then deltas on it
        lines.insert(rng.randrange(len(lines)), f"- added {i}\n")
        sha = history.record("memory.md", "".join(lines).encode(), source="memcli", prev=sha)
    history.prune()
    fresh = History(tmp_path)
    kept = fresh.versions("memory.md")
    assert len(kept) == KEEP_PER_FILE
    assert fresh.get(kept[-1]["sha"]) == "".join(lines).encode()
    assert all(fresh.get(v["sha"]) for v in kept)  # every kept version still reads
