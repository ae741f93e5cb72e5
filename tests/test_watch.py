"""The watcher, the daemon fast path and the ONNX query path, with real processes, a
real watchdog observer on a real directory, the real model and real FAISS."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memcli.index import onnx_embedder
from memcli.index.embedder import BUNDLED_MODEL_ID, SentenceTransformerEmbedder
from memcli.services.memory import Memory
from memcli.surfaces.daemon.protocol import socket_path
from memcli.surfaces.daemon.watch import Debouncer, is_relevant

pytestmark = pytest.mark.slow
HEAVY = {"torch", "sentence_transformers", "transformers"}


# ------------------------------------------------------------------ pure parts


def test_relevant_paths(tmp_path: Path) -> None:
    root = tmp_path
    for name in (
        "memory.md",
        "learnings.md",
        "archive.md",
        "memcli.toml",
        "episodes/2026-11-01.md",
    ):
        assert is_relevant(root / name, root), name
    for name in (
        ".memcli/index/manifest.json",
        ".memory.md.swp",
        "memory.md~",
        "4913",
        ".#memory.md",
        "notes.md",
        "episodes/x/y.md",
        "memory.md.tmp",
        "../memory.md",
    ):
        assert not is_relevant(root / name, root), name


def test_debouncer_batches_bursts() -> None:
    d = Debouncer(quiet=0.1, max_wait=1.0)
    assert d.due(0.0) is None
    d.add("memory.md", 0.0)
    d.add("memory.md", 0.05)
    d.add("learnings.md", 0.08)
    assert d.due(0.1) == pytest.approx(0.08)  # quiet since the last event at 0.08
    assert d.ready(0.1) is None
    assert d.due(0.2) == 0.0
    assert d.ready(0.2) == ["learnings.md", "memory.md"]
    assert d.ready(0.3) is None
    for t in range(0, 20):  # a never-ending burst still flushes after max_wait
        d.add("memory.md", t * 0.06)
        if t * 0.06 >= 1.0:
            assert d.ready(t * 0.06) == ["memory.md"]
            break


# ------------------------------------------------------------------ ONNX


@pytest.fixture(scope="module")
def exported() -> SentenceTransformerEmbedder:
    reference = SentenceTransformerEmbedder()
    assert onnx_embedder.export("", reference)
    return reference


def test_onnx_matches_sentence_transformers(exported: SentenceTransformerEmbedder) -> None:
    fast = onnx_embedder.OnnxEmbedder(BUNDLED_MODEL_ID)
    texts = ["How should I write Python tests?", "数据库迁移要先在预发环境验证", "a " * 400, "🍵"]
    cosine = (exported.embed(texts) * fast.embed(texts)).sum(axis=1)
    assert float(cosine.min()) >= 0.999


def imports_of(code: str, *args: str, cwd: Path | None = None) -> tuple[set[str], str]:
    script = (
        code
        + "\nimport sys, json\nprint('\\nMODULES=' + json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stderr
    marker = result.stdout.rindex("MODULES=")
    return set(json.loads(result.stdout[marker + 8 :])), result.stdout[:marker]


def test_cold_search_imports_no_torch(workspace: Path, exported) -> None:
    Memory(workspace, notify=lambda m: None).index()
    code = (
        "import sys\nfrom memcli.surfaces.cli.app import app\n"
        "try:\n    app(args=['-w', sys.argv[1], 'search', 'python tests', '-n', '1'], "
        "standalone_mode=False)\nexcept SystemExit:\n    pass"
    )
    modules, out = imports_of(code, str(workspace))
    assert "m8f3a2c1" in out
    assert not modules & HEAVY, modules & HEAVY
    assert "onnxruntime" in modules
    assert "faiss" not in modules  # below ann_threshold the index is a NumPy matrix


def test_quick_search_imports_neither_typer_nor_torch(workspace: Path, exported) -> None:
    """The entry point's no-daemon search skips Typer (and pydantic) altogether."""
    Memory(workspace, notify=lambda m: None).index()
    code = (
        "import sys\nfrom memcli.surfaces.cli import quick\n"
        "code = quick.run(['-w', sys.argv[1], 'search', 'python tests', '-n', '1'])\n"
        "assert code == 0, code"
    )
    modules, out = imports_of(code, str(workspace))
    assert "m8f3a2c1" in out
    assert not modules & (HEAVY | {"typer", "pydantic", "faiss"}), modules & (
        HEAVY | {"typer", "pydantic", "faiss"}
    )


