"""`--help` that guides (issue 29 item 8): every command in a panel with its whole first
sentence, examples that parse, suggestions from synonyms and similarity, completion of
types and ids."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from memcli.surfaces.cli import helptext


def _tree() -> dict[str, object]:
    """Every visible command path (after `memcli`) → its Click command."""
    import typer

    from memcli.surfaces.cli.app import app

    root = typer.main.get_command(app)
    found: dict[str, object] = {}

    def walk(group: object, prefix: str) -> None:
        for name, command in getattr(group, "commands", {}).items():
            if command.hidden:
                continue
            path = f"{prefix} {name}".strip()
            found[path] = command
            walk(command, path)

    walk(root, "")
    return found


def test_every_command_has_a_panel_and_examples_and_nothing_else_is_listed() -> None:
    tree = _tree()
    assert set(tree) == set(helptext.COMMANDS), "helptext.COMMANDS must list every command"
    for path in tree:
        top = " " not in path
        assert (helptext.panel(path) in helptext.PANELS) == top, path
        assert helptext.COMMANDS[path][1], f"{path}: no examples"


def _argv(example: str) -> list[str]:
    """The arguments after `memcli` of an example command line (a pipe or redirect ends
    them)."""
    words = shlex.split(example, comments=False)
    start = words.index("memcli") + 1
    args: list[str] = []
    for word in words[start:]:
        if word in ("|", ">", "<", ">>"):
            break
        args.append(word)
    return args


@pytest.mark.parametrize(
    ("path", "example"),
    [(path, line) for path, (_, rows) in helptext.COMMANDS.items() for line, _ in rows],
)
def test_every_example_parses_against_its_command(path: str, example: str) -> None:
    import typer

    from memcli.surfaces.cli.app import app

    args = _argv(example)
    assert " ".join(args[: len(path.split())]) == path, f"{example!r} is not `memcli {path}`"
    command = typer.main.get_command(app)
    ctx = command.make_context("memcli", list(args))
    rest = list(ctx._protected_args) + list(ctx.args)
    while getattr(command, "commands", None) and rest:
        command = command.commands[rest[0]]
        ctx = command.make_context(rest[0], rest[1:], parent=ctx)  # raises on a bad option
        rest = list(getattr(ctx, "_protected_args", [])) + list(ctx.args)
    assert not getattr(command, "commands", None) or not rest


def test_help_lists_panels_in_order_with_whole_descriptions(runner) -> None:  # noqa: ANN001
    from memcli.surfaces.cli.app import app

    out = runner.invoke(app, ["--help"]).output
    starts = [out.index(f"\n{title}:\n") for title in helptext.PANELS]
    assert starts == sorted(starts)
    listing = out.split("\nEveryday:\n")[1]
    assert "..." not in listing and "…" not in listing  # no description cut short
    assert "\nCommands:" not in out  # nothing left outside a panel


def test_each_commands_help_shows_its_examples(runner) -> None:  # noqa: ANN001
    from memcli.surfaces.cli.app import app

    for argv in (["add", "--help"], ["config", "set", "--help"], ["git", "--help"]):
        out = runner.invoke(app, argv).output
        first = helptext.COMMANDS[" ".join(argv[:-1])][1][0][0]
        assert "Examples:" in out and first in out, argv


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("delete", "forget"),
        ("rm", "forget"),
        ("remove", "forget"),
        ("DELETE", "forget"),
        ("show", "get"),
        ("find", "search"),
        ("serch", "search"),
        ("searc", "search"),
        ("ls", "list"),
        ("undelete", "restore"),
        ("reindex", "index"),
        ("inj", "inject"),
        ("xyzzy", None),
        ("re", None),  # reflect, restore, … : no single command
    ],
)
def test_a_mistyped_or_synonymous_command_suggests_the_right_one(typed: str, meant: str | None) -> None:
    from memcli.surfaces.cli.app import app  # noqa: F401 - registers the commands

    known = list(_tree())
    top = [k for k in known if " " not in k]
    assert helptext.suggest(typed, top) == meant


def test_an_unknown_command_names_the_one_meant(runner) -> None:  # noqa: ANN001
    from memcli.surfaces.cli.app import app

    result = runner.invoke(app, ["delete", "m1"])
    assert result.exit_code == 2
    assert "did you mean `memcli forget`?" in result.output
    assert "reflect" not in result.output


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("prefs", "preference"),
        ("pref", "preference"),
        ("lessn", "lesson"),
        ("factt", "fact"),
        ("skils", "skill"),
        ("refl", "reflection"),
        ("co", None),  # too short to mean one
        ("zzz", None),
    ],
)
def test_a_type_suggestion_names_a_type(typed: str, meant: str | None) -> None:
    from memcli.core.models import KNOWN_TYPES
    from memcli.surfaces.cli.args import closest_type

    assert closest_type(typed, KNOWN_TYPES) == meant


def test_add_with_an_abbreviated_type_suggests_the_type_not_a_new_section(
    runner, workspace: Path  # noqa: ANN001
) -> None:
    from memcli.surfaces.cli.app import app

    before = (workspace / "memory.md").read_bytes()
    result = runner.invoke(app, ["-w", str(workspace), "add", "Likes tea", "--type", "prefs"])
    assert result.exit_code == 2
    assert "use --type preference" in result.output
    assert (workspace / "memory.md").read_bytes() == before


def test_completion_offers_types_and_ids(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memcli.surfaces.cli import complete

    monkeypatch.setenv("MEMCLI_WORKSPACE", str(workspace))
    assert complete.types(None, "pre") == ["preference"]
    assert complete.types(None, "skill,le") == ["skill,lesson"]
    ids = dict(complete.ids(None, "m8f"))
    assert "m8f3a2c1" in ids and ids["m8f3a2c1"]  # with the start of its text
    assert all(i.startswith("m8f") for i in ids)
    assert complete.archived_ids(None, "") == [] or all(
        i for i, _ in complete.archived_ids(None, "")
    )


def test_completion_never_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memcli.surfaces.cli import complete

    monkeypatch.setenv("MEMCLI_WORKSPACE", str(tmp_path / "missing"))
    assert complete.ids(None, "") == []
    assert "fact" in complete.types(None, "")


def test_a_warning_is_said_once_per_command(runner, workspace: Path) -> None:  # noqa: ANN001
    """A bad value a person wrote is read by several parts of one command (the write
    guard, the dedup check, the history): it is said once, and again by the next command."""
    from memcli.surfaces.cli.app import app

    memory = workspace / "memory.md"
    memory.write_text(memory.read_text() + "- Likes tall trees <!-- id=mzz1 imp=high -->\n")
    for argv in (["add", "Drinks green tea"], ["add", "Drinks black tea"], ["get", "mzz1"]):
        result = runner.invoke(app, ["-w", str(workspace), *argv])
        assert result.exit_code == 0, result.output
        assert result.stderr.count("imp='high'") == 1, (argv, result.stderr)
