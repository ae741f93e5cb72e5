"""The watcher serves the layers it reads (docs/layers.md): `memcli watch` in a project
observes the per-user workspace too and indexes a hand edit there itself, so the served
search finds it without syncing; it follows a changed `[layers]` while it runs and
writes nothing into a layer the person made read-only. The real WatchService (its real
watchdog observers, the bundled model, real FAISS) in this process, so that the user
layer's index can be looked at; the searches and `watch --status` come from the real CLI
in processes of their own, answered by this watcher."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.services.memory import Memory
from memcli.store.readonly import read_only
from memcli.store.workspace import init_workspace
from tests.support.processes import wait_for

NEW = "Keeps spare quartz zebracorns in the toolbox"


def _cli(ws: Path, *args: str) -> dict:
    """The `data` of `memcli -w ws ARGS --json`, in a process of its own."""
    cli = [sys.executable, "-m", "memcli", "-w", str(ws), *args, "--json"]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["data"]


def _user_manager(service):  # noqa: ANN001, ANN202 - the user layer's index manager
    from memcli.services.layers import open_layers

    with service.lock:
        layers = open_layers(service.current())
    assert [layer.name for layer in layers] == ["project", "user"]
    return layers[1].memory.index_manager


@pytest.mark.slow
def test_the_watcher_indexes_the_user_layer_and_follows_the_layer_list(
    tmp_path: Path, exported, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.surfaces.daemon.service import WatchService

    user = Path(os.environ["XDG_DATA_HOME"]) / "memcli"
    project = tmp_path / "project"
    for root in (user, project):
        init_workspace(root)
    with (user / "memory.md").open("a") as handle:  # the user layer holds entries already
        handle.write("- Drinks green tea\n- Lives in Leipzig\n")
    for root in (user, project):
        Memory(root, notify=lambda m: None).index()
    said: list[str] = []
    service = WatchService(project, log=said.append)
    monkeypatch.setattr(service.server, "detach_stdin", False)  # keep pytest's stdin
    service.start()
    try:
        assert service.status()["layers"]["user"]["workspace"] == str(user.resolve())
        # its real count, though no batch of the watcher's own indexed it (issue 37)
        assert service.status()["layers"]["user"]["entries"] == 2
        manager = _user_manager(service)
        memory = user / "memory.md"
        memory.write_text(memory.read_text() + f"- {NEW}\n")  # a hand edit
        wait_for(lambda: service.status()["layers"]["user"]["batches"] >= 1, timeout=30)
        assert manager.is_current(manager.read_manifest())  # the watcher indexed it
        status = _cli(project, "watch", "--status")  # the real command shows the layer
        assert status["layers"]["user"]["last_batch"]["added"] == 1
        assert status["layers"]["user"]["entries"] == 3

        synced: list[object] = []
        real_sync = manager.sync
        monkeypatch.setattr(manager, "sync", lambda **kw: synced.append(kw) or real_sync(**kw))
        asked = service.server.requests
        hits = _cli(project, "search", "quartz zebracorns", "--no-touch")["hits"]
        assert service.server.requests > asked  # served by this watcher
        assert hits[0]["entry"]["text"] == NEW and hits[0]["layer"] == "user"
        assert synced == []  # the search found the index current: no sync of its own
        assert _user_manager(service) is manager  # ...of the index this search read

        # the layer list changes while it runs: `[layers] read = ""` stops observing
        (project / "memcli.toml").write_text('[layers]\nread = ""\n')
        wait_for(lambda: "layers" not in service.status(), timeout=30)
        # the person makes their own layer read-only, then reads it again: not written
        (user / ".memcli").chmod(0o555)
        (project / "memcli.toml").write_text('[layers]\nread = "user"\n')
        wait_for(lambda: "layers" in service.status(), timeout=30)
        assert "read-only" in service.status()["layers"]["user"]["not_indexed"]
        before = (user / ".memcli" / "index").stat().st_mtime_ns
        memory.write_text(memory.read_text() + "- Sharpens pencils with a knife\n")
        service.layers.tick()  # what the watcher does once a second: no catch-up here
        assert not _user_manager(service).is_current(_user_manager(service).read_manifest())
        assert (user / ".memcli" / "index").stat().st_mtime_ns == before
        assert any("not indexing the user layer" in line for line in said)
        # writable again: observed again, and the edit made meanwhile is caught up
        (user / ".memcli").chmod(0o755)
        wait_for(lambda: "not_indexed" not in service.status()["layers"]["user"], timeout=30)
        manager = _user_manager(service)
        wait_for(lambda: manager.is_current(manager.read_manifest()), timeout=30)
        assert service.status()["layers"]["user"]["last_batch"]["added"] == 1
    finally:
        (user / ".memcli").chmod(0o755)
        service.stop()


@pytest.mark.parametrize(
    ("root_mode", "state_mode", "blocked"),
    [
        (0o755, 0o755, None),  # the person's own, writable
        (0o755, None, None),  # no .memcli yet: the folder decides
        (0o555, None, "read-only"),  # a read-only folder, nothing indexed yet
        (0o755, 0o555, "read-only"),  # the index folder made read-only
        (0o555, 0o755, "read-only"),  # the folder itself read-only
        (0o700, 0o700, None),  # owner-only rights are enough
        (0o755, 0o500, "read-only"),  # readable, not writable
    ],
)
def test_read_only_decides_by_the_owner_write_bit(
    tmp_path: Path, root_mode: int, state_mode: int | None, blocked: str | None
) -> None:
    """As root too (the suite runs as root in CI's containers): the mode says what the
    person meant, not what root could do anyway."""
    root = tmp_path / "layer"
    root.mkdir()
    if state_mode is not None:
        (root / ".memcli").mkdir()
        (root / ".memcli").chmod(state_mode)
    root.chmod(root_mode)
    try:
        found = read_only(root)
        assert (found is None) if blocked is None else (blocked in (found or ""))
    finally:
        root.chmod(0o755)
        if state_mode is not None:
            (root / ".memcli").chmod(0o755)
