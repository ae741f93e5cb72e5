"""An LLM people already have (issue 26 item 4): `claude-cli` and `codex-cli` against
stand-in executables on PATH that follow each CLI's documented non-interactive output
(`claude -p --output-format json`: one JSON object with `result`; `codex exec --json`:
JSONL events, the answer in the last completed agent message), and `local` against a
real OpenAI-protocol server on 127.0.0.1 without a key. The stand-ins record the prompt
they receive: no prompt carries a secret. The provider and its command are trusted-only."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.adapters.llm import CLIClient, LLMError, client_from
from memcli.services.memory import Memory
from memcli.store.config import LLMSettings, load_settings
from memcli.surfaces.cli.app import app
from tests.support.llm_server import FakeLLM

#: `claude -p --output-format json`: the prompt from stdin, one JSON object printed
CLAUDE = """#!{python}
import json, os, sys
args = sys.argv[1:]
prompt = sys.stdin.read()
with open(os.environ["STANDIN_LOG"], "a") as log:
    log.write(json.dumps({{"argv": args, "prompt": prompt, "cwd": os.getcwd()}}) + "\\n")
if args[:3] != ["-p", "--output-format", "json"]:
    print("usage: claude -p --output-format json", file=sys.stderr)
    sys.exit(2)
mode = os.environ.get("STANDIN_MODE", "ok")
if mode == "exit":
    print("Error: not logged in", file=sys.stderr)
    sys.exit(1)
print(json.dumps({{
    "type": "result",
    "subtype": "error_during_execution" if mode == "error" else "success",
    "is_error": mode == "error",
    "result": "overloaded" if mode == "error" else os.environ["STANDIN_ANSWER"],
    "session_id": "s-1", "num_turns": 1, "duration_ms": 5, "total_cost_usd": 0.0,
}}))
"""

#: `codex exec --json ... -`: the prompt from stdin, JSONL events printed
CODEX = """#!{python}
import json, os, sys
args = sys.argv[1:]
prompt = sys.stdin.read()
with open(os.environ["STANDIN_LOG"], "a") as log:
    log.write(json.dumps({{"argv": args, "prompt": prompt, "cwd": os.getcwd()}}) + "\\n")
if args[:2] != ["exec", "--json"] or args[-1] != "-":
    sys.exit(2)
events = [
    {{"type": "thread.started", "thread_id": "0199a213"}},
    {{"type": "turn.started"}},
    {{"type": "item.completed", "item": {{"id": "item_0", "type": "reasoning", "text": "**Thinking**"}}}},
]
if os.environ.get("STANDIN_MODE") == "error":
    events.append({{"type": "turn.failed", "error": {{"message": "stream disconnected"}}}})
else:
    events.append({{"type": "item.completed", "item": {{"id": "item_1", "type": "agent_message",
                   "text": os.environ["STANDIN_ANSWER"]}}}})
    events.append({{"type": "turn.completed", "usage": {{"input_tokens": 9, "output_tokens": 3}}}})
for event in events:
    print(json.dumps(event))
