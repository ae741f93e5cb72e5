"""A third curated file by configuration alone (issue 27 item 2): `projects.md` declared
in memcli.toml's `[files]` and nowhere else works through add, a hand edit, search,
inject, list, forget / restore / undo, the watcher and git's merge driver — real
processes, the real model, a real watchdog observer and real git."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memcli.store.store import Store
from tests.support.processes import manifest_ids, memcli, start_watch, stop_watch, wait_for

pytestmark = pytest.mark.slow

DECLARED = '[files."projects.md"]\ntypes = ["project", "host"]\nheadings = { host = "Hosts" }\n'


def run(ws: Path, *args: str) -> dict:
    result = memcli(ws, *args, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)["data"]


def ids_of(ws: Path, text: str) -> list[str]:
    """The ids of the entries of ws whose text is `text` (as another process reads them)."""
    return [e.id for e in Store(ws).entries() if e.text == text]


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)


def served(ws: Path, projects: Path) -> None:
    """add, a hand edit, search, inject, list, forget / restore / undo and the watcher's
    indexing of a hand edit, with a watcher serving the searches."""
    # add: a declared type lands in its file, under its heading (plural or not)
    apollo = run(ws, "add", "--type", "project", "The Apollo launch moved to March")["entry"]
    host = run(ws, "add", "--type", "hosts", "bx1 is the build box in Frankfurt")["entry"]
    assert (apollo["file"], apollo["type"], host["file"], host["type"]) == (
        "projects.md", "project", "projects.md", "host",
    )
    text = projects.read_text(encoding="utf-8")
    assert "# Projects\n" in text and "## Hosts\n- bx1 is the build box" in text
    assert "Apollo" not in (ws / "memory.md").read_text(encoding="utf-8")

    # a hand edit: a line before the first `##` heading takes the file's default type
    projects.write_text(
        text.replace("# Projects\n", "# Projects\n- Zeus is the billing service, written in Go\n"),
        encoding="utf-8",
    )
    hits = run(ws, "search", "which service handles billing?", "--no-touch")["hits"]
    assert hits and hits[0]["entry"]["text"] == "Zeus is the billing service, written in Go"
    assert (hits[0]["entry"]["file"], hits[0]["entry"]["type"]) == ("projects.md", "project")
    typed = run(ws, "search", "build box", "--type", "host", "--no-touch")["hits"]
    assert [h["id"] for h in typed] == [host["id"]]

    block = memcli(ws, "inject", "-q", "who handles billing").stdout
    assert "- Zeus is the billing service, written in Go" in block

    listed = run(ws, "list", "--type", "project")["entries"]
    assert {e["text"] for e in listed} == {
        "The Apollo launch moved to March", "Zeus is the billing service, written in Go",
    }

    # forget, restore, undo: the archive knows where the entry came from
    run(ws, "forget", apollo["id"])
    assert apollo["id"] not in projects.read_text(encoding="utf-8")
    assert "from=projects.md" in (ws / "archive.md").read_text(encoding="utf-8")
    assert run(ws, "restore", apollo["id"])["entry"]["file"] == "projects.md"
    assert apollo["id"] in projects.read_text(encoding="utf-8")
    assert memcli(ws, "undo", "--yes").returncode == 0  # takes the restore back
    assert apollo["id"] not in projects.read_text(encoding="utf-8")
    assert apollo["id"] in (ws / "archive.md").read_text(encoding="utf-8")

    # the watcher picks up a hand edit of projects.md (it indexes it, no search asks)
    with projects.open("a", encoding="utf-8") as handle:
        handle.write("- hermes relays the team's mail\n")
    wait_for(lambda: ids_of(ws, "hermes relays the team's mail"), timeout=5)
    (hermes,) = ids_of(ws, "hermes relays the team's mail")
    wait_for(lambda: hermes in manifest_ids(ws), timeout=30)
    hits = run(ws, "search", "mail relay", "--no-touch")["hits"]
    assert hits and hits[0]["id"] == hermes


def test_a_curated_file_by_configuration_alone(tmp_path: Path, exported) -> None:  # noqa: ANN001
    ws = tmp_path / "ws"
    assert memcli(ws, "init", str(ws)).returncode == 0
    (ws / "memcli.toml").write_text(DECLARED, encoding="utf-8")
    projects = ws / "projects.md"

    watcher = start_watch(ws)  # serves the searches below, and watches projects.md
    try:
        served(ws, projects)
    finally:
        stop_watch(watcher)

    # git: the merge driver merges projects.md entry by entry
    assert git(ws, "init", "-q", "-b", "main").returncode == 0
    assert memcli(ws, "git", "setup").returncode == 0
    assert "/projects.md merge=memcli" in (ws / ".gitattributes").read_text(encoding="utf-8")
    git(ws, "add", "-A")
    assert git(ws, "commit", "-qm", "base").returncode == 0
    git(ws, "checkout", "-q", "-b", "laptop")
    run(ws, "add", "--type", "host", "stg2 is the staging host")
    git(ws, "commit", "-qam", "laptop")
    git(ws, "checkout", "-q", "main")
    run(ws, "add", "--type", "host", "db3 is the database host")
    git(ws, "commit", "-qam", "desk")
    merged = git(ws, "merge", "-q", "--no-edit", "laptop")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = projects.read_text(encoding="utf-8")
    assert "<<<<<<<" not in text
    hosts = [e.text for e in Store(ws).entries() if e.type == "host"]
    assert sorted(hosts) == [  # the watcher's hand edit went to the end: under Hosts
        "bx1 is the build box in Frankfurt", "db3 is the database host",
        "hermes relays the team's mail", "stg2 is the staging host",
    ]


def test_a_bad_files_entry_changes_nothing(tmp_path: Path) -> None:
    """`[files]` naming a path outside the workspace: every command says memcli.toml:line
    and writes nothing."""
    ws = tmp_path / "ws"
    assert memcli(ws, "init", str(ws)).returncode == 0
    (ws / "memcli.toml").write_text('[search]\nlimit = 5\n[files."../escape.md"]\ntypes = ["x"]\n')
    before = {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()}
    for args in (["add", "--type", "x", "a note"], ["list"], ["config", "set", "search.limit", "3"]):
        result = memcli(ws, *args)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "memcli.toml:3: " in result.stderr and "not a file name" in result.stderr
    assert {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()} == before
    assert not (tmp_path / "escape.md").exists()
