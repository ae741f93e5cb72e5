"""`memcli install` / `uninstall`, the pure parts: files install created are removed,
user scope, a Codex TOML keeps its comments. On real settings files and with the hooks
run as Claude Code runs them: tests/process/test_install.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.surfaces import install

CODEX_TOML = """# my Codex settings
model = "o4-mini"  # fast enough

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]

[profiles.work]
approval_policy = "never"
"""


def test_files_install_created_are_removed_and_user_scope(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = install.plan("claude-code", "user", home=home, command=["memcli"])
    install.apply(result)
    settings = home / ".claude" / "settings.json"
    assert set(json.loads(settings.read_text())["hooks"]) == set(install.CLAUDE_HOOKS)
    assert any("claude mcp add --scope user memcli -- memcli mcp" in n for n in result.notes)
    install.apply(install.plan("claude-code", "user", remove=True, home=home, command=["memcli"]))
    assert not settings.exists()

    cursor = install.plan("cursor", "project", project_dir=tmp_path, command=["/opt/memcli"])
    install.apply(cursor)
    entry = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["memcli"]
    assert entry == {"command": "/opt/memcli", "args": ["mcp"]}
    assert any("not on PATH" in n for n in cursor.notes)
    install.apply(install.plan("cursor", "project", remove=True, project_dir=tmp_path))
    assert not (tmp_path / ".cursor" / "mcp.json").exists()


def test_codex_toml_keeps_comments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_TOML)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    install.apply(
        install.plan("codex", "user", home=home, command=["memcli"], workspace=str(tmp_path))
    )
    text = config.read_text()
    lines = iter(text.splitlines())  # comments, order and other tables untouched
    assert all(any(line == kept for kept in lines) for line in CODEX_TOML.splitlines() if line)
    import tomllib

    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["memcli"] == {
        "command": "memcli",
        "args": ["-w", str(tmp_path.resolve()), "mcp"],
    }
    assert parsed["mcp_servers"]["docs"]["command"] == "docs-mcp"
    twice = install.plan("codex", "user", home=home, command=["memcli"], workspace=str(tmp_path))
    assert not twice.changes[0].changed
    install.apply(install.plan("codex", "user", remove=True, home=home))
    assert config.read_text() == CODEX_TOML

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    elsewhere = install.plan("codex", "user", home=home, command=["memcli"])
    assert elsewhere.changes[0].path == tmp_path / "codex-home" / "config.toml"


def test_dry_run_diff_names_the_files(tmp_path: Path) -> None:
    """The diff a dry run shows names each file as it is (a new one from /dev/null)."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"A": "1"}}\n')
    result = install.plan("claude-code", "project", project_dir=tmp_path, command=["memcli"])
    changed, created = result.changes
    assert changed.diff().startswith(f"--- {settings}\n+++ {settings}\n")
    assert created.diff().startswith(f"--- /dev/null\n+++ {tmp_path / '.mcp.json'}\n")