"""

SECRET = "hunter2!x9Q"


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`claude` and `codex` stand-ins first on PATH; returns their prompt log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, source in (("claude", CLAUDE), ("codex", CODEX)):
        path = bin_dir / name
        path.write_text(source.format(python=sys.executable))
        path.chmod(0o755)
    log = tmp_path / "prompts.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_LOG", str(log))
    monkeypatch.setenv("STANDIN_ANSWER", json.dumps({"ok": True}))
    return log


def calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.parametrize("provider", ["claude-cli", "codex-cli"])
def test_each_cli_is_run_as_documented_and_its_answer_read(
    provider: str, standins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = client_from(LLMSettings(provider=provider, model="small"))
    assert isinstance(client, CLIClient)
    assert client.chat_json("Return JSON.", f"the password is {SECRET}") == {"ok": True}
    (call,) = calls(standins)
    assert "Return JSON." in call["prompt"] and "--model" in call["argv"]
    # no tools: one turn for claude, a read-only sandbox for codex
    assert {"--max-turns", "--sandbox"} & set(call["argv"])
    assert SECRET not in call["prompt"] and "[redacted" in call["prompt"]
    assert SECRET not in " ".join(call["argv"])  # the prompt never on the command line
    monkeypatch.setenv("STANDIN_ANSWER", '```json\n{"fenced": 1}\n```')
    assert client.chat_json("s", "u") == {"fenced": 1}
    monkeypatch.setenv("STANDIN_ANSWER", "Sure! Here it is")
    with pytest.raises(LLMError, match="not JSON"):
        client.chat_json("s", "u")
    monkeypatch.setenv("STANDIN_MODE", "error")
    with pytest.raises(LLMError, match="overloaded|stream disconnected"):
        client.chat_json("s", "u")


def test_a_failing_or_missing_cli_is_a_clear_error(
    standins: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STANDIN_MODE", "exit")
    claude = client_from(LLMSettings(provider="claude-cli"))
    assert claude is not None
    with pytest.raises(LLMError, match="claude failed: Error: not logged in"):
        claude.chat_json("s", "u")
    missing = client_from(LLMSettings(provider="codex-cli", command=str(tmp_path / "no-codex")))
    assert missing is not None
    with pytest.raises(LLMError, match="not found on PATH") as info:
        missing.chat_json("s", "u")
    assert "nothing was changed" in info.value.message


def test_local_server_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-abcdefghijklmnop1234567890")
    with FakeLLM() as llm:
        llm.answer = {"memories": []}
        client = client_from(LLMSettings(provider="local", base_url=llm.url, model="llama3.2"))
        assert client is not None
        assert client.chat_json("s", f"my password is {SECRET}") == {"memories": []}
        request = llm.requests[-1]
        assert request["auth"] is None  # a local server gets no key
        assert request["body"]["model"] == "llama3.2"
        assert SECRET not in json.dumps(request["body"])
    default = client_from(LLMSettings(provider="local", model="m"))
    assert default is not None and default.base_url == "http://127.0.0.1:11434/v1"


@pytest.mark.slow  # extract and reflect load the embedding model
def test_extract_and_reflect_through_claude_never_send_a_secret(
    empty_workspace: Path, standins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end in a trusted workspace: extract sends the transcript, reflect sends the
    entries (one of them allowed to hold a password, `secret=ok`)."""
    root = empty_workspace
    (root / "memcli.toml").write_text('[llm]\nprovider = "claude-cli"\ntimeout = 20\n')
    runner = CliRunner()
    assert runner.invoke(app, ["-w", str(root), "trust"]).exit_code == 0
    answer = {"memories": [{"text": "Deploys on Fridays", "type": "fact", "importance": 0.8}]}
    monkeypatch.setenv("STANDIN_ANSWER", json.dumps(answer))
    mem = Memory(root)
    talk = [{"role": "user", "content": f"I deploy on Fridays. The staging password is {SECRET}"}]
    decisions = mem.extract(talk, source="chat-1")
    assert [d.candidate.text for d in decisions if d.action == "ADD"] == ["Deploys on Fridays"]
    mem.add(f"The staging password is {SECRET}", allow_secret=True, by="person")
    for text in ("Runs every morning", "Trains for a marathon", "Bought running shoes"):
        mem.add(text, importance=0.8, by="person")
    monkeypatch.setenv("STANDIN_ANSWER", json.dumps({"questions": [], "insights": []}))
    mem.reflect(force=True, dry_run=True)
    sent = calls(standins)
    assert len(sent) >= 2 and any("Trains for a marathon" in c["prompt"] for c in sent)
    assert all(SECRET not in c["prompt"] for c in sent)


def test_the_provider_and_its_command_are_trusted_only(empty_workspace: Path) -> None:
    root = empty_workspace
    (root / "memcli.toml").write_text(
        '[llm]\nprovider = "codex-cli"\ncommand = "/tmp/not-codex --yolo"\nmodel = "m"\n'
    )
    settings = load_settings(root)
    assert settings.llm.provider == "none" and settings.llm.command == ""
    assert {"llm.provider", "llm.command", "llm.model"} <= set(settings.ignored)
    assert settings.llm.model == ""  # an agent CLI's argument: trusted-only (issue 35)
