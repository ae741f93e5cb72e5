"""Inject end to end with the real model and the CLI: the seed example, context sources
and errors, pinned entries and corrections, access counts, no unrelated filler, and
token estimates when tiktoken is missing. The pure parts: tests/unit/test_inject.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.adapters.tokens import EstimateCounter, get_counter
from memcli.surfaces.cli.app import app
from tests.support.cli import envelope

COUNTER = get_counter("cl100k_base")


def test_estimate_when_tiktoken_missing(workspace: Path) -> None:
    code = (
        "import sys; sys.modules['tiktoken'] = None\n"
        "from memcli.surfaces.cli.app import main; sys.argv = ['memcli', '-w', sys.argv[1], 'inject',"
        " '--max-tokens', '60']; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "estimates" in result.stderr and result.stdout.startswith("<memory>")
    assert EstimateCounter("x").count("abcdef") == 2


@pytest.mark.slow
def test_seed_example_through_cli(runner: CliRunner, workspace: Path) -> None:
    def chosen(query: str) -> list[str]:
        result = runner.invoke(
            app, ["-w", str(workspace), "inject", "-q", query, "--max-tokens", "150", "--json"]
        )
        assert result.exit_code == 0, result.output
        data = envelope(result.stdout)
        assert data["tokens"] <= 150 and data["budget"] == 150
        return [e["id"] for e in data["entries"] if e["type"] != "correction"]

    python = chosen("How should I write Python tests?")
    assert python[0] == "m8f3a2c1" and "l2c8a4e1" in python[:4]
    nextjs = chosen("How to optimize my Next.js app?")
    assert nextjs[0] in {"m4f6b1d9", "m0a9e3c5", "l0d5c7f3", "l25ed624c7ecb725c"}
    assert "m8f3a2c1" not in nextjs[:3]


@pytest.mark.slow
def test_cli_inject_sources_and_errors(runner: CliRunner, workspace: Path, tmp_path: Path) -> None:
    base = ["-w", str(workspace), "inject"]
    no_context = runner.invoke(app, [*base, "--max-tokens", "100"])
    assert no_context.exit_code == 0 and no_context.stdout.startswith("<memory>")
    assert COUNTER.count(no_context.stdout.rstrip("\n")) <= 100
    assert "Corrections" in no_context.stdout  # corrections always come first
    stdin = runner.invoke(app, [*base, "-", "--max-tokens", "200"], input="docker images")
    assert stdin.exit_code == 0 and "Docker" in stdin.stdout
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "how do I profile python?"}]))
    from_messages = runner.invoke(
        app, [*base, "--messages", str(transcript), "--max-tokens", "120"]
    )
    assert from_messages.exit_code == 0 and "py-spy" in from_messages.stdout
    context_file = tmp_path / "ctx.txt"
    context_file.write_text("react hooks bug")
    from_file = runner.invoke(app, [*base, "--context-file", str(context_file), "--format", "xml"])
    assert from_file.exit_code == 0 and "<entry id=" in from_file.stdout
    assert runner.invoke(app, [*base, "--max-tokens", "2"]).exit_code == 1
    assert runner.invoke(app, [*base, "-q", "a", "--messages", str(transcript)]).exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("nope")
    result = runner.invoke(app, [*base, "--messages", str(bad)])
    assert result.exit_code == 1 and "not JSON" in result.stderr
    assert runner.invoke(app, [*base, "--format", "yaml"]).exit_code == 2  # a usage error


@pytest.mark.slow
def test_pinned_in_every_block_corrections_where_relevant(workspace: Path) -> None:
    """A pinned entry leads every block; the staging-database correction leads the
    blocks it is relevant to and stays out of the others (issue 38 item 7)."""
    from memcli.services.memory import Memory

    mem = Memory(workspace, notify=lambda m: None)
    pinned = mem.add("Never deploy on Fridays", type="preference", pin=True, by="person").entry
    for budget in (60, 300, 2000):
        packed = mem.inject("How should I write Python tests?", max_tokens=budget)
        ids = [c.entry.id for c in packed.chosen]
        assert ids[0] == pinned.id and "m3a6d0c9" not in ids
        assert packed.tokens <= budget
        packed = mem.inject("Which Postgres version does staging run?", max_tokens=budget)
        ids = [c.entry.id for c in packed.chosen]
        assert set(ids[:2]) == {pinned.id, "m3a6d0c9"}  # pinned and the correction lead
        assert packed.tokens <= budget


def test_injected_entries_count_as_accessed(workspace: Path) -> None:
    from memcli.store.access import AccessStats

    runner = CliRunner()
    stats = AccessStats(workspace / ".memcli")
    quiet = runner.invoke(
        app, ["-w", str(workspace), "inject", "--max-tokens", "300", "--no-touch", "--json"]
    )
    assert quiet.exit_code == 0, quiet.output
    assert stats.load() == {}
    result = runner.invoke(app, ["-w", str(workspace), "inject", "--max-tokens", "300", "--json"])
    chosen = {e["id"] for e in envelope(result.stdout)["entries"]}
    assert chosen and set(stats.load()) == chosen
    assert all(a.count == 1 for a in stats.load().values())


def _profile_or_priority(entry: dict, texts: dict[str, dict]) -> bool:
    meta = texts[entry["id"]]
    return (
        entry["type"] == "correction"
        or meta.get("pin") == "true"
        or (entry["type"] == "preference" and float(meta.get("imp", 0.5)) >= 0.9)
    )


@pytest.mark.slow
def test_no_unrelated_filler(runner: CliRunner, workspace: Path) -> None:
    """DESIGN §4: every entry earns its place. "python tests" in 120 tokens holds what is
    about Python tests, not "Has a cat named Miso"; an off-topic context gets only pinned
    entries and profile entries (not a correction about something else), and a block
    shorter than the budget."""
    base = ["-w", str(workspace), "inject", "--json", "-q"]
    result = runner.invoke(app, [*base, "python tests", "--max-tokens", "120"])
    assert result.exit_code == 0, result.output
    data = envelope(result.stdout)
    assert "cat" not in data["block"].lower() and data["tokens"] <= 120
    ids = [e["id"] for e in data["entries"]]
    assert "m8f3a2c1" in ids and "l2c8a4e1" in ids  # pytest preference, pytest skill
    # the context as a plain argument, as search takes its query, is the same request
    plain = runner.invoke(
        app, ["-w", str(workspace), "inject", "--json", "python tests", "--max-tokens", "120"]
    )
    assert plain.exit_code == 0, plain.output
    assert [e["id"] for e in envelope(plain.stdout)["entries"]] == ids
    both = runner.invoke(app, ["-w", str(workspace), "inject", "python tests", "-q", "x"])
    assert both.exit_code == 2 and "give one of them" in both.output

    from memcli.services.memory import Memory

    meta = {e.id: e.meta for e in Memory(workspace).entries()}
    for context in ("what's the capital of Peru", "Give me a recipe for banana bread"):
        result = runner.invoke(app, [*base, context, "--max-tokens", "2000"])
        assert result.exit_code == 0, result.output
        data = envelope(result.stdout)
        chosen = data["entries"]
        assert all(_profile_or_priority(e, meta) for e in chosen), chosen
        assert {e["id"] for e in chosen} == {"m5d1e7b3"}  # the profile entry only
        assert data["tokens"] < 100
    # no context: the importance / confidence / recency fallback still fills the block
    fallback = envelope(runner.invoke(app, ["-w", str(workspace), "inject", "--json"]).stdout)
    assert len(fallback["entries"]) == len(meta)
