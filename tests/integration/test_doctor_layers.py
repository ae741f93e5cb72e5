"""`memcli doctor` checks every layer the workspace reads (docs/layers.md): each layer's
files, index and trust, and a layer `[layers] read` names that cannot be read, every
line naming its layer; with one workspace its output is as it was. The real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.store.trust import trust
from tests.support.cli import invoke
from tests.support.env import make_workspace

DUPLICATE = "- Likes tea <!-- id=mu1 -->\n"


def _user() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "memcli"


def _team(project: Path, *, workspace: bool, toml: str = "") -> None:
    """`[layers] read = "user, ../team"` in the trusted project; ../team a workspace or
    a plain folder, with its own memcli.toml."""
    team = project.parent / "team"
    if workspace:
        make_workspace(team, "mt1", "The team deploys on Tuesdays")
    else:
        team.mkdir()
    if toml:
        (team / "memcli.toml").write_text(toml)
    (project / "memcli.toml").write_text('[layers]\nread = "user, ../team"\n')
    trust(project)


def _user_plain(project: Path) -> None:
    make_workspace(_user(), "mu1", "Prefers small pull requests")


def _user_indexed(project: Path) -> None:
    _user_plain(project)
    Memory(_user(), notify=lambda m: None).index()  # the real model (the row is slow)


def _user_duplicate(project: Path) -> None:
    make_workspace(_user(), "mu1", "Prefers small pull requests")
    with (_user() / "memory.md").open("a") as out:
        out.write(DUPLICATE)


ROWS = [
    # (set up, exit code, lines the output holds ({user}: the per-user workspace), the
    # layers of the JSON report)
    (lambda p: None, 0, ["config: every setting has a value it accepts"], None),
    pytest.param(
        _user_indexed,
        0,
        [
            "(project) config: every setting has a value it accepts",
            "(user) index: current (1 entries",
            "(user) trust: your own workspace: its settings apply as they are",
            "(user) {user}: ok",
        ],
        ["user"],
        marks=pytest.mark.slow,
    ),
    (
        _user_duplicate,
        1,
        [
            "(user) duplicate: id mu1 at memory.md:",
            "(user) index: none yet",
            "(project) {project}: ok",  # the user layer's problem is not the project's
            "(user) {user}: needs attention",
            "needs attention: the user layer",
        ],
        ["user"],
    ),
    (
        lambda p: (_user_plain(p), _team(p, workspace=False)),
        1,
        ["(../team) layer: not read: it holds no memcli workspace", "(user) {user}: ok"],
        ["user", "../team"],
    ),
    (
        lambda p: _team(p, workspace=True, toml='[llm]\nprovider = "openai"\n'),
        0,
        [
            "(../team) trust: not trusted: llm.provider of its memcli.toml not applied",
            "(../team) index: none yet",
        ],
        ["../team"],
    ),
]


@pytest.mark.parametrize(("setup", "code", "lines", "layers"), ROWS)
def test_doctor_checks_each_layer_naming_it(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    setup,  # noqa: ANN001
    code: int,
    lines: list[str],
    layers: list[str] | None,
) -> None:
    if setup is _user_indexed:
        request.getfixturevalue("exported")  # the model's ONNX export, made once a run
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    project = make_workspace(tmp_path / "project", "mp1", "Deploys to Fly.io from main")
    setup(project)
    runner = CliRunner()
    done = invoke(runner, project, "doctor")
    assert done.exit_code == code, done.output
    def named(text: str) -> str:
        return text.replace(str(_user().resolve()), "{user}").replace(str(project), "{project}")

    out, err = named(done.stdout), named(done.stderr)
    for line in lines:  # stdout, or stderr (as `error: …`)
        said = out.splitlines() + [t.removeprefix("error: ") for t in err.splitlines()]
        assert any(text.startswith(line) for text in said), (line, out, err)
    if layers is None:  # one workspace: no line names a layer
        assert "(project)" not in out and "(user)" not in out
    else:  # every finding names its layer
        assert all(text.startswith("(") for text in out.splitlines()), out
        assert "(project) {project}: ok" in out  # the project is clean in every row
    report = json.loads(invoke(runner, project, "doctor", "--json").stdout)["data"]
    assert [one["layer"] for one in report.get("layers", [])] == (layers or [])
    assert report["ok"] is (code == 0)


def test_another_layers_late_editor_bytes_are_named_not_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes an editor wrote into the user layer's memory.md after memcli replaced it
    (tests/integration/test_history.py's scenario) are named by the project's doctor and
    left for that layer's own doctor, which merges them back: the project's doctor writes
    nothing into another layer."""
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    project = make_workspace(tmp_path / "project", "mp1", "Deploys to Fly.io from main")
    _user_plain(project)
    memory = _user() / "memory.md"
    handle = open(memory, "r+b")  # noqa: SIM115 - the editor's open file (old inode)
    content = handle.read()
    Memory(_user(), notify=lambda m: None).add("Written by memcli meanwhile", by="person")
    handle.seek(0)
    handle.write(content.replace(b"## Facts\n", b"## Facts\n- Typed in the editor\n", 1))
    handle.truncate()
    handle.close()
    before = memory.read_bytes()
    runner = CliRunner()
    done = invoke(runner, project, "doctor")
    user = str(_user().resolve())
    said = f"(user) an editor wrote bytes late into memory.md: `memcli -w {user} doctor`"
    assert said in done.stdout and done.exit_code == 0, done.output
    assert memory.read_bytes() == before and b"Typed in the editor" not in before
    mine = invoke(runner, _user(), "doctor")
    assert "merged back bytes an editor wrote late into memory.md" in mine.stdout, mine.output
    assert b"Typed in the editor" in memory.read_bytes()
