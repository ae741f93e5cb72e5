"""The watcher, the daemon fast path and the ONNX query path, with real processes, a
real watchdog observer on a real directory, the real model and real FAISS. Tests that
stop or watch the output of their watcher start their own (`watched`); the others share
one per module (`served`): those only ask it questions."""

from __future__ import annotations

import json
import os
import shutil
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
from memcli.surfaces.protocol import socket_path
from tests.support.env import SAMPLE, isolate
from tests.support.processes import (
    EntryPoint,
    imports_of,
    indexed_keys,
    manifest_ids,
    memcli,
    search_ids,
    start_watch,
    stop_watch,
    wait_for,
    watch_status,
)

pytestmark = pytest.mark.slow
HEAVY = {"torch", "sentence_transformers", "transformers"}


# ------------------------------------------------------------------ ONNX


def test_onnx_matches_sentence_transformers(exported: SentenceTransformerEmbedder) -> None:
    fast = onnx_embedder.OnnxEmbedder(BUNDLED_MODEL_ID)
    texts = ["How should I write Python tests?", "数据库迁移要先在预发环境验证", "a " * 400, "🍵"]
    cosine = (exported.embed(texts) * fast.embed(texts)).sum(axis=1)
    assert float(cosine.min()) >= 0.999


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
    # inject and get take the same Typer-free path (issue 36 item 1)
    ["inject", "-q", "python tests", "--max-tokens", "300"],
    ["inject", "python tests", "--format", "xml", "--types", "preference,fact"],
    ["inject", "--json", "-q", "docker"],
    ["inject", "-q", "x", "--max-tokens", "0"],
    ["inject", "-q", "x", "--format", "yaml"],
    ["inject", "a", "-q", "b"],
    ["inject", "--context-file", "/nonexistent/context.txt"],
    ["get", "m8f3a2c1"],
    ["get", "m8f3a2c1", "--json"],
    ["get", "nosuchid"],
    ["get"],
]


def test_quick_search_matches_the_typer_app(workspace: Path, exported) -> None:
    """Each case's exit code, stdout and stderr through the quick path (no Typer) and
    through the Typer app, compared: both run in one fresh process (one model load for
    all the cases), each case in turn on either path."""
    Memory(workspace, notify=lambda m: None).index()
    argvs = []
    for args in QUICK_CASES:
        touch = ["--no-touch"] if args[0] != "get" else []  # get counts no access
        argvs.append(["-w", str(workspace), *args, *touch] if len(args) > 1 else args)
    env = dict(os.environ, MEMCLI_NO_DAEMON="1")
    for _ in range(3):  # both runs of a case inside one clock minute (same_minute)
        minute = time.gmtime().tm_min
        done = subprocess.run(
            [sys.executable, "-c", _BOTH_PATHS], input=json.dumps(argvs),
            capture_output=True, text=True, env=env, check=True,
        )
        if time.gmtime().tm_min == minute:
            break
    pairs = json.loads(done.stdout)
    assert len(pairs) == len(QUICK_CASES)
    for args, (quick, typer_app) in zip(QUICK_CASES, pairs, strict=True):
        assert quick[:3] == typer_app[:3], args
        assert quick[3] or quick[0] != 0, args  # every answer came by the quick path


#: runs each argv list (JSON on stdin) as `memcli` does (the quick path for a read it
#: knows) and then through the Typer app, in this one process, and prints [[exit code, stdout, stderr, quick?], ...] pairs of both
_BOTH_PATHS = """
import contextlib, io, json, sys
from memcli.surfaces.cli import fastpath

def once(argv, through_typer):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        env = fastpath.Env(argv)
        code = None if through_typer else fastpath.answered(env)  # what `memcli` does
        took_quick = code is not None
        try:
            code = fastpath.typer_main(env) if code is None else code
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return [code, out.getvalue(), err.getvalue(), took_quick]

print(json.dumps([[once(a, False), once(a, True)] for a in json.load(sys.stdin)]))
"""


def same_minute(first, second):  # noqa: ANN001, ANN201 - two runs to compare
    """Both runs inside one clock minute: scores use the time to the minute for recency
    (memcli.logic.search.ranking_time), so runs on either side of a minute's end may
    print different scores without anything being wrong."""
    for _ in range(3):
        minute = time.gmtime().tm_min
        results = first(), second()
        if time.gmtime().tm_min == minute:
            return results
    return results


#: runs memcli's entry point once per command in one fresh process (argv lists as JSON on
#: stdin) and prints [exit code, stdout] of each: a full read of the files, as a fresh
#: `memcli` process makes, at one model load for several commands
_FRESH_RUNNER = """
import contextlib, io, json, sys
from memcli.surfaces.cli.fastpath import run
out = []
for argv in json.load(sys.stdin):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            code = run(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    out.append([code, buffer.getvalue()])
sys.__stdout__.write(json.dumps(out))
"""


