"""Importing ChatGPT's conversations.json (issue 29): detected and named, the user's
statements through extract's decisions (a dry run shows them), the assistant's replies
never remembered, and an imported conversation never in a session-start block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.adapters.portability import CONVERSATIONS, conversation_kind, detect_format
from memcli.surfaces.cli.app import app
from tests.support.cli import as_json, failure, snapshot

ASSISTANT = "Many people prefer spaces; I always recommend gofmt."


def chatgpt(title: str, start: int, messages: list[tuple[str, str]]) -> dict:
    """One conversation as ChatGPT exports it: a mapping of nodes, current_node last."""
    mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    previous = "root"
    for number, (role, text) in enumerate(messages):
        node = f"{title[:4]}-{number}"
        mapping[previous]["children"] = [node]
        mapping[node] = {
            "id": node,
            "parent": previous,
            "children": [],
            "message": {
                "id": node,
                "author": {"role": role},
                "create_time": start + 60 * number,
                "content": {"content_type": "text", "parts": [text]},
            },
        }
        previous = node
    return {"title": title, "create_time": start, "mapping": mapping, "current_node": previous}


EXPORT = [
    chatgpt(
        "Editor setup",
        1714640000,
        [
            ("user", "I prefer tabs over spaces in Go code."),
            ("assistant", ASSISTANT),
            ("user", "Remember that my main editor is Neovim."),
        ],
    ),
    chatgpt(
        "Trip",
        1714740000,
        [("user", "What should I pack for Lisbon?"), ("assistant", "Light layers and shoes.")],
    ),
]


@pytest.fixture
def export_file(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(EXPORT))
    return path


@pytest.mark.parametrize(
    "data, kind",
    [
        (EXPORT, "a ChatGPT export"),
        (EXPORT[0], "a ChatGPT export"),
        ([{"role": "user", "content": "hi"}], "chat messages"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "chat messages"),
        ({"sample_id": "x", "conversation": {}}, "a LoCoMo conversation"),
        ({"results": [{"memory": "Likes tea"}]}, None),
        ([{"memory": "Likes tea"}], None),
        ("not json", None),
    ],
)
def test_conversation_files_are_told_from_memory_exports(data: object, kind: str | None) -> None:
    text = data if isinstance(data, str) else json.dumps(data)
    assert conversation_kind(text) == kind
    assert (detect_format(text, "conversations.json") == CONVERSATIONS) is (kind is not None)


@pytest.mark.slow
def test_import_detects_a_chatgpt_export_and_extracts_the_users_statements(
    workspace: Path, runner: CliRunner, export_file: Path, exported: object
) -> None:
    def run(*args: str):  # noqa: ANN202
        return runner.invoke(app, ["-w", str(workspace), "import", str(export_file), *args])

    before = snapshot(workspace)
    for args in ([], ["--format", "chatgpt"]):
        planned = run(*args, "--dry-run", "--json")
        data = as_json(planned)
        assert data["found"] == {
            "kind": "a ChatGPT export",
            "conversations": 2,
            "user_messages": 3,
            "assistant_replies": 2,
        }
        texts = [d["text"] for d in data["decisions"]]
        assert any("tabs over spaces" in t for t in texts)
        assert any("Neovim" in t for t in texts)
        assert not any("gofmt" in t or "{" in t for t in texts)  # no reply, no raw JSON
        assert "a ChatGPT export: 2 conversation(s)" in planned.stderr
    assert snapshot(workspace) == before  # dry runs write nothing
    done = run()
    assert done.exit_code == 0, done.output
    memory = (workspace / "memory.md").read_text()
    assert "tabs over spaces" in memory and "Neovim" in memory
    assert "gofmt" not in memory and "Lisbon" not in memory  # a question is no statement


def test_format_chatgpt_on_other_json_is_refused(
    workspace: Path, runner: CliRunner, tmp_path: Path
) -> None:
    other = tmp_path / "mem0.json"
    other.write_text(json.dumps({"results": [{"memory": "Likes tea"}]}))
    before = snapshot(workspace)
    refused = runner.invoke(
        app, ["-w", str(workspace), "import", str(other), "--format", "chatgpt", "--json"]
    )
    assert refused.exit_code == 1
    assert "JSON" in failure(refused.stdout)["message"]
    assert snapshot(workspace) == before


def test_an_imported_conversation_keeps_the_people_and_stays_out_of_session_start(
    workspace: Path, runner: CliRunner, export_file: Path
) -> None:
    imported = runner.invoke(
        app, ["-w", str(workspace), "import", str(export_file), "--conversation", "--json"]
    )
    data = as_json(imported)
    assert [c["turns"] for c in data["conversations"]] == [2, 1]  # the user's turns only
    logs = "".join(p.read_text() for p in (workspace / "conversations").glob("*.md"))
    assert "tabs over spaces" in logs and "gofmt" not in logs
    block = as_json(
        runner.invoke(app, ["-w", str(workspace), "inject", "--max-tokens", "8000", "--json"])
    )
    files = {e["id"]: e for e in block["entries"]}
    assert files and not any("tabs over spaces" in e["text"] for e in files.values())
    assert not any("Lisbon" in e["text"] for e in files.values())
