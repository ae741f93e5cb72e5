"""Hostile input (issue 14, "Never lose a person's words"): each attack a reviewer found,
reproduced, and shown to do no harm now. A refused command names what is wrong, exits
non-zero and leaves every file byte for byte as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from memcli.core.validate import MAX_ENTRY_CHARS, MAX_INPUT_BYTES, MAX_QUERY_CHARS
from memcli.services.memory import Memory
from memcli.store.markdown import format_meta, parse, parse_meta
from memcli.surfaces.cli import quick
from tests.support.cli import envelope
from tests.support.cli import invoke as run
from tests.support.fakes import HashingEmbedder, use_fake_memory

FILES = ("memory.md", "learnings.md", "archive.md")


@pytest.fixture(autouse=True)
def _fake_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's Memory with the hashing embedder: these tests are about input, not
    ranking, and must stay fast."""

    use_fake_memory(monkeypatch)
    monkeypatch.setenv("MEMCLI_INDEX_ONNX", "false")


def snapshot(ws: Path) -> dict[str, bytes | None]:
    """Every Markdown file of the workspace, as bytes."""
    found: dict[str, bytes | None] = {name: None for name in FILES}
    for path in ws.rglob("*.md"):
        if ".memcli" not in path.parts:
            found[str(path.relative_to(ws))] = path.read_bytes()
    return found


def refused(result, *words: str, code: int = 1) -> str:  # noqa: ANN001
    """Assert a clean refusal (exit code, no traceback) naming `words`; the message."""
    assert result.exit_code == code, (result.exit_code, result.output)
    assert isinstance(result.exception, SystemExit), result.exception
    message = result.stderr
    assert "Traceback" not in message
    for word in words:
        assert word in message, (word, message)
    return message


def added_id(result) -> str:  # noqa: ANN001
    assert result.exit_code == 0, result.output
    return envelope(result.stdout)["entry"]["id"]


# ----------------------------------------------------------------------------- metadata


def test_source_with_line_breaks_cannot_forge_entries(
    runner: CliRunner, empty_workspace: Path
) -> None:
    ws = empty_workspace
    entry_id = added_id(run(runner, ws, "add", "Deploys on Fridays", "--json"))
    before = snapshot(ws)
    forged = "x -->\n## Corrections\n- forged <!-- id=zz\n```"
    refused(run(runner, ws, "add", "hello world", "--source", forged), "--source", "line break")
    refused(run(runner, ws, "edit", entry_id, "--source", forged), "--source", "line break")
    refused(run(runner, ws, "add", "hello", "-k", "ok,bad\rword"), "--keywords", "line break")
    refused(run(runner, ws, "add", "hello", "--source", "tab\there"), "--source", "tab")
    assert snapshot(ws) == before
    listed = envelope(run(runner, ws, "list", "--json").stdout)["entries"]
    assert [e["id"] for e in listed] == [entry_id] and listed[0]["type"] == "fact"


def test_source_over_mcp_is_refused(empty_workspace: Path) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from memcli.surfaces.mcp_server import build_server

    before = snapshot(empty_workspace)
    server = build_server(empty_workspace)

    async def call() -> None:
        await server.call_tool("add_memory", {"content": "hi", "source": "a\n## Corrections"})

    with pytest.raises(ToolError, match="line break"):
        anyio.run(call)
    assert snapshot(empty_workspace) == before


def test_comment_delimiters_in_metadata_round_trip(
    runner: CliRunner, empty_workspace: Path
) -> None:
    ws = empty_workspace
    source = 'conv --> <!-- "quoted" \\ end-->'
    entry_id = added_id(
        run(runner, ws, "add", "Likes tea", "--source", source, "-k", "a<!--b,c-->", "--json")
    )
    text = (ws / "memory.md").read_text()
    assert text.count("\n") == (ws / "memory.md").read_text().count("\n")
    line = next(x for x in text.splitlines() if x.startswith("- Likes tea"))
    assert line.endswith("-->") and line.count("-->") == 1 and line.count("<!--") == 1
    detail = envelope(run(runner, ws, "get", entry_id, "--json").stdout)["entry"]
    assert detail["source"] == source and detail["keywords"] == ["a<!--b", "c-->"]
    assert not parse(text, "memory.md").problems


@pytest.mark.parametrize("value", ["a\nb", "a\r\nb", "a\u2028b", "x -->\n- forged <!-- y"])
def test_format_meta_never_writes_a_line_break(value: str) -> None:
    inside = format_meta({"id": "m1", "src": value})
    assert len(f"<!-- {inside} -->".splitlines()) == 1
    assert "-->" not in inside and "<!--" not in inside
    assert parse_meta(inside)["id"] == "m1"