QUICK_CASES = [
    ["search", "python tests"],
    ["search", "python tests", "--json", "--explain", "-n", "3"],
    ["search", "--type", "preference", "-t", "fact", "testing", "--json"],
    ["search", "docker", "--keyword=docker", "--mode", "keyword", "--min-score", "0.1"],
    ["search", "数据库迁移", "--limit=2", "--include-archived"],
    ["search", "   "],
    ["search", "x", "--since", "yesterday"],
    ["search", "x", "--limit", "0"],
    ["search", "x", "--limit", "many"],
    ["search", "x", "--colour"],
    ["search", "x", "--mode", "fuzzy"],
    ["search"],
]


def test_quick_search_matches_the_typer_app(workspace: Path, exported) -> None:
    Memory(workspace, notify=lambda m: None).index()
    base = dict(os.environ, MEMCLI_NO_DAEMON="1")
    for args in QUICK_CASES:
        argv = ["-w", str(workspace), *args, "--no-touch"] if len(args) > 1 else args
        quick = memcli_raw(argv, base)
        typer_app = memcli_raw(argv, dict(base, MEMCLI_NO_QUICK="1"))
        assert (quick.returncode, quick.stdout, quick.stderr) == (
            typer_app.returncode,
            typer_app.stdout,
            typer_app.stderr,
        ), args


def memcli_raw(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memcli", *argv], capture_output=True, text=True, env=env
    )


# ------------------------------------------------------------------ watcher + daemon


def start_watch(ws: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", "-w", str(ws), "watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        status = subprocess.run(
            [sys.executable, "-m", "memcli", "-w", str(ws), "watch", "--status", "--json"],
            capture_output=True,
            text=True,
        )
        if status.returncode == 0:
            return proc
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.3)
    proc.kill()
    raise AssertionError("watch did not start")


def memcli(ws: Path, *args: str, env: dict | None = None, stdin: str | None = None):
    return subprocess.run(
        [sys.executable, "-m", "memcli", "-w", str(ws), *args],
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
        env=env or dict(os.environ),
    )


def search_ids(ws: Path, query: str, env: dict | None = None) -> list[str]:
    result = memcli(ws, "search", query, "--json", "--no-touch", env=env)
    assert result.returncode == 0, result.stderr
    return [h["id"] for h in json.loads(result.stdout)]


