"""Issue 14 §7: ids wide enough not to collide, and an index that notices every content
change (not just size and mtime)."""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import time
from pathlib import Path

from memcli.core.models import new_id
from memcli.services import indexstate
from memcli.store.markdown import derived_id, parse
from tests.support.fakes import fake_memory as quiet_memory

# ------------------------------------------------------------------ ids


def test_derived_ids_of_100k_lines_do_not_collide() -> None:
    texts = [f"Hand-written note number {i} about project {i % 97}" for i in range(100_000)]
    old_width = {hashlib.sha256(t.encode()).hexdigest()[:7] for t in texts}
    assert len(old_width) < len(texts)  # the 28-bit ids the reviewer measured did collide
    ids = {derived_id("m", t) for t in texts}
    assert len(ids) == len(texts)
    assert all(re.fullmatch(r"m[0-9a-f]{16}", i) for i in itertools.islice(ids, 100))


def crafted_pair() -> tuple[str, str]:
    """Two different lines whose 28-bit ids were equal (a birthday search, ~2^14 tries)."""
    seen: dict[str, str] = {}
    for i in itertools.count():
        text = f"Deploy key rotation happens every {i} days"
        prefix = hashlib.sha256(text.encode()).hexdigest()[:7]
        if prefix in seen:
            return seen[prefix], text
        seen[prefix] = text
    raise AssertionError("unreachable")


def test_a_crafted_pair_of_lines_keeps_two_ids(tmp_path: Path) -> None:
    first, second = crafted_pair()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "memory.md").write_text(f"# Memory\n\n## Facts\n- {first}\n- {second}\n")
    doc = parse((root / "memory.md").read_text(), "memory.md")
    ids = [e.id for e in doc.entries()]
    assert len(set(ids)) == 2
    mem = quiet_memory(root)
    for text in (first, second):
        number = text.split()[-2]
        hits = mem.search(number, mode="keyword", limit=1, touch=False)
        assert hits[0].entry.text == text  # each line found as itself, neither shadowed


def test_minted_ids_are_48_random_bits() -> None:
    ids = {new_id([], "m") for _ in range(2000)}
    assert len(ids) == 2000
    assert all(re.fullmatch(r"m[0-9a-f]{12}", i) for i in ids)


# ------------------------------------------------------------------ freshness


def same_size_edit(path: Path, old: str, new: str) -> None:
    """Change `old` to `new` (same length), then put the mtime back like `touch -r`."""
    assert len(old) == len(new)
    before = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_same_size_edit_with_mtime_put_back_is_indexed(workspace: Path) -> None:
    mem = quiet_memory(workspace)
    mem.index()
    assert mem.search("pytest", mode="keyword", limit=1, touch=False)
    same_size_edit(workspace / "memory.md", "pytest", "zquuxy")
    fresh = quiet_memory(workspace)  # a new process...
    assert not fresh.index_manager.is_current(fresh.index_manager.read_manifest())
    hits = fresh.search("zquuxy", mode="keyword", limit=1, touch=False)
    assert hits and "zquuxy" in hits[0].entry.text
    same_size_edit(workspace / "memory.md", "zquuxy", "xyzzyq")
    hits = fresh.search("xyzzyq", mode="keyword", limit=1, touch=False)  # ...and the same one
    assert hits and "xyzzyq" in hits[0].entry.text


def test_an_old_file_changed_under_its_old_stamp_is_seen(workspace: Path, monkeypatch) -> None:
    """The cheap path (stamp as recorded, file settled when hashed) must not vouch for a
    file whose ctime moved: ctime is what `touch -r` cannot put back."""
    mem = quiet_memory(workspace)
    mem.index()
    manager = mem.index_manager
    # pretend the index was hashed long after the files last changed
    monkeypatch.setattr(indexstate, "RACY_NS", -(10**12))
    manifest = manager.read_manifest()
    assert manager.is_current(manifest)
    hashed: list[str] = []
    real = manager._hashed
    monkeypatch.setattr(
        manager, "_hashed", lambda name, st=None: hashed.append(name) or real(name, st)
    )
    assert manager.is_current(manifest) and not hashed  # settled and unchanged: no hashing
    time.sleep(0.01)
    same_size_edit(workspace / "memory.md", "pytest", "zquuxy")
    assert not manager.is_current(manifest)
    assert hashed == ["memory.md"]


def test_touch_without_change_needs_no_reindex(workspace: Path) -> None:
    mem = quiet_memory(workspace)
    mem.index()
    manager = mem.index_manager
    os.utime(workspace / "memory.md")  # a new mtime, the same bytes
    assert manager.is_current(manager.read_manifest())


def test_an_index_from_before_content_hashes_is_refreshed(workspace: Path) -> None:
    import json

    mem = quiet_memory(workspace)
    mem.index()
    path = workspace / ".memcli" / "index" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["files"] = {n: row[:2] for n, row in manifest["files"].items()}  # size, mtime
    path.write_text(json.dumps(manifest))
    fresh = quiet_memory(workspace)
    assert not fresh.index_manager.is_current(fresh.index_manager.read_manifest())
    report = fresh.index()
    assert report.embedded == 0  # the same texts: nothing re-embedded
    assert fresh.index_manager.is_current(fresh.index_manager.read_manifest())