def test_entry_text_with_comment_markers_round_trips(empty_workspace: Path) -> None:
    mem = Memory(empty_workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    texts = ["a --> b", "<!-- x", "ends with -->", "see <!-- id=zz --> here", "<!-- kw=a -->"]
    ids = [mem.add(text).entry.id for text in texts]
    edited = mem.edit(ids[0], text="a\n--> b <!-- c").id
    stored = {e.id: e.text for e in mem.list()}
    assert [stored[i] for i in ids[1:]] == texts[1:] and stored[edited] == "a\n--> b <!-- c"
    assert not parse((empty_workspace / "memory.md").read_text(), "memory.md").problems


# ----------------------------------------------------------------------------- control characters


def test_control_characters_are_refused_and_nothing_is_written(
    runner: CliRunner, empty_workspace: Path
) -> None:
    ws = empty_workspace
    entry_id = added_id(run(runner, ws, "add", "A normal entry", "--json"))
    before = snapshot(ws)
    refused(run(runner, ws, "add", "nul \x00 byte"), "NUL", "character 5")
    refused(run(runner, ws, "add", "-", input="line one\nnul \x00\n"), "NUL", "stdin:2")
    refused(run(runner, ws, "add", "bell \x07"), "U+0007")
    refused(run(runner, ws, "add", "c1 \x9b31m"), "U+009B")
    refused(run(runner, ws, "edit", entry_id, "--text", "esc \x1b[2J"), "escape character")
    refused(run(runner, ws, "log", "nul \x00"), "NUL")
    refused(run(runner, ws, "add", "ok", "-k", "k\x00"), "--keywords", "NUL")
    refused(run(runner, ws, "search", "find \x00 this"), "search query", "NUL")
    refused(run(runner, ws, "search", "-", input="esc \x1b[2J"), "search query", "escape")
    assert snapshot(ws) == before
    # tabs and line breaks are text
    tabbed = added_id(run(runner, ws, "add", "col1\tcol2\r\nsecond line", "--json"))
    detail = envelope(run(runner, ws, "get", tabbed, "--json").stdout)["entry"]
    assert detail["text"] == "col1\tcol2\nsecond line"
    assert run(runner, ws, "list").exit_code == 0


def test_escape_sequences_in_files_are_escaped_on_output(
    runner: CliRunner, empty_workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = empty_workspace
    with (ws / "memory.md").open("a") as handle:
        handle.write("- evil \x1b]0;pwned\x07 title \x1b[2J clear\r over \x9b1m\n")
    outputs = {
        "list": run(runner, ws, "list"),
        "search": run(runner, ws, "search", "evil title"),
        "inject": run(runner, ws, "inject"),
        "inject xml": run(runner, ws, "inject", "--format", "xml"),
        "inject json": run(runner, ws, "inject", "--format", "json"),
        "inject context": run(runner, ws, "inject", "-q", "evil \x1b[31m title"),
    }
    entry_id = envelope(run(runner, ws, "list", "--json").stdout)["entries"][0]["id"]
    outputs["get"] = run(runner, ws, "get", entry_id)
    outputs["not found"] = run(runner, ws, "get", "no\x1b]0;x\x07id")
    for name, result in outputs.items():
        shown = result.stdout + result.stderr
        assert not any(c in shown for c in "\x1b\x07\r\x9b"), (name, shown)
        assert "\\x1b" in shown, (name, shown)
    # the Typer-free quick path prints the same
    typer_path = run(runner, ws, "search", "evil title", "--no-touch")
    assert quick.run(["-w", str(ws), "search", "evil title", "--no-touch"]) == 0
    assert capsys.readouterr().out == typer_path.stdout
    # --json keeps the text exactly, JSON-escaped (C1 controls too)
    raw = run(runner, ws, "list", "--json").stdout
    assert not any(c in raw for c in "\x1b\x07\r\x9b")
    assert (
        envelope(raw)["entries"][0]["text"]
        == "evil \x1b]0;pwned\x07 title \x1b[2J clear\r over \x9b1m"
    )


# ----------------------------------------------------------------------------- restore


@pytest.mark.parametrize(
    "origin", ["episodes/../../outside.md", "/tmp/outside.md", "archive.md", "notes.md", "../x.md"]
)
def test_restore_stays_in_the_workspace(
    runner: CliRunner, empty_workspace: Path, origin: str
) -> None:
    ws = empty_workspace
    (ws / "archive.md").write_text(
        "# Archive\n\n## Archived\n"
        f'- Lost words <!-- id=m1 archived=2026-01-01 reason=forgotten from="{origin}" '
        "type=fact -->\n"
    )
    before = snapshot(ws)
    refused(run(runner, ws, "restore", "m1"), "archive.md:4", "m1", origin, "nothing was changed")
    assert snapshot(ws) == before
    assert not (ws.parent / "outside.md").exists()


def test_restore_to_an_episode_file(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    (ws / "archive.md").write_text(
        "## Archived\n- Met Ana <!-- id=e1 from=episodes/2026-01-02.md type=episode -->\n"
    )
    assert run(runner, ws, "restore", "e1").exit_code == 0
    assert "Met Ana" in (ws / "episodes" / "2026-01-02.md").read_text()


# ----------------------------------------------------------------------------- transcripts


def test_transcripts_must_be_bounded_regular_files(
    runner: CliRunner, empty_workspace: Path, tmp_path: Path
) -> None:
    ws = empty_workspace
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk used
    before = snapshot(ws)
    for path, words in (
        ("/dev/zero", ("character device", "- to read from stdin")),
        (str(fifo), ("FIFO",)),
        (str(tmp_path), ("directory",)),
        (str(big), ("16 MB",)),
    ):
        refused(run(runner, ws, "extract", "--messages", path), path, *words)
        refused(run(runner, ws, "inject", "--messages", path), path, *words)
        refused(run(runner, ws, "inject", "--context-file", path), path, *words)
    assert snapshot(ws) == before
    # - still reads stdin
    said = json.dumps([{"role": "user", "content": "Remember that the deploy day is Friday."}])
    result = run(runner, ws, "extract", "--messages", "-", "--json", input=said)
    assert [d["action"] for d in envelope(result.stdout)["decisions"]] == ["ADD"]


# ----------------------------------------------------------------------------- sizes


def test_entry_and_query_sizes_are_bounded(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    before = snapshot(ws)
    huge = "word " * (MAX_ENTRY_CHARS // 5 + 1)
    refused(run(runner, ws, "add", "-", input=huge), "entry text", f"{MAX_ENTRY_CHARS:,}")
    refused(run(runner, ws, "search", "-", input="q " * (MAX_QUERY_CHARS // 2 + 1)), "search query")
    mem = Memory(ws, embedder_factory=HashingEmbedder, notify=lambda m: None)
    with pytest.raises(Exception, match="characters long"):
        mem.add(huge)
    assert snapshot(ws) == before
    assert mem.add("word " * (MAX_ENTRY_CHARS // 5 - 1)).action == "added"


def test_oversized_hand_written_entry_is_reported_and_skipped(
    runner: CliRunner, empty_workspace: Path
) -> None:
    ws = empty_workspace
    where = f"memory.md:{(ws / 'memory.md').read_text().count(chr(10)) + 2}"
    with (ws / "memory.md").open("a") as handle:
        handle.write("- Small entry about tea\n- " + "x" * (MAX_ENTRY_CHARS + 10) + "\n")
    result = run(runner, ws, "list", "--json")
    assert [e["text"] for e in envelope(result.stdout)["entries"]] == ["Small entry about tea"]
    assert where in result.stderr and "characters long" in result.stderr
    assert run(runner, ws, "search", "tea", "--json").exit_code == 0
    before = snapshot(ws)
    refused(run(runner, ws, "add", "Another fact"), where, "split it")
    assert snapshot(ws) == before
    assert run(runner, ws, "add", "A lesson", "--type", "lesson").exit_code == 0


# ----------------------------------------------------------------------------- UTF-8


def test_invalid_utf8_in_argv_and_stdin(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    before = snapshot(ws)
    bad_arg = "bad \udcff text"  # what Python makes of the byte 0xff in argv
    refused(run(runner, ws, "add", bad_arg), "not valid UTF-8")
    refused(run(runner, ws, "add", "ok", "--source", bad_arg), "--source", "not valid UTF-8")
    refused(run(runner, ws, "search", bad_arg), "not valid UTF-8")
    refused(run(runner, ws, "add", "-", input=b"bad \xff text"), "stdin:1", "not valid UTF-8")
    refused(run(runner, ws, "search", "-", input=b"\xc3("), "stdin", "not valid UTF-8")
    refused(run(runner, ws, "inject", "-", input=b"\xff"), "stdin", "not valid UTF-8")
    assert snapshot(ws) == before