def served_runs(ws: Path, commands: list[list[str]]) -> list[subprocess.CompletedProcess]:
    """Each of `commands` run as a `memcli` process of its own on `ws` (a served one costs
    ≈ 0.01 s of CPU: only the client)."""
    return [memcli(ws, *c) for c in commands]


def fresh_process_outputs(ws: Path, commands: list[list[str]], env: dict) -> list[tuple]:
    """(exit code, stdout) of each of `commands` run in one new process on `ws`."""
    argvs = [["-w", str(ws), *c] for c in commands]
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_RUNNER],
        input=json.dumps(argvs), capture_output=True, text=True, env=env, check=True,
    )
    return [tuple(pair) for pair in json.loads(done.stdout)]


def memcli_raw(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memcli", *argv], capture_output=True, text=True, env=env
    )


# ------------------------------------------------------------------ watcher + daemon


@pytest.fixture(scope="module")
def _module_watcher(tmp_path_factory: pytest.TempPathFactory, session_cache: Path, exported):
    """One watcher for the tests that only ask it questions, in an environment of its
    own (the per-test one is not set up yet at module scope)."""
    base = tmp_path_factory.mktemp("served")
    workspace = base / "ws"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".memcli"))
    with pytest.MonkeyPatch.context() as patch:
        isolate(patch, base, session_cache)
        env = dict(os.environ)
        proc = start_watch(workspace)
    yield workspace, proc, env
    stop_watch(proc)


@pytest.fixture
def served(_module_watcher, _isolated_env: None, monkeypatch: pytest.MonkeyPatch):
    """The module's watcher, and this test's environment set to the one it serves (a
    daemon answers only clients with its own settings environment)."""
    workspace, proc, env = _module_watcher
    assert proc.poll() is None, "the shared watcher stopped"
    for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(key, env[key])
    return workspace, proc



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
    batches = watch_status(ws)["batches"]
    os.replace(tmp, memory)
    wait_for(lambda: watch_status(ws)["batches"] > batches)
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
    entry_id = json.loads(added.stdout)["data"]["entry"]["id"]
    # ...and saves its stale buffer over the agent's add, with a bad line in it
    memory.write_text(buffer + "- broken <!-- imp=lots -->\n- Likes green tea <!-- id=mtea -->\n")
    wait_for(lambda: "mtea" in search_ids(ws, "green tea"))
    wait_for(lambda: watch_status(ws)["batches"] >= 1)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "memory.md:" in output and "imp='lots'" in output
    assert f"a save removed {entry_id}" in output and f"memcli restore {entry_id}" in output
    assert "memory.md: merged back bytes an editor wrote" in output


def test_daemon_and_in_process_give_identical_results(served) -> None:
    ws, _ = served
    with EntryPoint(dict(os.environ, MEMCLI_NO_DAEMON="1")) as no_daemon:
        for args in (
            ["search", "python tests", "--explain", "--no-touch"],
            ["search", "数据库迁移", "--json", "--no-touch"],
            ["inject", "-q", "How to optimize my Next.js app?", "--max-tokens", "200"],
            ["get", "m8f3a2c1", "--json"],
            ["get", "nope"],
        ):
            via_daemon, in_process = same_minute(  # recency is taken to the minute
                lambda args=args: memcli(ws, *args),
                lambda args=args: no_daemon.run(ws, *args),
            )
            assert via_daemon.returncode == in_process.returncode, args
            assert via_daemon.stdout == in_process.stdout, args
            assert via_daemon.stderr == in_process.stderr, args
    piped = memcli(ws, "inject", "-", "--max-tokens", "120", stdin="docker images")
    assert piped.returncode == 0 and "Docker" in piped.stdout
    status = json.loads(memcli(ws, "watch", "--status", "--json").stdout)["data"]
    assert status["requests"] >= 6


SERVED_CASES = [
    (["search", "pytest fixtures", "--json", "--explain", "-n", "3"], None),
    (["search", "-t", "preference", "--type=fact", "testing", "--mode", "keyword"], None),
    (["search", "docker", "--keyword=docker", "--min-score", "0.1", "--json"], None),
    (["search", "python", "--since", "2000-01-01", "--until", "today", "--include-archived"], None),
    (["search", "-"], "what do I use for tests?\n"),
    (["search", "nothing like this at all", "--min-score", "0.99"], None),
    (["search", "x", "--since", "soon"], None),  # usage error, exit code 2
    (["search", "x", "--type", "nonsense"], None),  # usage error naming the known types
    (["search", "   "], None),  # a domain error, exit code 1
    (["inject", "-q", "How to optimize my Next.js app?", "--json", "-f", "xml"], None),
    (["inject", "--types", "skill,lesson", "--max-tokens", "150"], None),
    (["inject", "-", "--format", "json"], "docker images and python tests"),
    (["inject", "-q", "deploy " * 10000, "--max-tokens", "100"], None),  # a notice on stderr
    (["inject", "--context-file", "CONTEXT"], None),
    (["inject", "--messages", "MESSAGES", "--json"], None),
    (["inject", "-t", "nonsense"], None),
    (["get", "m8f3a2c1"], None),
    (["get", "nope", "--json"], None),
]


