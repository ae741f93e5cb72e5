"""`memcli install` / `uninstall` as a child process on real settings files that already
hold other content, and the end-to-end check: a scratch project's installed Claude Code
hooks driven with the host's payloads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.core.errors import MemcliError
from memcli.surfaces import install
from tests.support.env import FIXTURES

BIN = str(Path(sys.executable).parent)

CLAUDE_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
    },
    "env": {"DEBUG": "1"},
}
MCP_JSON = {"mcpServers": {"github": {"command": "npx", "args": ["-y", "gh-mcp"]}}}


def memcli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(home), PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    env.pop("CODEX_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def write_json(path: Path, data: dict) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    return text


def test_claude_code_project_merges_and_uninstall_restores(
    tmp_path: Path, session_export  # noqa: ANN001 - install prepares the model: exported once
) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    settings = project / ".claude" / "settings.json"
    original = write_json(settings, CLAUDE_SETTINGS)
    mcp_original = write_json(project / ".mcp.json", MCP_JSON)

    dry = memcli("install", "claude-code", "--project", "--dry-run", cwd=project, home=home)
    assert dry.returncode == 0, dry.stderr
    assert '+        "UserPromptSubmit"' in dry.stdout or "UserPromptSubmit" in dry.stdout
    assert settings.read_text() == original  # a dry run writes nothing
    said = dry.stdout + dry.stderr  # what it would do, not what it did (issue 37)
    assert "would add the UserPromptSubmit hook" in said and "added the" not in said

    done = memcli("install", "claude-code", "--project", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    for key in ("$schema", "permissions", "env"):
        assert data[key] == CLAUDE_SETTINGS[key]
    assert data["hooks"]["PreToolUse"] == CLAUDE_SETTINGS["hooks"]["PreToolUse"]
    stop_commands = [h["command"] for g in data["hooks"]["Stop"] for h in g["hooks"]]
    assert stop_commands == ["notify-send done", "memcli hook stop"]
    assert data["hooks"]["SessionStart"] == [
        {
            "matcher": "startup|resume|clear|compact",
            "hooks": [{"type": "command", "command": "memcli hook session-start", "timeout": 10}],
        }
    ]
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == (
        "memcli hook user-prompt-submit"
    )
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers == {**MCP_JSON["mcpServers"], "memcli": {"command": "memcli", "args": ["mcp"]}}

    installed = settings.read_text()
    again = memcli("install", "claude-code", "--project", cwd=project, home=home)
    assert again.returncode == 0 and "already set up" in again.stdout
    assert settings.read_text() == installed  # idempotent

    gone = memcli("uninstall", "claude-code", "--project", cwd=project, home=home)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(settings.read_text()) == CLAUDE_SETTINGS
    assert settings.read_text() == original
    assert (project / ".mcp.json").read_text() == mcp_original
    assert not (home / ".claude").exists()


def test_broken_or_foreign_settings_are_refused(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    broken = '{\n  "permissions": {"allow": ["Bash(ls)"],}\n}\n'
    settings.write_text(broken)
    result = memcli("install", "claude-code", "--project", cwd=project, home=home)
    assert result.returncode == 1
    assert f"{settings}:2:" in result.stderr and "not valid JSON" in result.stderr
    assert settings.read_text() == broken and not (project / ".mcp.json").exists()

    settings.write_text('{"hooks": []}')
    with pytest.raises(MemcliError, match="not an object"):
        install.plan("claude-code", "project", project_dir=project)

    toml = home / ".codex" / "config.toml"
    toml.parent.mkdir(parents=True)
    toml.write_text("model = \n")
    with pytest.raises(MemcliError, match="not valid TOML"):
        install.plan("codex", "user", home=home)

    cursor = project / ".cursor" / "mcp.json"
    write_json(cursor, {"mcpServers": {"memcli": {"command": "python", "args": ["other.py"]}}})
    with pytest.raises(MemcliError, match="does not run `memcli mcp`"):
        install.plan("cursor", "project", project_dir=project)
    with pytest.raises(MemcliError, match="unknown host"):
        install.plan("vim", "user")


@pytest.mark.slow
def test_installed_claude_code_hooks_end_to_end(tmp_path: Path) -> None:
    """`memcli install claude-code --project` in a scratch project, then the settings'
    own commands run as Claude Code runs them (sh -c, JSON on stdin, cwd the project):
    a prompt gets the inject block as hookSpecificOutput, Stop/PreCompact extract with
    src= the session id and never twice, a broken memory.md makes every hook exit 0 with
    nothing on stdout and one stderr line, and the part it could not read is read later."""
    from memcli.services.memory import Memory

    project, home = tmp_path / "shop", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    assert memcli("init", str(project), cwd=project, home=home).returncode == 0
    mem = Memory(project, notify=lambda m: None)
    mem.add("Prefers pytest over unittest, with fixtures", type="preference", importance=0.8)
    mem.index()
    assert memcli("install", "claude-code", "--project", cwd=project, home=home).returncode == 0
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]

    def run(event: str, payload: dict) -> subprocess.CompletedProcess:
        (command,) = [h["command"] for g in hooks[event] for h in g["hooks"]]
        env = dict(os.environ, HOME=str(home), PATH=BIN + os.pathsep + os.environ["PATH"])
        env["CLAUDE_PROJECT_DIR"] = str(project)
        return subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=project,
            env=env,
            timeout=120,
        )

    session = "7c1e0f4a-2b9d-4e8f-a6c3-5d2b8e9f1a07"
    transcript = home / ".claude" / "projects" / "-tmp-shop" / f"{session}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code_session.jsonl", transcript)
    common = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "permission_mode": "default",
    }
    start = run("SessionStart", {**common, "hook_event_name": "SessionStart", "source": "startup"})
    assert start.returncode == 0, start.stderr
    assert "Prefers pytest" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]

    prompt = run(
        "UserPromptSubmit",
        {**common, "hook_event_name": "UserPromptSubmit", "prompt": "How do I test this?"},
    )
    assert prompt.returncode == 0, prompt.stderr
    out = json.loads(prompt.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert (
        out["additionalContext"].startswith("<memory>")
        and "Prefers pytest" in out["additionalContext"]
    )

    stop = {**common, "hook_event_name": "Stop", "stop_hook_active": False}
    assert run("Stop", stop).returncode == 0
    texts = [e.text for e in Memory(project).entries() if e.source == session]
    assert any("setUp methods" in t for t in texts), texts
    memory_md = (project / "memory.md").read_text()
    assert f"src={session}" in memory_md
    assert "hunter2" not in memory_md  # a tool's output is not what the user said
    second = run("Stop", stop)
    assert second.returncode == 0 and "nothing new" in second.stderr
    assert (project / "memory.md").read_text() == memory_md  # the same transcript: nothing

    with transcript.open("a") as handle:
        handle.write((FIXTURES / "claude_code_session_more.jsonl").read_text())
    compact = run("PreCompact", {**common, "hook_event_name": "PreCompact", "trigger": "auto"})
    assert compact.returncode == 0, compact.stderr
    assert any("Postgres 16" in e.text for e in Memory(project).entries() if e.source == session)

    # a broken workspace: every hook exits 0, adds nothing, says why in one stderr line
    turn = {
        "type": "user",
        "isSidechain": False,
        "sessionId": session,
        "message": {"role": "user", "content": "Remember that deploys go out on Tuesdays."},
    }
    with transcript.open("a") as handle:  # something new for PreCompact and Stop to read
        handle.write(json.dumps(turn) + "\n")
    good = (project / "memory.md").read_bytes()
    (project / "memory.md").write_bytes(b"\xff\xfe not text\n" + good)
    for event, payload in {
        "SessionStart": {**common, "hook_event_name": "SessionStart", "source": "resume"},
        "UserPromptSubmit": {**common, "hook_event_name": "UserPromptSubmit", "prompt": "hi"},
        "PreCompact": {**common, "hook_event_name": "PreCompact", "trigger": "manual",
                       "custom_instructions": ""},
        "Stop": {**common, "hook_event_name": "Stop", "stop_hook_active": True},
    }.items():
        failed = run(event, payload)
        assert failed.returncode == 0 and failed.stdout == "", (event, failed)
        assert len(failed.stderr.strip().splitlines()) == 1, (event, failed.stderr)
        assert "nothing was added" in failed.stderr and "memory.md" in failed.stderr, event
    assert (project / "memory.md").read_bytes() == b"\xff\xfe not text\n" + good
    # mended, the next Stop reads the turn the failed ones could not: nothing was skipped
    (project / "memory.md").write_bytes(good)
    assert run("Stop", {**common, "hook_event_name": "Stop"}).returncode == 0
    assert any("Tuesdays" in e.text for e in Memory(project).entries() if e.source == session)


@pytest.mark.parametrize(
    ("did", "dry"),
    [
        ("added the Stop hook: memcli hook stop", "would add the Stop hook: memcli hook stop"),
        ("removed the MCP server 'memcli'", "would remove the MCP server 'memcli'"),
        ("updated [mcp_servers.memcli]", "would update [mcp_servers.memcli]"),
        ("moved something", "would have: moved something"),  # a verb it does not know
    ],
)
def test_a_dry_run_says_what_it_would_do(did: str, dry: str) -> None:
    from memcli.surfaces.cli.commands.setup import would

    assert would(did) == dry
