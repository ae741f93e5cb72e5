"""Issue 25 leftovers: an index write the file system refuses (full disk, read-only,
permissions) is one clear error, exit 1, no traceback, no temp file left, the Markdown
unchanged; for `index`, `index --rebuild` and a search that syncs first. For real on a
tiny tmpfs (skipped where mounting is not allowed) and, without a mount, through a
write that raises ENOSPC."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import round3_recovery as r3

MESSAGE = "the index could not be written: No space left on device; the Markdown is unchanged"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(root), *args],
        capture_output=True, text=True, timeout=180, env=r3.env(),
    )


def _temp_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".memcli").rglob("*") if ".tmp" in p.name)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(disk: Path) -> Path:
    """Take every free byte of `disk`; the file that holds them."""
    filler = disk / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


@pytest.mark.slow
def test_a_full_disk_refuses_index_writes_cleanly(tiny_disk: Path) -> None:
    root = r3.fresh(tiny_disk)
    built = _run(root, "index")
    assert built.returncode == 0, built.stderr
    before = sorted(p.name for p in (root / ".memcli" / "index").iterdir())
    memory = (root / "memory.md").read_bytes()
    filler = _fill(tiny_disk)

    for args in (["index", "--rebuild"], ["index"], ["search", "postgres"]):
        if args != ["index", "--rebuild"]:  # the files changed: these must sync first
            (root / "memory.md").touch()  # (no space to add text) a new mtime: a change
            (root / ".memcli" / "index" / "manifest.json").unlink(missing_ok=True)
        done = _run(root, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert MESSAGE in done.stderr, (args, done.stderr)
        assert "memcli index --rebuild" in done.stderr
        assert "Traceback" not in done.stderr
        assert _temp_files(root) == [], args
        assert (root / "memory.md").read_bytes() == memory
    left = sorted(p.name for p in (root / ".memcli" / "index").iterdir())
    assert set(left) <= set(before)  # no half-written generation beside the old one

    filler.unlink()
    again = _run(root, "index", "--rebuild")
    assert again.returncode == 0, again.stderr
    found = _run(root, "search", "postgres", "--json")
    assert found.returncode == 0, found.stderr


def _refusing(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Writing a rows file of a new generation writes half of it, then fails."""
    real = Path.write_bytes

    def refuse(self: Path, data: bytes) -> int:
        if self.name.startswith("rows-"):
            real(self, data[: len(data) // 2])
            raise OSError(code, os.strerror(code), str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", refuse)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES])
def test_a_refused_compaction_leaves_the_old_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """LocalBackend: the half-written generation goes, the old one is still read; the
    write is one IndexWriteError naming the cause."""
    import numpy as np

    from memcli.index.local import LocalBackend
    from memcli.index.write_errors import IndexWriteError, index_writes
    from memcli.store.config import IndexSettings

    folder = tmp_path / "index"
    backend = LocalBackend(folder, IndexSettings())
    backend.reset("m", 4)
    vectors = np.eye(4, dtype=np.float32)[:3]
    backend.upsert(["a", "b", "c"], vectors, ["one", "two", "three"], ["ka", "kb", "kc"])
    backend.flush()
    before = sorted(p.name for p in folder.iterdir())
    _refusing(monkeypatch, code)
    with pytest.raises(IndexWriteError) as caught, index_writes(folder):
        backend.reset("m", 4)
    message = str(caught.value)
    assert message.startswith(f"the index could not be written: {os.strerror(code)}; ")
    assert "the Markdown is unchanged" in message and "memcli index --rebuild" in message
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing half-written
    assert LocalBackend(folder, IndexSettings()).count() == 3


@pytest.mark.slow
def test_index_and_rebuild_report_enospc_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole sync (real model, real files), without a mount."""
    from memcli.core.errors import MemcliError
    from memcli.services.memory import Memory

    root = r3.fresh(tmp_path)
    Memory(root, notify=lambda m: None).index()
    memory = (root / "memory.md").read_bytes()
    before = sorted(p.name for p in (root / ".memcli" / "index").iterdir())
    _refusing(monkeypatch, errno.ENOSPC)
    with pytest.raises(MemcliError) as caught:
        Memory(root, notify=lambda m: None).index(rebuild=True)
    assert str(caught.value).startswith(MESSAGE)
    assert _temp_files(root) == []
    assert sorted(p.name for p in (root / ".memcli" / "index").iterdir()) == before
    assert (root / "memory.md").read_bytes() == memory
    monkeypatch.undo()
    assert Memory(root, notify=lambda m: None).index(rebuild=True).total > 0


def test_other_os_errors_are_not_disguised(tmp_path: Path) -> None:
    from memcli.index.write_errors import index_writes

    (tmp_path / "x.tmp").write_text("half")
    with pytest.raises(OSError) as caught, index_writes(tmp_path):
        raise OSError(errno.EBADF, "Bad file descriptor")
    assert caught.value.errno == errno.EBADF
    assert (tmp_path / "x.tmp").exists()  # only a refused write cleans up


def test_a_full_disk_under_faiss_is_the_same_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An HNSW graph is written by FAISS, which reports a refused write as RuntimeError
    text (its wording, copied from a real 3 MB tmpfs); any other FAISS error stays."""
    import faiss
    import numpy as np

    from memcli.index.local import LocalBackend
    from memcli.index.write_errors import IndexWriteError, index_writes
    from memcli.store.config import IndexSettings

    folder = tmp_path / "index"
    backend = LocalBackend(folder, IndexSettings(ann_threshold=2))
    backend.reset("m", 4)
    vectors = np.eye(4, dtype=np.float32)[:3]
    backend.upsert(["a", "b", "c"], vectors, ["one", "two", "three"], ["ka", "kb", "kc"])
    backend.flush()
    assert backend.vectors.kind == "hnsw"
    backend.upsert(["d"], np.ones((1, 4), dtype=np.float32), ["four"], ["kd"])  # logged
    before = sorted(p.name for p in folder.iterdir())
    real = faiss.write_index
    said = ["write error in {}: 983 != 5000 (No space left on device)"]

    def refuse(index: object, path: str) -> None:
        Path(path).write_bytes(b"half")
        raise RuntimeError(
            "Error in void faiss::write_HNSW(const HNSW*, IOWriter*) at "
            "/project/faiss/impl/index_write.cpp:360: Error: 'ret == (size)' failed: "
            + said[0].format(path)
        )

    monkeypatch.setattr(faiss, "write_index", refuse)
    with pytest.raises(IndexWriteError, match="No space left on device"), index_writes(folder):
        backend.flush()  # compacts: FAISS writes the graph
    assert sorted(p.name for p in folder.iterdir()) == before
    said[0] = "some other failure in {}"
    with pytest.raises(RuntimeError, match="some other failure"), index_writes(folder):
        backend.flush()  # compacts: FAISS writes the graph
    monkeypatch.setattr(faiss, "write_index", real)
    assert LocalBackend(folder, IndexSettings(ann_threshold=2)).count() == 4


def test_a_refused_manifest_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backend alone (no caller's clean-up): the manifest's temp file and the new
    generation go when the manifest cannot be written."""
    import numpy as np

    from memcli.index.local import LocalBackend
    from memcli.store.config import IndexSettings

    folder = tmp_path / "index"
    backend = LocalBackend(folder, IndexSettings())
    backend.reset("m", 4)
    backend.upsert(["a"], np.eye(4, dtype=np.float32)[:1], ["one"], ["ka"])
    backend.flush()
    before = sorted(p.name for p in folder.iterdir())
    real = Path.write_text

    def refuse(self: Path, data: str, *args: object, **kwargs: object) -> int:
        if self.name.startswith(".local.json"):
            real(self, data[:3])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", refuse)
    with pytest.raises(OSError):
        backend.reset("m", 4)
    assert sorted(p.name for p in folder.iterdir()) == before