def test_served_and_in_process_outputs_are_byte_identical(served, tmp_path: Path) -> None:
    """Text and --json, option combinations, stdin, files and errors: the client prints
    the daemon's result data with the in-process code, to the byte."""
    ws, _ = served
    context = tmp_path / "context.txt"
    context.write_text("How do I write Python tests?\n")
    messages = tmp_path / "messages.jsonl"
    messages.write_text(json.dumps({"role": "user", "content": "docker images"}) + "\n")
    before = json.loads(memcli(ws, "watch", "--status", "--json").stdout)["data"]["requests"]
    results = []
    with EntryPoint(dict(os.environ, MEMCLI_NO_DAEMON="1")) as no_daemon:
        for args, stdin in SERVED_CASES:
            args = [
                {"CONTEXT": str(context), "MESSAGES": str(messages)}.get(a, a) for a in args
            ]
            if args[0] != "get":
                args.append("--no-touch")
            via_daemon, in_process = same_minute(
                lambda args=args, stdin=stdin: memcli(ws, *args, stdin=stdin),
                lambda args=args, stdin=stdin: no_daemon.run(ws, *args, stdin=stdin),
            )
            assert via_daemon.returncode == in_process.returncode, args
            assert via_daemon.stdout == in_process.stdout, args
            assert via_daemon.stderr == in_process.stderr, args
            results.append(via_daemon)
    after = json.loads(memcli(ws, "watch", "--status", "--json").stdout)["data"]["requests"]
    assert after - before >= len(SERVED_CASES)  # every case was served (and the status)
    # the cases show what they are meant to show
    codes = [r.returncode for r in results]
    assert codes == [0] * 6 + [2, 2, 1] + [0] * 6 + [2, 0, 1], codes
    nothing = results[5]  # nothing fits: "no matches" on stderr, stdout empty
    assert nothing.stdout == "" and "no matches" in nothing.stderr
    assert all(r.stdout for r, code in zip(results, codes, strict=True) if code == 0 and r is not nothing)
    assert "notice: the context is" in results[12].stderr
    assert "unknown type 'nonsense'" in results[7].stderr


def test_daemon_writes_access_counts_after_answering(served) -> None:
    ws, _ = served
    counts = ws / ".memcli" / "access.json"

    def count_of(entry_id: str) -> int:
        if not counts.exists():
            return 0
        return json.loads(counts.read_text()).get(entry_id, {}).get("count", 0)

    result = memcli(ws, "search", "pytest fixtures", "--json", "-n", "1")
    hit = json.loads(result.stdout)["data"]["hits"][0]["id"]
    wait_for(lambda: count_of(hit) >= 1)  # written once the requests paused
    before = count_of(hit)
    memcli(ws, "search", "pytest fixtures", "--json", "-n", "1")
    wait_for(lambda: count_of(hit) == before + 1)


def test_daemon_client_imports_nothing_heavy(served) -> None:
    ws, _ = served
    code = (
        "import sys\nfrom memcli.surfaces.cli.fastpath import try_daemon\n"
        "code = try_daemon(['-w', sys.argv[1], 'search', 'python tests', '-n', '1'])\n"
        "assert code == 0, code"
    )
    modules, out = imports_of(code, str(ws))
    assert "m8f3a2c1" in out
    assert not modules & (HEAVY | {"numpy", "faiss", "onnxruntime", "typer", "rich"}), modules


def test_socket_is_user_only(served) -> None:
    ws, _ = served
    assert (socket_path(ws).stat().st_mode & 0o777) == 0o600


def test_status_without_watcher(workspace: Path) -> None:
    result = memcli(workspace, "watch", "--status")
    assert result.returncode == 1 and "no memcli watch is running" in result.stderr


def test_embeddings_cache_is_used_by_watcher(served) -> None:
    ws, _ = served
    vectors = list((ws / ".memcli" / "cache").glob("*.npy"))
    assert vectors and np.load(vectors[0]).shape[1] == 384