def wait_for(predicate, timeout: float = 15.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


@pytest.fixture
def watched(workspace: Path, exported):
    proc = start_watch(workspace)
    yield workspace, proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def manifest_ids(ws: Path) -> list[str]:
    """Ids the index backend of `ws` holds, read from disk as another process would."""
    from memcli.index.backend import open_backend
    from memcli.store.config import IndexSettings

    return list(open_backend(IndexSettings(), ws / ".memcli" / "index").fingerprint().keys)


def test_observer_follows_create_edit_delete(watched) -> None:
    """Each change must reach the index through the observer alone: the index is
    checked before any search (a search would bring a stale index up to date itself)."""
    ws, proc = watched
    memory = ws / "memory.md"
    # create: append an entry in place
    with memory.open("a") as handle:
        handle.write("- Backups run nightly at 02:00 UTC <!-- id=mbackup1 -->\n")
    wait_for(lambda: "mbackup1" in manifest_ids(ws))
    assert "mbackup1" in search_ids(ws, "nightly backups")
    # edit like an editor: write a temp file, then rename it over the original
    tmp = ws / ".memory.md.swp"
    tmp.write_text(
        memory.read_text().replace(
            "Backups run nightly at 02:00 UTC", "Backups run hourly on the replica"
        )
    )
    batches = json.loads(memcli(ws, "watch", "--status", "--json").stdout)["batches"]
    os.replace(tmp, memory)
    status = lambda: json.loads(memcli(ws, "watch", "--status", "--json").stdout)  # noqa: E731
    wait_for(lambda: status()["batches"] > batches)
    assert "mbackup1" in search_ids(ws, "hourly replica backups")[:1]
    # delete the entry
    memory.write_text(
        memory.read_text().replace("- Backups run hourly on the replica <!-- id=mbackup1 -->\n", "")
    )
    wait_for(lambda: "mbackup1" not in manifest_ids(ws))
    assert "mbackup1" not in search_ids(ws, "hourly replica backups")
    # a new episodes file, then its deletion
    (ws / "episodes").mkdir()
    day = ws / "episodes" / "2026-11-22.md"
    day.write_text("- Met Dana about the quarterly roadmap <!-- id=e1 -->\n")
    wait_for(lambda: "e1" in manifest_ids(ws))
    assert "e1" in search_ids(ws, "quarterly roadmap meeting")
    day.unlink()
    wait_for(lambda: "e1" not in manifest_ids(ws))
    assert "e1" not in search_ids(ws, "quarterly roadmap meeting")
    # the manifest agrees with the files once the watcher settled
    manifest = json.loads((ws / ".memcli" / "index" / "manifest.json").read_text())
    assert sorted(manifest_ids(ws)) == sorted(
        e.id for e in Memory(ws).entries(include_archived=True)
    )
    assert not manifest.get("entries")  # the watcher writes the parsed-entries snapshot...
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    manifest = json.loads((ws / ".memcli" / "index" / "manifest.json").read_text())
    assert manifest["entries"]  # ...when it stops, for the processes that come after it
    cold = Memory(ws)
    cold.index_manager.ensure()
    snapshot = cold.index_manager.snapshot_entries()
    assert snapshot is not None and sorted(e.id for e in snapshot) == sorted(manifest_ids(ws))


def test_bad_edit_a_stale_save_and_late_bytes_are_handled(watched) -> None:
    ws, proc = watched
    memory = ws / "memory.md"
    # an editor opened the file in place before memcli replaced it and writes after:
    # the watcher merges its bytes back from the replaced file memcli kept
    with memory.open("r+b") as handle:
        content = handle.read()
        assert memcli(ws, "add", "Standups are at nine thirty").returncode == 0
        handle.seek(0)
        handle.write(content + b"- Typed while memcli wrote\n")
        handle.truncate()
    wait_for(lambda: "Typed while memcli wrote" in memory.read_text())
    assert "Standups are at nine thirty" in memory.read_text()
    buffer = memory.read_text()  # an editor loads the file...
    added = memcli(ws, "add", "Deploys happen on Tuesdays after the standup", "--json")
    assert added.returncode == 0, added.stderr
    entry_id = json.loads(added.stdout)["entry"]["id"]
    # ...and saves its stale buffer over the agent's add, with a bad line in it
    memory.write_text(buffer + "- broken <!-- imp=lots -->\n- Likes green tea <!-- id=mtea -->\n")
    wait_for(lambda: "mtea" in search_ids(ws, "green tea"))
    wait_for(lambda: json.loads(memcli(ws, "watch", "--status", "--json").stdout)["batches"] >= 1)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "memory.md:" in output and "imp='lots'" in output
    assert f"a save removed {entry_id}" in output and f"memcli restore {entry_id}" in output
    assert "memory.md: merged back bytes an editor wrote" in output


def test_daemon_and_in_process_give_identical_results(watched) -> None:
    ws, _ = watched
    no_daemon = dict(os.environ, MEMCLI_NO_DAEMON="1")
    for args in (
        ["search", "python tests", "--explain", "--no-touch"],
        ["search", "数据库迁移", "--json", "--no-touch"],
        ["inject", "-q", "How to optimize my Next.js app?", "--max-tokens", "200"],
        ["get", "m8f3a2c1", "--json"],
        ["get", "nope"],
    ):
        via_daemon = memcli(ws, *args)
        in_process = memcli(ws, *args, env=no_daemon)
        assert via_daemon.returncode == in_process.returncode, args
        assert via_daemon.stdout == in_process.stdout, args
        assert via_daemon.stderr == in_process.stderr, args
    piped = memcli(ws, "inject", "-", "--max-tokens", "120", stdin="docker images")
    assert piped.returncode == 0 and "Docker" in piped.stdout
    status = json.loads(memcli(ws, "watch", "--status", "--json").stdout)
    assert status["requests"] >= 6


def test_daemon_writes_access_counts_after_answering(watched) -> None:
    ws, _ = watched
    counts = ws / ".memcli" / "access.json"

    def count_of(entry_id: str) -> int:
        if not counts.exists():
            return 0
        return json.loads(counts.read_text()).get(entry_id, {}).get("count", 0)

    result = memcli(ws, "search", "pytest fixtures", "--json", "-n", "1")
    hit = json.loads(result.stdout)[0]["id"]
    wait_for(lambda: count_of(hit) >= 1)  # written once the requests paused
    before = count_of(hit)
    memcli(ws, "search", "pytest fixtures", "--json", "-n", "1")
    wait_for(lambda: count_of(hit) == before + 1)


def test_daemon_client_imports_nothing_heavy(watched) -> None:
    ws, _ = watched
    code = (
        "import sys\nfrom memcli.surfaces.cli.fastpath import try_daemon\n"
        "code = try_daemon(['-w', sys.argv[1], 'search', 'python tests', '-n', '1'])\n"
        "assert code == 0, code"
    )
    modules, out = imports_of(code, str(ws))
    assert "m8f3a2c1" in out
    assert not modules & (HEAVY | {"numpy", "faiss", "onnxruntime", "typer", "rich"}), modules


def test_killed_daemon_leaves_a_working_fallback(watched) -> None:
    ws, proc = watched
    proc.kill()
    proc.wait(timeout=10)
    assert socket_path(ws).exists()  # a stale socket is left behind
    result = memcli(ws, "search", "pytest fixtures", "--json", "--no-touch")
    assert result.returncode == 0 and json.loads(result.stdout)[0]["id"] == "m8f3a2c1"
    again = start_watch(ws)  # a new watcher replaces the stale socket
    try:
        assert json.loads(memcli(ws, "watch", "--status", "--json").stdout)["pid"] == again.pid
    finally:
        again.send_signal(signal.SIGINT)
        assert again.wait(timeout=30) == 0


def test_socket_is_user_only(watched) -> None:
    ws, _ = watched
    assert (socket_path(ws).stat().st_mode & 0o777) == 0o600


def test_status_without_watcher(workspace: Path) -> None:
    result = memcli(workspace, "watch", "--status")
    assert result.returncode == 1 and "no memcli watch is running" in result.stderr


def test_embeddings_cache_is_used_by_watcher(watched) -> None:
    ws, _ = watched
    vectors = list((ws / ".memcli" / "cache").glob("*.npy"))
    assert vectors and np.load(vectors[0]).shape[1] == 384


@pytest.mark.slow
def test_background_watcher_starts_refuses_a_second_and_stops(workspace: Path, exported) -> None:
    started = memcli(workspace, "watch", "--background", "--json")
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    try:
        assert json.loads(memcli(workspace, "watch", "--status", "--json").stdout)["pid"] == pid
        t = time.monotonic()
        second = memcli(workspace, "watch")  # says so at once, before indexing anything
        assert second.returncode == 1 and "already serves" in second.stderr
        assert time.monotonic() - t < 10
        again = memcli(workspace, "watch", "--background")
        assert again.returncode == 1 and "already serves" in again.stderr
    finally:
        stopped = memcli(workspace, "watch", "--stop", "--json")
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopped"] == pid
    assert memcli(workspace, "watch", "--status").returncode == 1
    assert "stopped; the index is consistent" in (workspace / ".memcli" / "watch.log").read_text()
    assert memcli(workspace, "watch", "--stop").stdout.strip() == "none was running"
