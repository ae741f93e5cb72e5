"""`memcli hook EVENT`, the pure parts: what is kept of a Claude Code transcript, the
context a prompt gives, arguments and JSON, the workspace a hook resolves. The hooks run
as the host runs them: tests/process/test_hooks.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.store.workspace import resolve_workspace
from memcli.surfaces import hooks
from tests.support.env import FIXTURES

# ------------------------------------------------------------------ pure parts


def test_transcript_keeps_only_what_was_said() -> None:
    lines = (FIXTURES / "claude_code_session.jsonl").read_text().splitlines()
    lines += (FIXTURES / "claude_code_session_more.jsonl").read_text().splitlines()
    messages = hooks.transcript_messages(lines)
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant", "user", "assistant"]
    said = " ".join(m["content"] for m in messages)
    assert "I prefer pytest fixtures" in said and "Postgres 16" in said
    for absent in ("hunter2", "<command-name>", "Caveat:", "thinking is not", "I prefer YAML"):
        assert absent not in said, absent  # tool output, commands, meta, thinking, subagents
    injected = '{"type":"user","message":{"role":"user","content":"<memory>\\n- Likes tea\\n</memory>\\nhi"}}'
    assert hooks.transcript_messages([injected, "not json", "[1]", ""]) == [
        {"role": "user", "content": "hi"}
    ]


def test_context_puts_the_prompt_first() -> None:
    transcript = str(FIXTURES / "claude_code_session.jsonl")
    payload = {"prompt": "Which database does staging use?\x1b[31m", "transcript_path": transcript}
    context = hooks.hook_context("user-prompt-submit", payload)
    assert context.startswith("Which database does staging use?")
    assert "\x1b" not in context and "I prefer pytest fixtures" in context
    assert hooks.hook_context("session-start", {"transcript_path": "/nonexistent"}) == ""


def test_args_and_json() -> None:
    assert hooks.parse_args(["stop"]) == ("stop", 0, 50.0)
    assert hooks.parse_args(["user-prompt-submit", "--max-tokens=300", "--timeout", "2"]) == (
        "user-prompt-submit",
        300,
        2.0,
    )
    for bad in ([], ["bogus"], ["stop", "extra"], ["stop", "--timeout"], ["stop", "--timeout=0"]):
        with pytest.raises(hooks.HookError):
            hooks.parse_args(bad)
    assert hooks.loads(' {"a": [1, 2.5, "é", null, true]} ') == {"a": [1, 2.5, "é", None, True]}
    for bad in ("{", "{}x", "", '"abc'):
        with pytest.raises(ValueError):
            hooks.loads(bad)
    out = json.loads(hooks.hook_output("UserPromptSubmit", '<memory>\n- é "x"\n</memory>'))
    assert out["hookSpecificOutput"]["additionalContext"].endswith('"x"\n</memory>')


def test_workspace_resolution_matches_the_cli(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "memory.md").write_text("- x\n")
    other = tmp_path / "other"
    other.mkdir()
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}
    cases = [
        (None, env, ws / "src" / "deep"),
        (None, env, other),
        (None, {**env, "MEMCLI_WORKSPACE": str(other)}, ws),
        (str(other), env, ws),
        (None, {"HOME": str(tmp_path)}, other),
    ]
    for flag, environ, cwd in cases:
        expected = resolve_workspace(flag, env=environ, cwd=cwd)
        assert hooks.resolve_root(flag, environ, str(cwd)) == str(expected), (flag, cwd)
