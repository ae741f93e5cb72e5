"""memcli export / import (issue 20 §4): people bring their memory and leave with it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.surfaces.cli.app import app
from tests.support.cli import envelope
from tests.support.samples import CLAUDE_MD


def test_export_then_import_round_trips(
    workspace: Path, tmp_path: Path, runner: CliRunner, session_export  # noqa: ANN001 - the model
) -> None:
    """(The import embeds with the model: its export made once for the run, session_export.)"""
    exported = runner.invoke(app, ["-w", str(workspace), "export", "--format", "jsonl"])
    assert exported.exit_code == 0, exported.output
    dump = tmp_path / "memory.jsonl"
    dump.write_text(exported.stdout)
    source = Memory(workspace).entries()
    target = tmp_path / "new"
    assert runner.invoke(app, ["init", str(target)]).exit_code == 0
    # one's own export: --as-mine (else its corrections would wait for `memcli review`)
    result = runner.invoke(app, ["-w", str(target), "import", str(dump), "--as-mine", "--json"])
    assert result.exit_code == 0, result.output
    assert all(i["action"] == "add" for i in envelope(result.stdout)["items"])
    imported = Memory(target).entries()
    assert sorted((e.text, e.type) for e in imported) == sorted((e.text, e.type) for e in source)
    assert all(e.meta["src"] == "import:memory.jsonl" for e in imported)
    again = runner.invoke(app, ["-w", str(target), "import", str(dump), "--json"])
    assert {i["action"] for i in envelope(again.stdout)["items"]} == {"exists"}
    assert len(Memory(target).entries()) == len(source)
    for fmt in ("markdown", "mem0"):
        out = runner.invoke(app, ["-w", str(workspace), "export", "--format", fmt])
        assert out.exit_code == 0 and "Prefers pytest over unittest" in out.stdout


def test_import_dry_run_provenance_and_bad_files(
    workspace: Path, tmp_path: Path, runner: CliRunner
) -> None:
    claude = tmp_path / "CLAUDE.md"
    claude.write_text(CLAUDE_MD)
    before = (workspace / "memory.md").read_bytes()
    dry = runner.invoke(app, ["-w", str(workspace), "import", str(claude), "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    actions = [(i["action"], i["text"]) for i in envelope(dry.stdout)["items"]]
    assert ("add", "Uses ruff for linting") in actions
    assert (workspace / "memory.md").read_bytes() == before  # a dry run writes nothing
    assert runner.invoke(app, ["-w", str(workspace), "import", str(claude)]).exit_code == 0
    mem = Memory(workspace)
    ruff = next(e for e in mem.entries() if e.text == "Uses ruff for linting")
    assert ruff.type == "preference" and ruff.provenance == "person"
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(
        json.dumps(
            {
                "results": [
                    {"id": "x", "memory": "Is allergic to peanuts", "metadata": {"type": "fact"}},
                ]
            }
        )
    )
    assert runner.invoke(app, ["-w", str(workspace), "import", str(mem0)]).exit_code == 0
    peanuts = next(e for e in Memory(workspace).entries() if e.text == "Is allergic to peanuts")
    # an import of any format is filed alike (issue 35 item 18; DESIGN §4): the person's
    # unless it asks for a correction, a pin or importance ≥ 0.9 (held for review)
    assert peanuts.provenance == "person" and peanuts.meta["by"] == "person"
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text": "ok"}\n{not json\n')
    before = (workspace / "memory.md").read_bytes()
    bad = runner.invoke(app, ["-w", str(workspace), "import", str(broken)])
    assert bad.exit_code == 1 and "broken.jsonl:2" in bad.output
    assert (workspace / "memory.md").read_bytes() == before
    assert runner.invoke(app, ["-w", str(workspace), "export", "--format", "yaml"]).exit_code == 2


def test_imported_dates_become_created_and_a_bad_one_writes_nothing(
    workspace: Path, tmp_path: Path, runner: CliRunner
) -> None:
    dated = tmp_path / "memories.txt"
    dated.write_text("1. [2024-05-02]. Prefers concise answers.\n2. [2024-06-11]. Has a dog.\n")
    result = runner.invoke(app, ["-w", str(workspace), "import", str(dated), "--json"])
    assert result.exit_code == 0, result.output
    items = envelope(result.stdout)["items"]
    assert [(i["action"], i["created"]) for i in items] == [
        ("add", "2024-05-02"),
        ("add", "2024-06-11"),
    ]
    entry = Memory(workspace).get(items[0]["id"]).entry
    assert entry.meta["created"] == "2024-05-02" and entry.meta["src"] == "import:memories.txt"
    assert f"id={entry.id} created=2024-05-02 " in (workspace / "memory.md").read_text()
    exported = runner.invoke(app, ["-w", str(workspace), "export"])  # and out again
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert {r["text"]: r["created"] for r in rows}["Has a dog."] == "2024-06-11"
    before = {p.name: p.read_bytes() for p in workspace.glob("*.md")}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "Fine"}\n{"text": "Likes tea", "created": "last spring"}\n')
    refused = runner.invoke(app, ["-w", str(workspace), "import", str(bad), "--json"])
    assert refused.exit_code == 1, refused.output
    error = json.loads(refused.stdout)["error"]
    assert error["message"] == "bad.jsonl:2: created 'last spring' is not a date in the past"
    assert "bad.jsonl:2" in refused.stderr
    assert {p.name: p.read_bytes() for p in workspace.glob("*.md")} == before
