"""Reading a hook's transcript (issue 25, findings 10, 14, 17): in chunks, a line over the
limit passed over, a line that is not JSON skipped and named once, only regular files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memcli.surfaces import transcript
from memcli.surfaces.hook_positions import Positions


def _say(text: str) -> str:
    return json.dumps({"type": "user", "message": {"content": text}})


@pytest.mark.parametrize("chunk", [1, 3, 4, 7, 1 << 20])  # a line across chunks
@pytest.mark.parametrize(
    ("lengths", "kept"),
    [
        ([0, 9, 10, 11, 25, 3], [True, True, True, False, False, True]),  # limit 10
        ([11], [False]),
        ([10], [True]),
        ([30, 30], [False, False]),
    ],
)
def test_lines_over_the_limit_are_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, lengths: list[int],
    kept: list[bool],
) -> None:
    monkeypatch.setattr(transcript, "CHUNK_BYTES", chunk)
    lines = [chr(ord("a") + n) * length for n, length in enumerate(lengths)]
    path = tmp_path / "t.jsonl"
    path.write_bytes(("\n".join(lines) + "\nunfinished").encode())
    reading = transcript.read_after(str(path), 0, limit=10)
    assert [text is not None for _, text in reading.lines] == kept
    assert [text for _, text in reading.lines if text is not None] == [
        line for line, keep in zip(lines, kept, strict=True) if keep
    ]
    assert [where for where, _ in reading.lines] == [str(n) for n in range(1, len(lines) + 1)]
    assert reading.end == len("\n".join(lines)) + 1  # past every line, not the unfinished
    assert reading.line == len(lines) + 1
    skipped = [n + 1 for n, keep in enumerate(kept) if not keep]
    note = reading.skipped.note()
    if skipped:
        assert note.startswith(f"memcli: {path}:{skipped[0]}: skipped a line longer than 10")
        assert ("more line" in note) == (len(skipped) > 1)
    else:
        assert note == ""


def test_reading_goes_on_from_the_position_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_say("one") + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    first = transcript.read_after(str(path), 0)
    messages = transcript.reading_messages(first)
    assert messages == [{"role": "user", "content": "one"}]
    assert first.skipped.note() == f"memcli: {path}:2: skipped a line that is nested too deeply"
    with path.open("a") as handle:
        handle.write("{not json\n" + _say("two") + "\n")
    second = transcript.read_after(str(path), first.end, first.line)
    assert transcript.reading_messages(second) == [{"role": "user", "content": "two"}]
    assert second.skipped.note() == f"memcli: {path}:3: skipped a line that is not JSON"
    unknown = transcript.read_after(str(path), first.end)  # an older hooks.json: no line
    transcript.reading_messages(unknown)
    assert f":byte {first.end}: skipped" in unknown.skipped.note()


def test_positions_keep_the_line_number(tmp_path: Path) -> None:
    with Positions(str(tmp_path)) as positions:
        assert positions.line("s", "/t") == 1  # the start
        positions.record("s", "/t", 120, 7)
    with Positions(str(tmp_path)) as positions:
        assert (positions.offset("s", "/t"), positions.line("s", "/t")) == (120, 7)
        positions.record("s", "/t", 150)  # an older caller: the number is unknown
        assert positions.line("s", "/t") is None


def test_the_tail_names_a_bad_line_by_its_byte(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    head = _say("one") + "\n"
    path.write_text(head + "[" * 50_000 + "]" * 50_000 + "\n" + _say("two") + "\n")
    reading = transcript.tail_reading(str(path), 1 << 20)
    assert [m["content"] for m in transcript.reading_messages(reading)] == ["one", "two"]
    assert reading.skipped.note() == (
        f"memcli: {path}:byte {len(head)}: skipped a line that is nested too deeply"
    )


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_only_a_regular_file_is_read(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "t.jsonl"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes: a blocking open would wait for ever
    elif kind == "directory":
        path.mkdir()
    else:
        path = Path("/dev/zero")  # would never end
    with pytest.raises(transcript.NotRegularFile, match="not a transcript file"):
        transcript.read_after(str(path), 0)
    reading = transcript.tail_reading(str(path), 1024)
    assert reading.lines == [] and "not a transcript file" in reading.skipped.note()
    assert transcript.tail_lines(str(path), 1024) == []


@pytest.mark.parametrize(
    ("value", "limit"),
    [
        (None, 16 * 2**20),
        ("", 16 * 2**20),
        ("1", 2**20),
        ("0.5", 2**19),
        ("0", 16 * 2**20),
        ("-3", 16 * 2**20),
        ("lots", 16 * 2**20),
        ("1e-9", 16 * 2**20),  # under a byte
    ],
)
def test_the_line_limit_setting(value: str | None, limit: int) -> None:
    env = {} if value is None else {transcript.LINE_LIMIT_ENV: value}
    assert transcript.max_line_bytes(env) == limit
