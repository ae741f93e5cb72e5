"""The Milvus backend as a team runs it (issue 28): a `milvus-lite server` process on
127.0.0.1 (the same gRPC client path as a Milvus standalone), two git clones of one
workspace, a watcher and plain CLI commands on each and MCP over HTTP, all at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.process.test_gitmerge import git, two_clones
from tests.process.test_mcp_http import _search as mcp_search
from tests.process.test_mcp_http import _start as start_mcp
from tests.process.test_mcp_http import _stop as stop_mcp
from tests.support.milvus_server import MilvusServer, append, default_signals, hold_lease
from tests.support.processes import memcli, search_ids, start_watch, stop_watch, wait_for

pytestmark = pytest.mark.slow
TOKEN = "team-token-0123456789abcdef"


def on_milvus(monkeypatch: pytest.MonkeyPatch, uri: str, name: str, key: str = "") -> None:
    """This test's processes use the Milvus at `uri`, collection `name` (workspace key
    `key`: one partition for every clone; "" each folder its own)."""
    monkeypatch.setenv("MEMCLI_INDEX_BACKEND", "milvus")
    monkeypatch.setenv("MEMCLI_INDEX_URI", uri)
    monkeypatch.setenv("MEMCLI_INDEX_COLLECTION", name)
    if key:
        monkeypatch.setenv("MEMCLI_INDEX_WORKSPACE", key)


def backend_of(ws: Path) -> Any:
    """The Milvus backend of `ws` as this test process sees it (a server has many clients)."""
    from memcli.index.backend import open_backend
    from memcli.index.milvus import IndexUnavailable
    from memcli.store.config import load_settings

    backend = open_backend(load_settings(ws).index, ws / ".memcli" / "index")
    for attempt in range(3):
        try:
            backend.client  # noqa: B018 - this test process's own connection, made now
            return backend
        except IndexUnavailable:
            # gRPC's 10 s wait for the channel can lapse while the suite's other worker
            # loads a model; the memcli commands under test connect on their own
            if attempt == 2:
                raise
            time.sleep(1)
    return backend


def holds(backend: Any, entry_id: str) -> bool:
    """The index holds `entry_id` (one small query: polling it leaves the server free)."""
    rows = backend._call(
        backend.client.query,
        backend.collection,
        filter=backend._expr([entry_id]),
        output_fields=["entry_id"],
    )
    return bool(rows)


def until(predicate: Any, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.3)


def test_a_live_writer_leaves_reads_as_they_are_and_signals_give_the_lease_back(
    workspace: Path, exported: object, milvus_server: MilvusServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_milvus(monkeypatch, milvus_server.uri, "lease")
    done = memcli(workspace, "index")
    assert done.returncode == 0, done.stderr
    backend = backend_of(workspace)
    for sig in (signal.SIGTERM, signal.SIGINT):
        holder = hold_lease(workspace)  # a live writer (another clone's sync, say)
        assert f":{holder.pid}:" in backend._record()["holder"]
        if sig == signal.SIGTERM:
            append(workspace, "- The build server is called zebrafish <!-- id=mzebra01 -->")
            found = memcli(workspace, "search", "zebrafish build server", "--json", "--no-touch")
            assert found.returncode == 0, found.stderr  # not refused: searched as it is
            assert "behind the files" in found.stderr and str(holder.pid) in found.stderr
            assert "mzebra01" not in {h["id"] for h in json.loads(found.stdout)["data"]["hits"]}
        holder.send_signal(sig)  # stopped (Ctrl-C, SIGTERM): it gives the lease back
        assert holder.wait(timeout=30) != 0
        assert backend._record()["holder"] == ""
        if sig == signal.SIGTERM:
            found = memcli(workspace, "search", "zebrafish build server", "--json", "--no-touch")
            assert found.returncode == 0 and "behind" not in found.stderr, found.stderr
            assert json.loads(found.stdout)["data"]["hits"][0]["id"] == "mzebra01"
    backend.close()


def test_two_clones_watchers_cli_and_mcp_on_one_server(
    workspace: Path,
    tmp_path: Path,
    exported: object,
    milvus_server: MilvusServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both clones write one partition (one workspace key). A hand edit in either clone
    is searchable from both once pulled; a clone that never saw an entry never deletes
    it; the MCP server beside the desk answers from the same index meanwhile."""
    on_milvus(monkeypatch, milvus_server.uri, "team", key="team-notes")
    monkeypatch.setenv("MEMCLI_MCP_TOKEN", TOKEN)
    desk, laptop = two_clones(workspace, tmp_path)
    watchers = [start_watch(desk), start_watch(laptop)]
    mcp, port = start_mcp(desk, dict(os.environ))
    url = f"http://127.0.0.1:{port}/mcp"
    backend = backend_of(desk)
    try:
        # a hand edit on the desk: its watcher indexes it, the desk's CLI and MCP find it
        append(desk, "- The build server is called zebrafish <!-- id=mzebra01 -->")
        until(lambda: holds(backend, "mzebra01"))
        assert search_ids(desk, "zebrafish build server")[0] == "mzebra01"
        assert (
            anyio.run(mcp_search, url, TOKEN, "zebrafish")["results"][0]["memory_key"] == "mzebra01"
        )
        # the laptop has not pulled: its commands leave the desk's entry alone
        assert "mzebra01" not in search_ids(laptop, "zebrafish build server")
        assert holds(backend, "mzebra01")
        git(desk, "commit", "-qam", "zebrafish")
        git(desk, "push", "-q", "origin", "main")
        git(laptop, "pull", "-q", "--no-rebase", "origin", "main")
        assert search_ids(laptop, "zebrafish build server")[0] == "mzebra01"

        # a hand edit on the laptop, while the desk edits another file unpulled
        append(laptop, "- The on-call rota lives in the wiki <!-- id=moncall1 -->")
        until(lambda: holds(backend, "moncall1"))
        with (desk / "learnings.md").open("a", encoding="utf-8") as handle:
            handle.write("- Run the linter before pushing <!-- id=mlint001 -->\n")
        until(lambda: holds(backend, "mlint001"))
        assert search_ids(desk, "linter before pushing")[0] == "mlint001"
        assert holds(backend, "moncall1")  # the desk never saw it: kept
        assert search_ids(laptop, "on-call rota wiki")[0] == "moncall1"
        git(laptop, "commit", "-qam", "on-call")
        git(laptop, "push", "-q", "origin", "main")
        git(desk, "commit", "-qam", "linter")
        git(desk, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
        assert search_ids(desk, "on-call rota wiki")[0] == "moncall1"
        assert (
            anyio.run(mcp_search, url, TOKEN, "on-call rota")["results"][0]["memory_key"]
            == "moncall1"
        )
        for proc in watchers:
            assert proc.poll() is None, "a watcher stopped"
    finally:
        stop_mcp(mcp)
        for proc in watchers:
            stop_watch(proc)
        backend.close()
    logs = "".join(proc.start_log + proc.stdout.read() for proc in watchers if proc.stdout)
    assert [line for line in logs.splitlines() if "error" in line.lower()] == []


def test_stopping_the_server_mid_sync_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops while `memcli index` writes (it holds the lease): the command
    fails naming the server, the Markdown is as it was, and once the server is back the
    next command brings the index up to date."""
    from memcli.store.store import Store
    from tests.support.generate import generate
    from tests.support.milvus_server import available

    if not available():
        pytest.skip("the milvus extra is not installed")
    server = MilvusServer(tmp_path / "milvus").start()
    ws = generate(tmp_path / "ws", 1500)  # two upserts of 1,000 rows: time to stop it
    from memcli.store.workspace import init_workspace

    init_workspace(ws)
    stand_in_vectors(ws)
    on_milvus(monkeypatch, server.uri, "stopped")
    markdown = {p.name: p.read_bytes() for p in ws.glob("*.md")}
    backend = backend_of(ws)
    proc = subprocess.Popen(
        default_signals([sys.executable, "-m", "memcli", "-w", str(ws), "index"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: f":{proc.pid}:" in str(backend._record().get("holder")), timeout=60)
        server.stop()  # mid-sync: the lease is held only while a sync writes
        _, err = proc.communicate(timeout=60)
    finally:
        server.kill()
    assert proc.returncode != 0 and server.uri in err, err
    assert {p.name: p.read_bytes() for p in ws.glob("*.md")} == markdown
    server.start()
    try:
        done = memcli(ws, "search", "ticket OPS-1499", "--json", "--no-touch", "--mode", "keyword")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["data"]["hits"][0]["id"] == "g001499"
        again = backend_of(ws)
        assert sorted(again.fingerprint().keys) == sorted(e.id for e in Store(ws).entries())
        again.close()
    finally:
        server.stop()
    assert {p.name: p.read_bytes() for p in ws.glob("*.md")} == markdown


def stand_in_vectors(ws: Path) -> None:
    """Fill the workspace's embedding cache with random unit vectors for its entries, so
    the test spends its time syncing rather than running the model."""
    import numpy as np

    from memcli.index.embedder import EmbeddingCache, SentenceTransformerEmbedder, text_hash
    from memcli.index.sync import embed_text
    from memcli.store.store import Store

    model = SentenceTransformerEmbedder()  # its identity and size; the model never loads
    hashes = list(
        {text_hash(embed_text(e)): None for e in Store(ws).entries(include_archived=True)}
    )
    vectors = np.random.default_rng(1).standard_normal((len(hashes), model.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cache = EmbeddingCache(ws / ".memcli" / "cache", model.model_id, model.dim)
    cache.add(hashes, vectors)
    cache.save(hashes)
