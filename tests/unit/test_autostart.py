"""memcli.surfaces.daemon.autostart without processes: when a watcher is started for the
agents' path, and that it is started once (the spawn itself is recorded, not run)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memcli.surfaces.daemon import autostart


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, float]]:
    calls: list[tuple[str, float]] = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # this test's list
    monkeypatch.setattr(autostart, "spawn", lambda root, idle, env: calls.append((root, idle)))
    monkeypatch.delenv("MEMCLI_WATCH_AUTOSTART", raising=False)
    return calls


def test_started_once_for_a_workspace(workspace: Path, spawned: list) -> None:
    assert autostart.ensure(workspace) == "started"
    assert spawned == [(str(workspace), 240.0)]
    assert autostart.ensure(workspace) == "starting"  # the marker: once
    assert len(spawned) == 1
    assert autostart.started() == [str(workspace)]


def test_a_stale_marker_is_taken_over(workspace: Path, spawned: list) -> None:
    marker = workspace / ".memcli" / autostart.MARKER
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("1")
    old = time.time() - autostart.STARTING_FOR - 5  # a start that failed long ago
    os.utime(marker, (old, old))
    assert autostart.ensure(workspace) == "started"
    assert len(spawned) == 1


@pytest.mark.parametrize(
    ("env", "toml", "expected"),
    [
        ({"MEMCLI_WATCH_AUTOSTART": "0"}, "", "off"),
        ({"MEMCLI_NO_DAEMON": "1"}, "", "off"),
        ({}, "[watch]\nautostart = false\n", "off"),
        ({"MEMCLI_WATCH_IDLE_EXIT_MINUTES": "15"}, "", "started"),
    ],
)
def test_settings_decide(
    workspace: Path,
    spawned: list,
    monkeypatch: pytest.MonkeyPatch,
    env: dict,
    toml: str,
    expected: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if toml:
        (workspace / "memcli.toml").write_text(toml)
    assert autostart.ensure(workspace) == expected
    assert len(spawned) == (expected == "started")
    if spawned:
        assert spawned[0][1] == 15.0


def test_no_workspace_no_watcher(tmp_path: Path, spawned: list) -> None:
    assert autostart.ensure(tmp_path) == "no workspace"
    assert not spawned and not (tmp_path / ".memcli").exists()


def test_a_failure_is_said_never_raised(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(root: str, idle: float, env: object) -> int:
        raise OSError("no such interpreter")

    monkeypatch.setattr(autostart, "spawn", broken)
    monkeypatch.delenv("MEMCLI_WATCH_AUTOSTART", raising=False)
    assert autostart.ensure(workspace) == "failed: no such interpreter"


def test_a_stale_socket_is_not_a_watcher(workspace: Path, spawned: list) -> None:
    import socket

    from memcli.surfaces.protocol import socket_file

    path = socket_file(str(workspace))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    try:
        assert autostart.answers(str(workspace))
        assert autostart.ensure(workspace) == "running"
    finally:
        listener.close()
    assert not autostart.answers(str(workspace))  # the file stays, nobody listens
    assert autostart.ensure(workspace) == "started"
