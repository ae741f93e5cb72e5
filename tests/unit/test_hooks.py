"""`memcli hook EVENT`, the pure parts: what is kept of a Claude Code transcript and which
part of it is new, the context a prompt gives, arguments and JSON, an answer kept under
Claude Code's 10,000 characters, the workspace a hook resolves. The hooks run as the
host runs them: tests/process/test_hooks.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.store.workspace import existing_root, resolve_workspace
from memcli.surfaces import hook_positions, hooks, transcript
from tests.support.env import FIXTURES

# ------------------------------------------------------------------ pure parts


def test_transcript_keeps_only_what_was_said() -> None:
    lines = (FIXTURES / "claude_code_session.jsonl").read_text().splitlines()
    lines += (FIXTURES / "claude_code_session_more.jsonl").read_text().splitlines()
    messages = transcript.transcript_messages(lines)
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant", "user", "assistant"]
    said = " ".join(m["content"] for m in messages)
    assert "I prefer pytest fixtures" in said and "Postgres 16" in said
    for absent in ("hunter2", "<command-name>", "Caveat:", "thinking is not", "I prefer YAML"):
        assert absent not in said, absent  # tool output, commands, meta, thinking, subagents
    injected = '{"type":"user","message":{"role":"user","content":"<memory>\\n- Likes tea\\n</memory>\\nhi"}}'
    assert transcript.transcript_messages([injected, "not json", "[1]", ""]) == [
        {"role": "user", "content": "hi"}
    ]


def test_context_puts_the_prompt_first() -> None:
    transcript = str(FIXTURES / "claude_code_session.jsonl")
    payload = {"prompt": "Which database does staging use?\x1b[31m", "transcript_path": transcript}
    context = hooks.hook_context("user-prompt-submit", payload)
    assert context.startswith("Which database does staging use?")
    assert "\x1b" not in context and "I prefer pytest fixtures" in context
    assert hooks.hook_context("session-start", {"transcript_path": "/nonexistent"}) == ""


def test_a_transcript_path_under_home_as_the_docs_write_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's hooks reference shows transcript_path as ~/.claude/projects/…"""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "t.jsonl").write_text((FIXTURES / "claude_code_session.jsonl").read_text())
    context = hooks.hook_context("session-start", {"transcript_path": "~/t.jsonl"})
    assert "I prefer pytest fixtures" in context


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
        root, _ = existing_root(flag, environ, str(cwd))  # what hooks.workspace_for calls
        assert root == str(expected), (flag, cwd)


def test_new_lines_and_positions(tmp_path: Path) -> None:
    """The complete lines after an offset (a line being written waits), the offset kept
    per session and transcript, a rewritten transcript read again, a damaged state file
    started afresh."""
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c"')
    lines, start, end = transcript.lines_after(str(path), 0)
    assert lines == ['{"a": 1}', '{"b": 2}'] and (start, end) == (0, 18)
    assert transcript.lines_after(str(path), end) == ([], 18, 18)
    assert transcript.lines_after(str(path), 10_000)[1] == 0  # shorter than the offset
    assert transcript.session_of(str(path), None) == "s1"
    assert transcript.session_of(str(path), "abc") == "abc"

    root = tmp_path / "ws"
    root.mkdir()
    with hook_positions.Positions(str(root)) as positions:
        assert positions.offset("abc", str(path)) == 0
        positions.record("abc", str(path), end)
    with hook_positions.Positions(str(root)) as positions:
        assert positions.offset("abc", str(path)) == 18
        assert positions.offset("abc", str(tmp_path / "moved.jsonl")) == 0
        assert positions.offset("other", str(path)) == 0
    (root / ".memcli" / "hooks.json").write_text('{"sessions": {"abc": 7, "x": {"offset": -3}}')
    with hook_positions.Positions(str(root)) as positions:
        assert positions.offset("abc", str(path)) == 0  # damaged: from the start
    (root / ".memcli" / "hooks.json").write_text('{"sessions": {"abc": 7, "x": {"offset": -3}}}')
    with hook_positions.Positions(str(root)) as positions:
        assert positions.offset("abc", str(path)) == 0 and positions.offset("x", "") == 0


def test_answer_stays_under_the_host_limit() -> None:
    """A block whose answer would pass Claude Code's limit loses its last entries (whole,
    with their continuation lines, and a heading left empty), never its wrapper."""
    entries = [f"- Fact number {i} " + "x" * 80 for i in range(200)]
    block = "\n".join(
        [
            "<memory>",
            "## Known Facts",
            *entries[:150],
            "## Skills",
            *entries[150:],
            "  a continuation line",
            "</memory>",
        ]
    )
    out, left_out = hooks.fitted_output("SessionStart", block, hooks.HOST_OUTPUT_CHARS)
    assert 0 < len(out) <= hooks.HOST_OUTPUT_CHARS and left_out > 50
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("<memory>\n## Known Facts\n- Fact number 0 ")
    assert context.endswith("</memory>") and "## Skills" not in context
    kept = context.splitlines()[2:-1]
    assert kept == entries[: len(kept)] and len(kept) + left_out == 200
    small = "<memory>\n## Known Facts\n- Likes tea\n</memory>"
    assert hooks.fitted_output("UserPromptSubmit", small, 10_000) == (
        hooks.hook_output("UserPromptSubmit", small),
        0,
    )
    cjk = "<memory>\n" + "\n".join(f"- 偏好第{i}条" + "记" * 40 for i in range(300)) + "\n</memory>"
    out, left_out = hooks.fitted_output("UserPromptSubmit", cjk, hooks.HOST_OUTPUT_CHARS)
    assert len(out) <= hooks.HOST_OUTPUT_CHARS and left_out and json.loads(out)


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("喜欢用中文讨论架构设计", "喜欢用中文讨论架构设计"),  # as it is, not \\u559c…
        ("café ☕ naïve", "café ☕ naïve"),
        ('a "quoted" \\ path', '\\"quoted\\" \\\\ path'),  # JSON's own escapes stay
        ("bell\x07 tab\t", "bell\\u0007 tab\\t"),  # control characters escaped
    ],
)
def test_hook_output_keeps_the_characters_it_can(text: str, spelled: str) -> None:
    out = hooks.hook_output("UserPromptSubmit", f"<memory>\n- {text}\n</memory>")
    assert spelled in out and out.endswith("}\n") and "\n" not in out[:-1]
    assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == (
        f"<memory>\n- {text}\n</memory>"
    )


def test_the_answer_is_written_as_utf8_whatever_the_locale() -> None:
    import io

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")  # LANG=C on an older Python
    hooks.emit(stream, hooks.hook_output("SessionStart", "- 喜欢 pytest"))
    assert (
        json.loads(raw.getvalue().decode("utf-8"))["hookSpecificOutput"]["additionalContext"]
        == "- 喜欢 pytest"
    )
