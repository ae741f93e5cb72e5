"""What a watcher daemon does per served request besides answering it (issue 27 item
4): its own settings environment is read once, not per request; the workspace it serves
is resolved once; the entry files are stat'ed once each to see whether they changed.
And what must hold all the same: a client whose settings environment differs is
refused, a hand edit made before a request is seen by that request, a changed setting
is picked up by the next one. (bench/daemon_request.py measures the time.)"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from memcli.services import runtime
from memcli.surfaces import protocol
from memcli.surfaces.daemon import server
from memcli.surfaces.daemon.server import RequestHandler
from tests.support.env import SAMPLE
from tests.support.fakes import fake_memory

ENTRY_FILES = ("memory.md", "learnings.md", "archive.md")


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - (ws, handler)
    from memcli.services import indexstate

    # files written this instant are hashed again until they settle (RACY_NS): the
    # steady state of a watcher, whose files were written long before, at once
    monkeypatch.setattr(indexstate, "RACY_NS", 0)
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws)
    ws = ws.resolve()
    mem = fake_memory(ws)
    mem.long_lived()
    handler = RequestHandler(ws, lambda: {}, memory=lambda: mem)
    assert "hits" in ask(handler, ws, "python tests")  # warm: index built, memos filled
    return ws, handler


def ask(handler: RequestHandler, ws: Path, query: str, env: dict | None = None) -> dict:
    env = protocol.settings_env(os.environ) if env is None else env
    wire = {"kind": "SearchQuery", "query": query, "touch": False, "mode": "keyword"}
    return handler({"request": wire, "workspace": str(ws), "env": env})


def test_the_settings_environment_is_read_once(served, monkeypatch) -> None:  # noqa: ANN001
    ws, handler = served
    client = protocol.settings_env(os.environ)
    calls = []
    monkeypatch.setattr(server, "settings_env", lambda environ: calls.append(1) or {})
    for _ in range(3):
        assert "hits" in ask(handler, ws, "python tests", client)
    assert calls == []
    # a client with other settings is still refused
    refused = ask(handler, ws, "python tests", {**client, "MEMCLI_SEARCH_LIMIT": "3"})
    assert "settings environment differs" in refused["refused"]


def test_stats_per_served_search(served, monkeypatch) -> None:  # noqa: ANN001
    ws, handler = served
    present = [n for n in ENTRY_FILES if (ws / n).exists()]
    assert present == ["memory.md", "learnings.md"]
    counts: Counter[str] = Counter()
    real_stat = os.stat

    def counted(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        counts[os.fspath(path)] += 1
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    assert "hits" in ask(handler, ws, "docker")
    # each: once to list the entry files, once to compare with the index's record of
    # them; memory.md once more: is the workspace still there (Runtime.require)
    assert {n: counts[str(ws / n)] for n in present} == {"memory.md": 3, "learnings.md": 2}


def test_a_hand_edit_before_a_request_is_seen_by_it(served) -> None:  # noqa: ANN001
    ws, handler = served
    memory = ws / "memory.md"
    memory.write_text(memory.read_text() + "- zebracorn quartz migration <!-- id=mzebra01 -->\n")
    hits = ask(handler, ws, "zebracorn")["hits"]
    assert [h["entry"]["id"] for h in hits] == ["mzebra01"]


def test_the_served_workspace_is_not_resolved_again(served, monkeypatch) -> None:  # noqa: ANN001
    from memcli.services.memory import shared_memory
    from memcli.store import workspace
    from memcli.store.workspace import Resolved

    ws, _ = served
    first = shared_memory(Resolved(ws))

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("resolved again")

    monkeypatch.setattr(workspace, "discover", refuse)
    monkeypatch.setattr(os.path, "realpath", refuse)
    assert shared_memory(Resolved(ws)) is first
    assert runtime.shared_key(Resolved(ws))[0] == str(ws)


def test_the_watcher_asks_for_its_memory_by_its_resolved_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.store.workspace import Resolved
    from memcli.surfaces.daemon import service

    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws)
    watch = service.WatchService(ws, log=lambda message: None)
    asked: list[object] = []
    monkeypatch.setattr(service, "shared_memory", lambda root: asked.append(root) or watch.memory)
    watch.current()
    assert len(asked) == 1 and isinstance(asked[0], Resolved) and asked[0] == str(ws.resolve())


def test_a_changed_setting_is_picked_up_by_the_next_request(served) -> None:  # noqa: ANN001
    ws, _ = served
    key = runtime.shared_key(ws)
    (ws / "memcli.toml").write_text("[search]\nlimit = 3\n")
    os.utime(ws / "memcli.toml", ns=(1, 1))  # a stamp surely unlike the one before
    assert runtime.shared_key(ws) != key
