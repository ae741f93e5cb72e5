"""Issue 25 #17: one workspace is one workspace whatever path reaches it (a symlink, a
bind mount): one watcher, one socket; and a read-only workspace whose index is current
can be searched (a stale one says clearly why it cannot be brought up to date)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memcli.surfaces import protocol
from memcli.surfaces.daemon.server import Lease, RequestHandler
from tests.support.env import make_workspace
from tests.support.processes import memcli, start_watch, stop_watch

LONG = "a-folder-name-long-enough-that-the-socket-path-does-not-fit-in-sun-path-" * 2


@contextlib.contextmanager
def bind_mount(source: Path, target: Path, read_only: bool = False) -> Iterator[Path]:
    """`mount --bind source target` (read-only on request); skips the test where the
    system does not allow it (not root, no mount namespace rights)."""
    target.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            ["mount", "--bind", str(source), str(target)], capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("mount is not available here")
    if done.returncode != 0:
        pytest.skip(f"bind mounts are not allowed here: {done.stderr.decode().strip()}")
    try:
        if read_only:
            ro = subprocess.run(
                ["mount", "-o", "remount,bind,ro", str(target)], capture_output=True, timeout=30
            )
            if ro.returncode != 0:
                pytest.skip(f"read-only remounts are not allowed: {ro.stderr.decode().strip()}")
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30)


def test_the_lease_is_one_whatever_path_reaches_the_workspace(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", "m1", "a fact")
    link = tmp_path / "link"
    link.symlink_to(ws)
    first = Lease(ws)
    first.acquire()
    try:
        with pytest.raises(RuntimeError, match=f"pid {os.getpid()}"):
            Lease(link).acquire()
        with bind_mount(ws, tmp_path / "bound") as bound, pytest.raises(RuntimeError):
            Lease(bound).acquire()
    finally:
        first.release()
    again = Lease(link)
    again.acquire()  # free once released
    again.release()


def test_the_socket_and_the_daemon_know_the_workspace_by_identity(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", "m1", "a fact")
    long_link = tmp_path / LONG
    long_link.symlink_to(ws)
    assert protocol.same_dir(str(long_link), str(ws))
    assert not protocol.same_dir(str(tmp_path), str(ws))
    handler = RequestHandler(ws, lambda: {})
    asked = {"workspace": str(long_link), "env": {}, "request": None}
    assert handler(asked) != {"refused": "this daemon serves another workspace"}
    other = make_workspace(tmp_path / "other", "m2", "another fact")
    assert handler({**asked, "workspace": str(other)}) == {
        "refused": "this daemon serves another workspace"
    }
    with bind_mount(ws, tmp_path / f"{LONG}-bound") as bound:
        assert len(str(bound / ".memcli" / "daemon.sock")) > 100
        long_path = make_workspace(tmp_path / f"{LONG}-2", "m3", "x")
        assert protocol.socket_file(str(bound)) != protocol.socket_file(str(long_path))
        with bind_mount(long_path, tmp_path / f"{LONG}-3") as bound_long:
            # both paths too long for .memcli/: one fallback socket, named by identity
            assert protocol.socket_file(str(bound_long)) == protocol.socket_file(str(long_path))


@pytest.mark.slow
def test_a_second_watcher_through_a_bind_mount_is_refused(tmp_path: Path, exported) -> None:
    """Real watchers: the first on the workspace's own short path, the second on a bind
    mount of it at a path too long for .memcli/daemon.sock (its socket would have gone
    to the per-user folder, unseen by the first)."""
    ws = make_workspace(tmp_path / "ws", "m1", "a fact about green tea")
    first = start_watch(ws)
    try:
        with bind_mount(ws, tmp_path / LONG) as bound:
            second = subprocess.run(
                [sys.executable, "-m", "memcli", "-w", str(bound), "watch"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert second.returncode == 1, second.stderr
            assert "already serves" in second.stderr
    finally:
        stop_watch(first)


def test_in_process_a_read_only_workspace_is_searched_or_says_why_not(tmp_path: Path) -> None:
    """The library on a read-only bind mount (the test embedder): reads work and create
    nothing; a stale index is a clear WorkspaceError, not a lock-file error."""
    from memcli.core.errors import WorkspaceError
    from tests.support.fakes import fake_memory

    ws = make_workspace(tmp_path / "ws", "m1", "Green tea every morning at seven")
    mem = fake_memory(ws)
    assert mem.index_manager.embedder.model_id
    mem.index()
    for lock in (ws / ".memcli" / "locks").glob("*"):
        lock.unlink()
    (ws / ".memcli" / "locks").rmdir()
    before = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
    with bind_mount(ws, tmp_path / "ro", read_only=True) as ro:
        reader = fake_memory(ro)
        assert reader.index_manager.embedder.model_id
        assert reader.search("green tea", limit=1, touch=False)[0].entry.id == "m1"
        assert "Green tea" in reader.inject("tea", touch=False).text
        assert reader.get("m1").entry.id == "m1"
        assert sorted(str(p.relative_to(ws)) for p in ws.rglob("*")) == before
        with (ws / "memory.md").open("a", encoding="utf-8") as handle:
            handle.write("- Black coffee after lunch <!-- id=m2 -->\n")
        stale = fake_memory(ro)
        assert stale.index_manager.embedder.model_id
        with pytest.raises(WorkspaceError, match="out of date.*cannot be updated"):
            stale.search("coffee", limit=1, touch=False)


@pytest.mark.slow
def test_a_read_only_workspace_with_a_current_index_is_searched(tmp_path: Path) -> None:
    """A read-only bind mount (root ignores chmod) of an indexed workspace without its
    locks folder: search, inject, get, list, export work and create nothing; once the
    Markdown changes, search says the index is out of date and cannot be updated."""
    ws = make_workspace(tmp_path / "ws", "m1", "Green tea every morning at seven")
    env = {**os.environ, "MEMCLI_NO_DAEMON": "1"}
    assert memcli(ws, "index", env=env).returncode == 0
    for lock in (ws / ".memcli" / "locks").glob("*"):
        lock.unlink()
    (ws / ".memcli" / "locks").rmdir()
    before = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
    with bind_mount(ws, tmp_path / "ro", read_only=True) as ro:
        for args in (
            ("search", "tea"),
            ("inject", "--query", "tea"),
            ("get", "m1"),
            ("list",),
            ("export",),
        ):
            result = memcli(ro, *args, env=env)
            assert result.returncode == 0, (args, result.stderr)
            assert "Traceback" not in result.stderr
        assert "Green tea" in memcli(ro, "search", "tea", env=env).stdout
        assert sorted(str(p.relative_to(ws)) for p in ws.rglob("*")) == before
        time.sleep(0.01)
        with (ws / "memory.md").open("a", encoding="utf-8") as handle:
            handle.write("- Black coffee after lunch <!-- id=m2 -->\n")
        stale = memcli(ro, "search", "coffee", env=env)
        assert stale.returncode == 1 and "Traceback" not in stale.stderr
        assert "out of date" in stale.stderr and "cannot be updated" in stale.stderr
        assert "read-only" in stale.stderr.lower()
