"""The rule of a read-only layer (memcli.store.readonly.read_only) and what a layer's
index and access counts do once it holds (services.readonly_index): pure logic with
the hashing embedder; the real model's search is tests/integration/test_layer_readonly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcli.services.readonly_index import obey_mode
from memcli.store.readonly import read_only
from memcli.store.workspace import init_workspace
from tests.support.fakes import fake_memory

#: what os.access answers: root may write any folder; another user only where the mode
#: lets them; nobody on a read-only mount
ROOT, USER, MOUNT = "root", "user", "mount"


def _access(who: str):  # noqa: ANN202
    def access(path: os.PathLike, mode: int) -> bool:
        if who == ROOT:
            return True
        if who == MOUNT:
            return False
        return bool(os.stat(path).st_mode & 0o200)

    return access


@pytest.mark.parametrize(
    ("folder", "state", "who", "blocked"),
    [
        (0o755, 0o755, ROOT, None),
        (0o755, 0o755, USER, None),
        (0o755, None, ROOT, None),  # no .memcli yet: the folder decides
        (0o700, 0o700, USER, None),  # owner-only rights are enough
        (0o555, None, ROOT, "is read-only (mode 0555)"),  # the mode, not root's rights
        (0o555, None, USER, "is read-only (mode 0555)"),
        (0o755, 0o555, ROOT, ".memcli is read-only (mode 0555)"),
        (0o755, 0o555, USER, ".memcli is read-only (mode 0555)"),
        (0o555, 0o755, ROOT, "is read-only (mode 0555)"),
        (0o755, 0o500, ROOT, ".memcli is read-only (mode 0500)"),
        (0o577, 0o777, USER, "is read-only (mode 0577)"),  # others' bits do not count
        (0o755, 0o755, MOUNT, "cannot be written"),  # a read-only file system
        (0o755, None, MOUNT, "cannot be written"),
    ],
)
def test_read_only_by_the_owner_write_bit_then_by_access(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    folder: int,
    state: int | None,
    who: str,
    blocked: str | None,
) -> None:
    root = tmp_path / "layer"
    root.mkdir()
    if state is not None:
        (root / ".memcli").mkdir()
        (root / ".memcli").chmod(state)
    root.chmod(folder)
    monkeypatch.setattr("memcli.store.readonly.os.access", _access(who))
    try:
        found = read_only(root)
    finally:
        root.chmod(0o755)
        if state is not None:
            (root / ".memcli").chmod(0o755)
    if blocked is None:
        assert found is None
    else:
        assert found is not None and blocked in found


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
    }


def _layer(tmp_path: Path, indexed: bool):  # noqa: ANN202 - a Memory
    root = tmp_path / "layer"
    init_workspace(root)
    memory = root / "memory.md"
    memory.write_text(
        memory.read_text().replace(
            "## Preferences\n", "## Preferences\n- Likes dark mode <!-- id=mdark -->\n"
        )
    )
    mem = fake_memory(root)
    if indexed:
        mem.index()
    return mem


def test_a_writable_layer_is_left_as_it_was(tmp_path: Path) -> None:
    mem = _layer(tmp_path, indexed=False)
    obey_mode(mem)
    assert mem.index_manager.read_only is None and mem.access.read_only is None
    mem.search("dark mode")  # indexes and counts in the layer, as before
    assert (mem.root / ".memcli" / "index" / "manifest.json").exists()
    assert (mem.root / ".memcli" / "access.json").exists()


@pytest.mark.parametrize("indexed", [True, False])
def test_a_read_only_layer_is_searched_and_nothing_of_it_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    """Its index read in place (indexed) or built in its private folder of the user's
    cache (not yet); a search, the touches of its hits, a direct sync and a long-lived
    process's flush write nothing into it; the next process finds the private index
    current (no temporary folder left behind by a process that ends with os._exit)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    mem = _layer(tmp_path, indexed)
    (mem.root / ".memcli").mkdir(exist_ok=True)
    before = _files(mem.root)
    mem.root.chmod(0o555)
    try:
        obey_mode(mem)
        assert "read-only" in mem.index_manager.read_only and mem.access.read_only
        hits = mem.search("dark mode")
        manager = mem.index_manager
        assert bool(manager.shadowed) is not indexed  # in place while current
        manager.flush()
        manager.sync()  # asked directly (a watcher, `memcli index`): elsewhere too
        mem.access.flush()
        again = fake_memory(mem.root)  # another process
        obey_mode(again)
        assert [h.entry.id for h in again.search("dark mode")] == ["mdark"]
        after = _files(mem.root)
    finally:
        mem.root.chmod(0o755)
    assert [h.entry.id for h in hits] == ["mdark"]
    assert after == before
    private = Path(manager.shadowed)
    assert private.parent == tmp_path / "cache" / "memcli" / "layers"
    assert private.name.startswith("layer-") and private.stat().st_mode & 0o077 == 0
    assert (private / "index" / "manifest.json").exists()
    other = again.index_manager
    assert other.shadowed == private or (indexed and not other.shadowed)


def test_an_index_marked_read_only_by_hand_syncs_in_a_folder_of_its_own(tmp_path: Path) -> None:
    """Without a layer's private folder (obey_mode sets it), a temporary one, removed
    with the index."""
    mem = _layer(tmp_path, indexed=False)
    manager = mem.index_manager
    manager.read_only = "read-only by hand"
    manager.sync()
    private = Path(manager.shadowed)
    assert (private / "index" / "manifest.json").exists()
    assert not (mem.root / ".memcli" / "index").exists()
    del mem, manager
    import gc

    gc.collect()
    assert not private.exists()