# edits a person makes by hand, each applied to memory.md as (old text, new text)
INCREMENTAL_EDITS = [
    # move a line to another section (a preference becomes a fact)
    ("- Likes dark editor themes\n", ""),
    ("## Facts\n", "## Facts\n- Likes dark editor themes\n"),
    # split one item in two (a continuation line becomes an item), then merge them back
    ("\n  Joined in 2024 as a backend engineer", "\n- Joined in 2024 as a backend engineer"),
    ("\n- Joined in 2024 as a backend engineer", "\n  Joined in 2024 as a backend engineer"),
    # metadata only: the ranking's values of one entry change in place
    (
        "imp=0.8 conf=0.9 created=2026-11-20T10:02:00Z",
        "imp=0.1 conf=0.2 created=2026-11-20T10:02:00Z",
    ),
    # change a section header: every item below it changes type
    ("## Preferences\n", "## Skills\n"),
    # the front matter sets the type of items outside a section
    (
        "---\nmemcli: 1\n---\n",
        "---\nmemcli: 1\ntype: lesson\n---\n- Always rebase before merging\n",
    ),
    # two entries with one id, then an id-less text repeated (derived ids renumber)
    ("- Has a cat named Miso\n", "- Has a cat named Miso <!-- id=m3b8d6f1 -->\n"),
    (
        "- Has a cat named Miso <!-- id=m3b8d6f1 -->\n",
        "- Has a dog named Miso\n- Has a dog named Miso\n",
    ),
    ("# Memory\n", "# Memory\n\n- Has a dog named Miso\n"),
]


def test_watcher_updates_incrementally_like_a_full_read(watched) -> None:
    """After each hand edit, the watcher (which re-reads only what changed: memcli.store
    .reparse, services/lastsync, SearchView.after) holds and answers what a fresh
    process reading everything holds and answers: the index's ids and content keys are
    the full parse's, and searches through it print what an in-process run prints."""
    from memcli.index.sync import content_key, unique_entries
    from memcli.store.store import Store

    ws, _ = watched
    memory = ws / "memory.md"
    no_daemon = dict(os.environ, MEMCLI_NO_DAEMON="1")
    for old, new in INCREMENTAL_EDITS:
        text = memory.read_text()
        assert old in text, old
        batches = watch_status(ws)["batches"]
        swap = ws / ".memory.md.swp"
        swap.write_text(text.replace(old, new, 1))
        os.replace(swap, memory)  # as an editor saves
        wait_for(lambda batches=batches: watch_status(ws)["batches"] > batches)
        fresh = unique_entries(Store(ws).entries(include_archived=True))
        assert indexed_keys(ws) == {e.id: content_key(e) for e in fresh}, new
        commands = [
            ["search", "pets at home", "--json", "--explain", "--no-touch"],
            ["search", "python tests", "--mode", "keyword", "--json", "--no-touch"],
            ["search", "editor themes", "-t", "fact", "--json", "--no-touch"],
            ["inject", "-q", "what should I know about the team?", "--json"],
        ]
        requests = watch_status(ws)["requests"]
        via_daemon, in_process = same_minute(
            lambda commands=commands: [(r.returncode, r.stdout) for r in served_runs(ws, commands)],
            lambda commands=commands: fresh_process_outputs(ws, commands, no_daemon),
        )
        # every command of the served side was the watcher's to answer (and the status)
        assert watch_status(ws)["requests"] >= requests + len(commands) + 1, new
        for args, served, fresh in zip(commands, via_daemon, in_process, strict=True):
            assert served == fresh, (new, args)


def test_stats_shows_the_watchers_latency_and_the_usage(served) -> None:
    """`memcli stats` on a workspace a watcher served (issue 36 item 5): its search and
    inject latency p50 / p99 since it started, beside the usage figures, in --json and
    in the terminal."""
    ws, proc = served
    assert memcli(ws, "search", "pytest fixtures", "-n", "1").returncode == 0
    assert memcli(ws, "inject", "-q", "pytest fixtures", "--max-tokens", "300").returncode == 0
    data = json.loads(memcli(ws, "stats", "--json", "--days", "7").stdout)["data"]
    watcher = data["watcher"]
    assert watcher["pid"] == proc.pid
    for kind in ("search", "inject"):
        figures = watcher["latency"][kind]
        assert figures["requests"] >= 1
        assert 0 < figures["p50_ms"] <= figures["p99_ms"]
    assert data["unused"]["days"] == 7 and data["unused"]["count"] < data["entries"]
    assert data["most_used"][0]["count"] >= 1
    assert 0 < data["average_importance"] <= 1 and 0 < data["with_keywords"] <= data["entries"]
    shown = memcli(ws, "stats").stdout
    assert "latency:" in shown and "p99_ms:" in shown and "most used:" in shown
