"""Extraction of memories from English and Chinese transcripts, offline."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memcli.cli import app
from memcli.extract import candidates, plan
from memcli.memory import Memory
from memcli.models import Entry
from memcli.trust import trust

EN = [
    {"role": "system", "content": "You are helpful"},
    {
        "role": "user",
        "content": "Please remember that the staging database lives on db-stage-2. "
        "I prefer pytest over unittest for Python tests.",
    },
    {"role": "assistant", "content": "Noted. I prefer nothing."},
    {"role": "user", "content": "My favourite editor is Helix. Maybe I like tabs, not sure."},
    {"role": "tool", "content": "I prefer tool output"},
    {
        "role": "user",
        "content": [{"type": "text", "text": "Actually, the on-call rotation is one week long."}],
    },
]
ZH = [
    {"role": "user", "content": "记住：周五下午不发布。我喜欢用中文讨论架构设计，代码注释用英文。"},
    {"role": "assistant", "content": "好的"},
    {"role": "user", "content": "不对，应该是周四下午以后不发布。我可能喜欢深色主题。"},
]


def test_candidates_are_explicit_user_statements() -> None:
    found = {(c.type, c.text) for c in candidates(EN)}
    assert found == {
        ("fact", "The staging database lives on db-stage-2"),
        ("preference", "Prefers pytest over unittest for Python tests"),
        ("fact", "User's favourite editor is Helix"),
        ("correction", "The on-call rotation is one week long"),
    }  # hedged "maybe I like tabs" and assistant/tool messages are not kept
    zh = {(c.type, c.text) for c in candidates(ZH)}
    assert zh == {
        ("fact", "周五下午不发布"),
        ("preference", "喜欢用中文讨论架构设计，代码注释用英文"),
        ("correction", "应该是周四下午以后不发布"),
    }
    assert all(c.importance >= 0.7 for c in candidates(EN) + candidates(ZH))


def test_plan_add_update_noop() -> None:
    existing = [
        Entry(
            "m1",
            "Prefers pytest over unittest for Python tests, with fixtures",
            "preference",
            "memory.md",
            1,
            {},
        ),
        Entry("m2", "User's favourite editor is Vim", "fact", "memory.md", 2, {}),
    ]
    decisions = {d.candidate.text: d for d in plan(candidates(EN), existing)}
    assert decisions["Prefers pytest over unittest for Python tests"].action == "NOOP"
    helix = decisions["User's favourite editor is Helix"]
    assert helix.action == "UPDATE" and helix.entry_id == "m2"
    assert decisions["The on-call rotation is one week long"].action == "ADD"


def test_extract_through_cli(tmp_path: Path, workspace: Path) -> None:
    runner = CliRunner()
    transcript = tmp_path / "conv-42.json"
    transcript.write_text(json.dumps(EN))
    before = (workspace / "memory.md").read_bytes()
    dry = runner.invoke(
        app, ["-w", str(workspace), "extract", "--messages", str(transcript), "--dry-run", "--json"]
    )
    assert dry.exit_code == 0, dry.output
    assert {d["action"] for d in json.loads(dry.stdout)} <= {"ADD", "NOOP", "UPDATE"}
    assert (workspace / "memory.md").read_bytes() == before  # dry run writes nothing
    first = json.loads(
        runner.invoke(
            app, ["-w", str(workspace), "extract", "--messages", str(transcript), "--json"]
        ).stdout
    )
    added = [d for d in first if d["action"] == "ADD"]
    assert len(added) >= 3
    mem = Memory(workspace)
    stored = mem.get(added[0]["id"]).entry
    assert stored.source == "conv-42" and stored.importance >= 0.7
    second = json.loads(
        runner.invoke(
            app, ["-w", str(workspace), "extract", "--messages", str(transcript), "--json"]
        ).stdout
    )
    assert {d["action"] for d in second} == {"NOOP"}
    zh = tmp_path / "zh.jsonl"
    zh.write_text("\n".join(json.dumps(m, ensure_ascii=False) for m in ZH))
    result = json.loads(
        runner.invoke(
            app, ["-w", str(workspace), "extract", "--messages", str(zh), "--json"]
        ).stdout
    )
    by_text = {d["text"]: d["action"] for d in result}
    assert by_text["喜欢用中文讨论架构设计，代码注释用英文"] == "NOOP"  # already in the sample
    assert by_text["周五下午不发布"] == "ADD" and by_text["应该是周四下午以后不发布"] == "ADD"
    assert "应该是周四下午以后不发布" in (workspace / "memory.md").read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    before = (workspace / "memory.md").read_bytes()
    failed = runner.invoke(app, ["-w", str(workspace), "extract", "--messages", str(bad)])
    assert failed.exit_code == 1 and "not JSON" in failed.stderr
    assert (workspace / "memory.md").read_bytes() == before


def test_extract_with_the_llm(tmp_path: Path, workspace: Path) -> None:
    import pytest

    from tests.llm_server import FakeLLM

    runner = CliRunner()
    transcript = tmp_path / "conv-7.json"
    transcript.write_text(json.dumps(EN))
    with FakeLLM() as llm:
        (workspace / "memcli.toml").write_text(llm.toml())
        trust(workspace)  # a workspace's own LLM endpoint applies once approved
        llm.answer = {
            "memories": [
                {"text": "Uses Helix as the main editor", "type": "preference", "importance": 0.8},
                {"text": "Staging database host is db-stage-2", "type": "fact", "importance": 0.95},
                {"text": "Mentioned the weather", "type": "fact", "importance": 0.2},
            ]
        }
        result = runner.invoke(
            app, ["-w", str(workspace), "extract", "--messages", str(transcript), "--json"]
        )
        assert result.exit_code == 0, result.output
        decisions = json.loads(result.stdout)
        assert [(d["action"], d["text"]) for d in decisions] == [
            ("ADD", "Uses Helix as the main editor"),
            ("ADD", "Staging database host is db-stage-2"),
        ]  # importance 0.2 dropped
        request = llm.requests[-1]
        assert request["path"] == "/v1/chat/completions"
        assert request["body"]["model"] == "test-model"
        assert "I prefer tool output" not in request["body"]["messages"][1]["content"]
        assert Memory(workspace).get(decisions[0]["id"]).entry.source == "conv-7"
        again = json.loads(
            runner.invoke(
                app, ["-w", str(workspace), "extract", "--messages", str(transcript), "--json"]
            ).stdout
        )
        assert {d["action"] for d in again} == {"NOOP"}

        before = {p.name: p.read_bytes() for p in workspace.glob("*.md")}
        for mode, message in (
            ("garbage", "not JSON"),
            ("500", "HTTP 500"),
            ("slow", "cannot reach"),
        ):
            llm.mode = mode
            failed = runner.invoke(
                app, ["-w", str(workspace), "extract", "--messages", str(transcript)]
            )
            assert failed.exit_code == 1, (mode, failed.output)
            assert message in failed.stderr and "nothing was changed" in failed.stderr
            assert {p.name: p.read_bytes() for p in workspace.glob("*.md")} == before
        llm.mode = "ok"
        llm.answer = {"memories": "not a list"}
        failed = runner.invoke(
            app, ["-w", str(workspace), "extract", "--messages", str(transcript)]
        )
        assert failed.exit_code == 1 and "memories" in failed.stderr
    with pytest.raises(Exception, match="needs base_url"):
        (workspace / "memcli.toml").write_text('[llm]\nprovider = "openai"\n')
        trust(workspace)
        Memory(workspace).extract(EN)
