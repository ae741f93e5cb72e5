"""CLI conventions people expect (issue 20) through the Typer app: one workspace from
init on, exit code 2 for bad option values, type names, plain-text output, help and
completion, relative dates, the editor."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app
from tests.support.cli import envelope, invoke


def test_init_without_path_inside_a_workspace_keeps_it(
    runner: CliRunner, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # init would also make the ONNX export (torch); tests/process/test_first_run.py
    # proves that step, this test the workspace init chooses
    monkeypatch.setenv("MEMCLI_INDEX_ONNX", "false")
    cwd = Path.cwd()
    try:
        os.chdir(workspace)
        data = envelope(runner.invoke(app, ["init", "--json"]).stdout)
    finally:
        os.chdir(cwd)
    assert data["workspace"] == str(workspace)


# ----------------------------------------------------------------- 2. exit code 2


@pytest.mark.parametrize(
    "args, option",
    [
        (["search", "tests", "--limit", "0"], "--limit"),
        (["search", "tests", "--mode", "bogus"], "--mode"),
        (["search", "tests", "--since", "garbage"], "--since"),
        (["search", "tests", "--until", "2026-13-45"], "--until"),
        (["inject", "-q", "tests", "--max-tokens", "-5"], "--max-tokens"),
        (["inject", "-q", "tests", "--format", "yaml"], "--format"),
        (["edit", "m8f3a2c1", "-i", "1.5"], "--importance"),
        (["add", "x", "-c", "2"], "--confidence"),
        (["log", "x", "-i", "-1"], "--importance"),
        (["list", "--since", "last tuesday"], "--since"),
        (["compress", "--target-tokens", "0"], "--target-tokens"),
    ],
)
def test_bad_option_values_exit_2_naming_the_option(
    runner: CliRunner, workspace: Path, args: list[str], option: str
) -> None:
    before = {p.name: p.read_bytes() for p in workspace.glob("*.md")}
    result = invoke(runner, workspace, *args)
    assert result.exit_code == 2, result.output
    assert option in result.stderr and "Traceback" not in result.output
    assert result.stdout == ""
    assert {p.name: p.read_bytes() for p in workspace.glob("*.md")} == before


def test_missing_input_files_are_data_errors(runner: CliRunner, workspace: Path) -> None:
    for args in (
        ["inject", "--context-file", "nope.txt"],
        ["inject", "--messages", "nope.json"],
        ["extract", "--messages", "nope.json"],
    ):
        result = invoke(runner, workspace, *args)
        assert result.exit_code == 1, (args, result.output)
        assert "nope" in result.stderr and "no such file" in result.stderr


def test_list_since_relative_dates(runner: CliRunner, workspace: Path) -> None:
    new = envelope(invoke(runner, workspace, "add", "Started learning Rust", "--json").stdout)
    new_id = new["entry"]["id"]

    def ids(*args: str) -> set[str]:
        result = invoke(runner, workspace, "list", "--json", *args)
        assert result.exit_code == 0, result.output
        return {e["id"] for e in envelope(result.stdout)["entries"]}

    everything = ids()
    for since in ("today", "yesterday", "7d", "2w"):
        found = ids("--since", since)
        assert new_id in found and found < everything, since
    assert new_id not in ids("--until", "yesterday")
    assert new_id in ids("--until", "today")


# ----------------------------------------------------------------- 3. type names


def test_add_accepts_plural_and_heading_forms(runner: CliRunner, workspace: Path) -> None:
    memory = workspace / "memory.md"
    for name in ("preferences", "Preferences", "User Preferences", "preference"):
        result = invoke(runner, workspace, "add", f"Likes {name} tea", "-t", name, "--json")
        assert result.exit_code == 0, result.output
        assert envelope(result.stdout)["entry"]["type"] == "preference"
    assert memory.read_text().count("## Preferences") == 1
    skill = invoke(runner, workspace, "add", "Run ruff first", "-t", "Skills", "--json")
    assert envelope(skill.stdout)["entry"]["file"] == "learnings.md"


def test_add_unknown_type_needs_new_type(runner: CliRunner, workspace: Path) -> None:
    memory = workspace / "memory.md"
    before = memory.read_bytes()
    typo = invoke(runner, workspace, "add", "Likes tea", "-t", "prefrence")
    assert typo.exit_code == 2 and "did you mean preference" in typo.stderr
    assert "--new-type" in typo.stderr and memory.read_bytes() == before
    new = invoke(
        runner, workspace, "add", "memcli 1.0 ships in May", "-t", "Projects", "--new-type"
    )
    assert new.exit_code == 0, new.output
    assert "## Projects" in memory.read_text()
    again = invoke(runner, workspace, "add", "Website redesign", "-t", "projects", "--json")
    assert again.exit_code == 0 and envelope(again.stdout)["entry"]["type"] == "projects"
    assert memory.read_text().count("## Projects") == 1
    listed = invoke(runner, workspace, "list", "--type", "Projects", "--json")
    assert len(envelope(listed.stdout)["entries"]) == 2


def test_add_to_an_empty_section_of_ones_own(runner: CliRunner, workspace: Path) -> None:
    memory = workspace / "memory.md"
    memory.write_text(memory.read_text() + "\n## Reading list\n")
    result = invoke(runner, workspace, "add", "Designing Data-Intensive Apps", "-t", "reading list")
    assert result.exit_code == 0, result.output
    assert memory.read_text().count("## Reading list") == 1


@pytest.mark.parametrize(
    "args, suggestion",
    [
        (["search", "tests", "--type", "skil"], "did you mean skill"),
        (["list", "--type", "bogus"], "unknown type 'bogus'"),
        (["list", "--type", "fact,lesons"], "did you mean lesson"),
        (["inject", "--types", "skill,lesson,prefs"], "unknown type 'prefs'"),
    ],
)
def test_unknown_filter_types_exit_2(
    runner: CliRunner, workspace: Path, args: list[str], suggestion: str
) -> None:
    result = invoke(runner, workspace, *args)
    assert result.exit_code == 2, result.output
    assert suggestion in result.stderr and result.stdout == ""


def test_filter_types_split_commas_and_accept_headings(runner: CliRunner, workspace: Path) -> None:
    def types(*args: str) -> set[str]:
        result = invoke(runner, workspace, "list", "--json", *args)
        assert result.exit_code == 0, result.output
        return {e["type"] for e in envelope(result.stdout)["entries"]}

    assert types("--type", "skill,lesson") == {"skill", "lesson"}
    assert types("-t", "Skills", "-t", "Corrections") == {"skill", "correction"}
    block = invoke(runner, workspace, "inject", "--types", "skill,lesson", "--json")
    assert block.exit_code == 0, block.output
    chosen = envelope(block.stdout)
    assert chosen["entries"] and {e["type"] for e in chosen["entries"]} <= {"skill", "lesson"}


# ----------------------------------------------------------------- 4. output for people


def test_stats_and_get_print_plain_text(runner: CliRunner, workspace: Path) -> None:
    stats = invoke(runner, workspace, "stats")
    assert stats.exit_code == 0, stats.output
    assert "{" not in stats.stdout and "by type:\n" in stats.stdout
    assert "\n  fact: 12\n" in stats.stdout and "\n  memory.md: 25\n" in stats.stdout
    detail = invoke(runner, workspace, "get", "m8f3a2c1")
    assert detail.exit_code == 0, detail.output
    assert "  pinned: no\n" in detail.stdout and "  last accessed: never\n" in detail.stdout
    assert "  accesses: 0\n" in detail.stdout
    assert "False" not in detail.stdout and "None" not in detail.stdout


def test_piped_list_keeps_whole_multiline_entries(runner: CliRunner, workspace: Path) -> None:
    result = invoke(runner, workspace, "list", "--type", "skill")
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("l7f1b3d5\tskill\t"))
    assert lines[start].endswith("Profile a slow Python endpoint with py-spy:")
    assert lines[start + 2] == "\t\tpy-spy record -o profile.svg --pid $(pgrep -f uvicorn)"
    assert lines[start + 4] == "\t\tThen open the SVG and look for the widest frames."
    texts = [line.split("\t")[2] for line in lines]  # `cut -f3`
    assert "```bash" in texts


@pytest.mark.slow  # seconds: the whole suite runs it, the fast tier stays under a minute
def test_piped_search_keeps_whole_entries_and_no_matches_goes_to_stderr(
    runner: CliRunner, workspace: Path
) -> None:
    found = invoke(runner, workspace, "search", "profile a slow endpoint", "-t", "skill")
    assert found.exit_code == 0, found.output
    assert "…" not in found.stdout
    assert "      Then open the SVG and look for the widest frames.\n" in found.stdout
    none = invoke(runner, workspace, "search", "profile", "-k", "no-such-keyword")
    assert none.exit_code == 0 and none.stdout == "" and "no matches" in none.stderr
    empty = invoke(runner, workspace, "list", "-k", "no-such-keyword")
    assert empty.exit_code == 0 and empty.stdout == "" and "no entries" in empty.stderr


# ----------------------------------------------------------------- 5. version, completion, help


def test_shell_completion_is_offered(runner: CliRunner) -> None:
    top = runner.invoke(app, ["--help"])
    assert "--install-completion" in top.stdout and "--show-completion" in top.stdout
    # Typer detects the shell from the process tree (shellingham), which depends on how
    # the tests were started; its own switch for tests makes the option take the shell
    # name instead, so the script itself is checked the same way everywhere.
    env = dict(os.environ, _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    script = subprocess.run(
        [sys.executable, "-m", "memcli", "--show-completion", "bash"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert script.returncode == 0, script.stderr
    assert "_MEMCLI_COMPLETE=complete_bash" in script.stdout


def _commands() -> list[tuple[list[str], object]]:
    import click
    import typer

    found: list[tuple[list[str], object]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        found.append((path, command))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                if not sub.hidden:
                    walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_every_option_has_help_and_a_metavar(runner: CliRunner) -> None:
    import click

    for path, command in _commands():
        for param in command.params:  # type: ignore[attr-defined]
            where = (path, param.name)
            assert getattr(param, "help", None), where
            if isinstance(param, click.Option) and not param.is_flag:
                assert param.metavar or isinstance(param.type, click.Choice), where
        text = runner.invoke(app, [*path, "--help"]).stdout
        for shape in ("<str>", "<list[", "<int", "<float", "<path>", "[[", "{PATH}"):
            assert shape not in text, (path, shape)
    search = runner.invoke(app, ["search", "--help"]).stdout
    assert "--mode <hybrid|semantic|keyword>" in search
    inject = runner.invoke(app, ["inject", "--help"]).stdout
    assert "--format <markdown|xml|json>" in inject


def test_forget_reason_is_kept_in_the_archive(runner: CliRunner, workspace: Path) -> None:
    result = invoke(runner, workspace, "forget", "m8f3a2c1", "--reason", "moved to uv's runner")
    assert result.exit_code == 0, result.output
    from memcli.services.memory import Memory

    [copy] = [e for e in Memory(workspace).entries(include_archived=True) if e.id == "m8f3a2c1"]
    assert copy.meta["reason"] == "moved to uv's runner"
    before = (workspace / "memory.md").read_bytes()
    bad = invoke(runner, workspace, "forget", "m2a7c9e0", "--reason", "two\nlines")
    assert bad.exit_code != 0 and "--reason" in bad.output
    assert (workspace / "memory.md").read_bytes() == before


def test_list_limit_sort_pinned(runner: CliRunner, workspace: Path) -> None:
    from memcli.services.memory import Memory

    with (workspace / "memory.md").open("a") as handle:
        handle.write(
            "- Older entry <!-- id=mold created=2020-01-01T00:00:00Z imp=0.2 -->\n"
            "- Newer entry <!-- id=mnew created=2030-01-01T00:00:00Z imp=0.99 -->\n"
        )
    mem = Memory(workspace)
    older, newer = mem.get("mold").entry, mem.get("mnew").entry
    mem.edit(older.id, pin=True, by="person")  # an agent's pin would wait for review

    def ids(*args: str) -> list[str]:
        result = invoke(runner, workspace, "list", "--json", *args)
        assert result.exit_code == 0, result.output
        return [e["id"] for e in envelope(result.stdout)["entries"]]

    everything = ids()
    assert ids("--limit", "3") == everything[:3]
    assert ids("--pinned") == [older.id]
    assert ids("--sort", "importance", "-n", "1") == [newer.id]
    by_created = ids("--sort", "created")
    assert by_created[0] == newer.id and by_created.index(older.id) > 0  # newest first
    by_updated = ids("--sort", "updated")
    assert by_updated[0] == newer.id  # created 2030 beats the pin's update of today
    assert by_updated.index(older.id) < by_created.index(older.id)
    bad = invoke(runner, workspace, "list", "--sort", "random")
    assert bad.exit_code == 2 and "--sort" in bad.output


def test_edit_without_options_uses_the_editor_and_open_opens_the_file(
    runner: CliRunner, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "fake_editor.py"
    script.write_text(
        "import pathlib, sys\n"
        "p = pathlib.Path(sys.argv[-1])\n"
        "p.write_text(p.read_text().replace('unittest', 'unittest, always', 1))\n"
        "pathlib.Path(sys.argv[-1] + '.opened').touch()\n"
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {script}")
    result = invoke(runner, workspace, "edit", "m8f3a2c1")
    assert result.exit_code == 0, result.output
    from memcli.services.memory import Memory

    entry = Memory(workspace).get("m8f3a2c1").entry
    assert entry.text.startswith("Prefers pytest over unittest, always")
    assert entry.meta["by"] == "person"
    script.write_text("import sys\n")  # leaves the text as it was
    before = (workspace / "memory.md").read_bytes()
    unchanged = invoke(runner, workspace, "edit", "m8f3a2c1")
    assert unchanged.exit_code == 0 and "unchanged" in unchanged.output
    script.write_text("import pathlib, sys\npathlib.Path(sys.argv[-1]).write_text('')\n")
    emptied = invoke(runner, workspace, "edit", "m8f3a2c1")
    assert emptied.exit_code == 1 and "empty" in emptied.output
    script.write_text("import sys\nsys.exit(3)\n")
    failed = invoke(runner, workspace, "edit", "m8f3a2c1")
    assert failed.exit_code == 1 and "exited with 3" in failed.output
    assert (workspace / "memory.md").read_bytes() == before
    script.write_text("import pathlib, sys\npathlib.Path(sys.argv[-1] + '.opened').touch()\n")
    assert invoke(runner, workspace, "open", "learnings.md").exit_code == 0
    assert (workspace / "learnings.md.opened").exists()
    assert invoke(runner, workspace, "open", "../etc/passwd").exit_code == 2


def test_watch_install_service_writes_a_unit_and_a_plist(
    runner: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    import configparser
    import plistlib

    from memcli.surfaces.daemon.unitfile import service_file

    result = invoke(runner, workspace, "watch", "--install-service", "--json")
    assert result.exit_code == 0, result.output
    data = envelope(result.stdout)
    unit = Path(data["file"])
    assert unit.parent == tmp_path / "xdg-config" / "systemd" / "user"  # conftest's XDG
    assert "systemctl --user" in data["start"] and unit.name in data["start"]
    parsed = configparser.ConfigParser(interpolation=None)
    parsed.read_string(unit.read_text())
    assert parsed["Service"]["ExecStart"] == f"{sys.executable} -m memcli -w {workspace} watch"
    assert parsed["Service"]["Restart"] == "on-failure"
    assert parsed["Install"]["WantedBy"] == "default.target"
    again = invoke(runner, workspace, "watch", "--install-service", "--json")
    assert envelope(again.stdout)["file"] == str(unit)  # one file per workspace
    removed = invoke(runner, workspace, "watch", "--uninstall-service", "--json")
    assert envelope(removed.stdout)["removed"] is True and not unit.exists()
    path, text = service_file(workspace, "launchd", {"HOME": str(tmp_path)})
    plist = plistlib.loads(text.encode())
    assert path.parent == tmp_path / "Library" / "LaunchAgents"
    assert plist["ProgramArguments"] == [
        sys.executable,
        "-m",
        "memcli",
        "-w",
        str(workspace),
        "watch",
    ]
    assert plist["RunAtLoad"] is True and plist["KeepAlive"] == {"SuccessfulExit": False}


@pytest.mark.slow  # embeds with the real model (torch, then its ONNX export)
def test_a_plain_text_transcript_from_stdin(runner: CliRunner, workspace: Path) -> None:
    said = "user: I prefer tabs over spaces in Go code.\nassistant: Noted.\n"
    result = invoke(
        runner, workspace, "extract", "--messages", "-", "--dry-run", "--json", input=said
    )
    assert result.exit_code == 0, result.output
    decisions = envelope(result.stdout)["decisions"]
    assert [(d["action"], d["type"]) for d in decisions] == [("ADD", "preference")]
    block = invoke(
        runner, workspace, "inject", "--messages", "-", "--max-tokens", "300", input=said
    )
    assert block.exit_code == 0 and "<memory>" in block.stdout, block.output
