"""Every store command through the real Typer app: output shapes, exit codes, errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app
from tests.support.cli import as_json, envelope, invoke


def test_init_creates_files(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # without the ONNX export init would also make (loading torch: tests/process/
    # test_first_run.py proves that step); this test is about the files
    monkeypatch.setenv("MEMCLI_INDEX_ONNX", "false")
    target = tmp_path / "new"
    data = as_json(runner.invoke(app, ["init", str(target), "--json"]))
    assert sorted(Path(p).name for p in data["created"]) == [
        ".gitattributes",
        ".gitignore",
        "learnings.md",
        "memory.md",
    ]
    assert (target / ".gitignore").read_text() == ".memcli/\n"
    assert "memory.md merge=memcli" in (target / ".gitattributes").read_text()
    again = as_json(runner.invoke(app, ["init", str(target), "--json"]))
    assert again["created"] == []


def test_add_list_get_round(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    added = as_json(
        invoke(
            runner,
            ws,
            "add",
            "Prefers tabs over spaces",
            "--type",
            "preference",
            "--importance",
            "0.8",
            "--confidence",
            "0.7",
            "--keywords",
            "style,editor",
            "--source",
            "conv-1",
            "--pin",
            "--json",
        )
    )
    assert added["action"] == "added"
    entry = added["entry"]
    assert entry["type"] == "preference" and entry["importance"] == 0.8
    assert entry["confidence"] == 0.7 and entry["keywords"] == ["style", "editor"]
    assert entry["source"] == "conv-1" and entry["pinned"] is True
    text = (ws / "memory.md").read_text()
    assert f"- Prefers tabs over spaces <!-- id={entry['id']} imp=0.8 conf=0.7" in text
    listed = as_json(invoke(runner, ws, "list", "--json"))["entries"]
    assert [e["id"] for e in listed] == [entry["id"]]
    detail = as_json(invoke(runner, ws, "get", entry["id"], "--json"))["entry"]
    assert detail["text"] == "Prefers tabs over spaces"
    assert detail["access_count"] == 0 and detail["last_accessed"] is None


def test_add_from_stdin_and_learnings_file(runner: CliRunner, empty_workspace: Path) -> None:
    result = invoke(
        runner,
        empty_workspace,
        "add",
        "-",
        "--type",
        "lesson",
        "--json",
        input="Line one\n  indented detail\n",
    )
    entry = as_json(result)["entry"]
    assert entry["file"] == "learnings.md" and entry["text"] == "Line one\n  indented detail"
    assert "  indented detail" in (empty_workspace / "learnings.md").read_text()


def test_exact_duplicate_updates(runner: CliRunner, empty_workspace: Path) -> None:
    first = as_json(invoke(runner, empty_workspace, "add", "Uses Docker", "-k", "docker", "--json"))
    second = as_json(
        invoke(
            runner,
            empty_workspace,
            "add",
            "  uses docker. ",
            "-k",
            "containers",
            "-i",
            "0.9",
            "--json",
        )
    )
    assert second["action"] == "updated" and second["entry"]["id"] == first["entry"]["id"]
    assert second["entry"]["keywords"] == ["docker", "containers"]
    assert second["entry"]["importance"] == 0.9
    assert len(as_json(invoke(runner, empty_workspace, "list", "--json"))["entries"]) == 1
    plain = invoke(runner, empty_workspace, "add", "Uses Docker")
    assert "updated" in plain.stdout and "already there" in plain.stdout


def test_list_filters(runner: CliRunner, workspace: Path) -> None:
    prefs = as_json(invoke(runner, workspace, "list", "--type", "preference", "--json"))["entries"]
    assert prefs and all(e["type"] == "preference" for e in prefs)
    docker = as_json(invoke(runner, workspace, "list", "--keyword", "docker", "--json"))["entries"]
    assert docker and all("docker" in e["keywords"] for e in docker)
    recent = as_json(invoke(runner, workspace, "list", "--since", "2026-11-01", "--json"))[
        "entries"
    ]
    assert recent and all(e["created"] >= "2026-11-01" for e in recent)
    until = as_json(invoke(runner, workspace, "list", "--until", "2026-06-15", "--json"))["entries"]
    assert {e["id"] for e in until} == {"m4c8e1a3", "l3d7b1f9"}
    bad = invoke(runner, workspace, "list", "--since", "last week")
    assert bad.exit_code == 2 and "--since" in bad.stderr and "not a date" in bad.stderr


def test_edit_text_and_metadata_keeps_id(runner: CliRunner, workspace: Path) -> None:
    hand = [
        e
        for e in as_json(invoke(runner, workspace, "list", "--json"))["entries"]
        if e["text"] == "Likes dark editor themes"
    ][0]
    assert "id" not in hand["meta"]
    edited = as_json(
        invoke(
            runner,
            workspace,
            "edit",
            hand["id"],
            "--text",
            "Likes dark editor themes (Solarized)",
            "-i",
            "0.3",
            "--json",
        )
    )["entry"]
    assert edited["id"] == hand["id"] and edited["importance"] == 0.3
    text = (workspace / "memory.md").read_text()
    assert f"- Likes dark editor themes (Solarized) <!-- id={hand['id']} imp=0.3 updated=" in text
    again = as_json(invoke(runner, workspace, "get", hand["id"], "--json"))["entry"]
    assert again["text"] == "Likes dark editor themes (Solarized)"
    unpinned = as_json(invoke(runner, workspace, "edit", hand["id"], "--pin", "--json"))["entry"]
    assert unpinned["pinned"] is True
    nothing = runner.invoke(  # no options: the editor, which here changes nothing
        app, ["-w", str(workspace), "edit", hand["id"]], env={"VISUAL": f"{sys.executable} -c pass"}
    )
    assert nothing.exit_code == 0 and "unchanged" in nothing.stderr


def test_edit_only_touches_that_entry(runner: CliRunner, workspace: Path) -> None:
    before = (workspace / "memory.md").read_text().split("\n")
    as_json(invoke(runner, workspace, "edit", "m1b2c3d4", "--importance", "0.95", "--json"))[
        "entry"
    ]
    after = (workspace / "memory.md").read_text().split("\n")
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == 1 and "imp=0.95" in after[changed[0]]
    assert after[changed[0] + 1] == before[changed[0] + 1]  # continuation line kept


def test_forget_and_restore(runner: CliRunner, workspace: Path) -> None:
    original = (workspace / "learnings.md").read_text()
    forgotten = as_json(invoke(runner, workspace, "forget", "l7f1b3d5", "--json"))["entry"]
    assert forgotten["id"] == "l7f1b3d5"
    assert "l7f1b3d5" not in (workspace / "learnings.md").read_text()
    archive = (workspace / "archive.md").read_text()
    assert "id=l7f1b3d5" in archive and "reason=forgotten" in archive and "py-spy record" in archive
    ids = [e["id"] for e in as_json(invoke(runner, workspace, "list", "--json"))["entries"]]
    assert "l7f1b3d5" not in ids
    with_archive = as_json(invoke(runner, workspace, "list", "--include-archived", "--json"))[
        "entries"
    ]
    assert "l7f1b3d5" in [e["id"] for e in with_archive]
    restored = as_json(invoke(runner, workspace, "restore", "l7f1b3d5", "--json"))["entry"]
    assert restored["type"] == "skill" and restored["file"] == "learnings.md"
    text = (workspace / "learnings.md").read_text()
    assert "py-spy record -o profile.svg" in text and "reason=" not in text
    assert "l7f1b3d5" not in (workspace / "archive.md").read_text()
    # Same set of lines back (the entry now sits at the end of its section).
    assert sorted(text.split("\n")) == sorted(original.split("\n"))


def test_forget_hand_written_entry_can_be_restored(runner: CliRunner, workspace: Path) -> None:
    entry = [
        e
        for e in as_json(invoke(runner, workspace, "list", "--json"))["entries"]
        if e["text"] == "Has a cat named Miso"
    ][0]
    as_json(invoke(runner, workspace, "forget", entry["id"], "--json"))
    as_json(invoke(runner, workspace, "restore", entry["id"], "--json"))["entry"]
    assert "Has a cat named Miso" in (workspace / "memory.md").read_text()


def test_stats(runner: CliRunner, workspace: Path) -> None:
    data = as_json(invoke(runner, workspace, "stats", "--json"))
    assert data["entries"] == 37 and data["by_type"]["fact"] == 12
    assert set(data["by_type"]) >= {
        "preference",
        "fact",
        "pattern",
        "reflection",
        "correction",
        "skill",
        "lesson",
    }


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["get", "nope"], 1, "no entry with id 'nope'"),
        (["edit", "nope", "-i", "0.5"], 1, "no entry with id 'nope'"),
        (["forget", "nope"], 1, "no entry with id 'nope'"),
        (["restore", "nope"], 1, "no archived entry with id 'nope'"),
        (["add", "x", "--importance", "2"], 2, "error: --importance: '2' is not valid"),
        (["add", "x", "--confidence", "-0.1"], 2, "error: --confidence: '-0.1' is not valid"),
        (["add", "x", "--importance", "abc"], 2, "error: --importance: 'abc' is not valid"),
        (["add", "   "], 1, "the entry text is empty"),
        (["add"], 2, "error: TEXT: missing argument"),
        (["frobnicate"], 2, "error: no such command 'frobnicate'"),
    ],
)
def test_errors(
    runner: CliRunner, workspace: Path, args: list[str], code: int, message: str
) -> None:
    before = {p.name: p.read_bytes() for p in workspace.glob("*.md")}
    result = invoke(runner, workspace, *args)
    assert result.exit_code == code, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert {p.name: p.read_bytes() for p in workspace.glob("*.md")} == before


def test_missing_workspace_and_file_as_workspace(runner: CliRunner, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["-w", str(tmp_path / "none"), "list"])
    assert missing.exit_code == 1 and "memcli init" in missing.stderr
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    result = runner.invoke(app, ["-w", str(a_file), "list"])
    assert result.exit_code == 1 and "is a file, not a directory" in result.stderr


def test_malformed_metadata_blocks_writes_with_file_line(
    runner: CliRunner, workspace: Path
) -> None:
    path = workspace / "memory.md"
    broken = "- Has a cat <!-- imp=0.5 imp=0.6 -->"  # a comment memcli cannot read
    path.write_text(path.read_text().replace("- Has a cat named Miso", broken))
    before = path.read_bytes()
    result = invoke(runner, workspace, "add", "new fact")
    assert result.exit_code == 1
    line = before.decode().split("\n").index(broken) + 1
    assert f"memory.md:{line}: metadata key 'imp' appears twice" in result.stderr
    assert path.read_bytes() == before
    listed = invoke(runner, workspace, "list", "--json")  # reads warn and go on
    assert listed.exit_code == 0 and f"memory.md:{line}" in listed.stderr
    assert len(envelope(listed.stdout)["entries"]) == 36


@pytest.mark.slow  # embeds with the real model (torch, then its ONNX export)
def test_a_bad_importance_is_read_as_the_default_and_writes_go_on(
    runner: CliRunner, workspace: Path
) -> None:
    """`imp=high` written by hand: the entry stays visible (importance 0.5, a warning
    with file:line), adds to the file go on, and the comment stays as written."""
    path = workspace / "memory.md"
    odd = "- Has a cat named Miso <!-- imp=high -->"
    path.write_text(path.read_text().replace("- Has a cat named Miso", odd))
    line = path.read_text().split("\n").index(odd) + 1
    listed = invoke(runner, workspace, "list", "--json")
    assert listed.exit_code == 0
    assert f"memory.md:{line}: imp='high': importance must be a number" in listed.stderr
    [cat] = [e for e in envelope(listed.stdout)["entries"] if "Miso" in e["text"]]
    assert cat["importance"] == 0.5 and len(envelope(listed.stdout)["entries"]) == 37
    added = invoke(runner, workspace, "add", "Feeds the cat at seven")
    assert added.exit_code == 0, added.stderr
    assert odd + "\n" in path.read_text()  # byte for byte
    found = invoke(runner, workspace, "search", "cat named Miso", "--limit", "1")
    assert found.exit_code == 0 and "Has a cat named Miso" in found.stdout


@pytest.mark.slow
def test_unreadable_and_binary_files(runner: CliRunner, workspace: Path) -> None:
    (workspace / "memory.md").write_bytes(b"# M\n\n- ok\n- bad \xff\xfe\n")
    result = invoke(runner, workspace, "list")  # says where, and goes on with the rest
    assert result.exit_code == 0 and "memory.md:4: the file is not valid UTF-8" in result.stderr
    assert "Python" in result.stdout  # learnings.md's entries are listed
    before = (workspace / "memory.md").read_bytes()
    result = invoke(runner, workspace, "add", "x")  # a write to it is refused
    assert result.exit_code == 1 and "memory.md:4: the file is not valid UTF-8" in result.stderr
    assert (workspace / "memory.md").read_bytes() == before
    (workspace / "memory.md").write_bytes(b"# M\n\x00\x01")
    result = invoke(runner, workspace, "add", "x")
    assert result.exit_code == 1 and "binary data" in result.stderr


@pytest.mark.slow  # embeds with the real model (torch, then its ONNX export)
def test_a_bad_byte_in_learnings_md_leaves_the_rest_working(
    runner: CliRunner, workspace: Path
) -> None:
    """One byte that is not UTF-8 in learnings.md: reads say where (once) and go on with
    memory.md, an add to memory.md works, a write to learnings.md is refused with nothing
    written, doctor lists it."""
    learnings = workspace / "learnings.md"
    data = learnings.read_bytes()
    cut = data.index(b"\n- ") + 3
    learnings.write_bytes(data[:cut] + b"\xff" + data[cut:])
    line = data[:cut].count(b"\n") + 1
    where = f"learnings.md:{line}: the file is not valid UTF-8"
    listed = invoke(runner, workspace, "list")
    assert listed.exit_code == 0 and listed.stderr.count(where) == 1  # once, not per read
    assert "Prefers pytest" in listed.stdout
    for args in (["stats"], ["search", "pytest", "--mode", "keyword"]):
        result = invoke(runner, workspace, *args)
        assert result.exit_code == 0 and "Prefers pytest" in invoke(
            runner, workspace, "search", "pytest"
        ).stdout, (args, result.stderr)
    assert invoke(runner, workspace, "add", "Fact added meanwhile").exit_code == 0
    refused = invoke(runner, workspace, "add", "A lesson", "--type", "lesson")
    assert refused.exit_code == 1 and where in refused.stderr
    assert learnings.read_bytes() == data[:cut] + b"\xff" + data[cut:]
    doctor = invoke(runner, workspace, "doctor")
    assert doctor.exit_code == 1 and where in doctor.stdout + doctor.stderr


def test_json_output_is_only_json_on_stdout(runner: CliRunner, workspace: Path) -> None:
    for args in (["list", "--json"], ["stats", "--json"], ["get", "m8f3a2c1", "--json"]):
        envelope(invoke(runner, workspace, *args).stdout)


def test_help_and_usage_exit_codes(runner: CliRunner) -> None:
    assert runner.invoke(app, ["--help"]).exit_code == 0
    assert runner.invoke(app, ["list", "--bogus"]).exit_code == 2


def test_keywords_extracted_when_none_given(runner: CliRunner, empty_workspace: Path) -> None:
    entry = as_json(
        invoke(
            runner,
            empty_workspace,
            "add",
            "Deploys go through GitHub Actions to Kubernetes",
            "--json",
        )
    )["entry"]
    assert entry["keywords"][:3] == ["github", "actions", "kubernetes"]
    given = as_json(
        invoke(runner, empty_workspace, "add", "Uses Redis 7", "-k", "cache", "--json")
    )["entry"]
    assert given["keywords"] == ["cache"]
    chinese = as_json(invoke(runner, empty_workspace, "add", "喜欢喝茶", "--json"))["entry"]
    assert chinese["keywords"] == [] and "kw" not in chinese["meta"]
