"""CLI conventions people expect (issue 20), the pure parts: relative and ISO dates,
status values read as words. Through the Typer app: tests/integration/
test_cli_conventions.py; the real entry point in a fresh shell:
tests/process/test_cli_conventions.py."""

from __future__ import annotations

import pytest

from memcli.core.errors import ConfigError, ValidationError

# ----------------------------------------------------------------- 6. relative dates


def test_when_accepts_iso_and_relative_dates() -> None:
    import datetime as dt

    from memcli.core.errors import UsageError
    from memcli.surfaces.cli.args import when

    now = dt.datetime(2026, 11, 24, 15, 30, tzinfo=dt.UTC)
    assert when("2026-11-01", "--since", now=now) == "2026-11-01"
    assert when("2026-11-01T10:00:00Z", "--since", now=now) == "2026-11-01T10:00:00Z"
    assert when("7d", "--since", now=now) == "2026-11-17T15:30:00Z"
    assert when("2w", "--since", now=now) == "2026-11-10T15:30:00Z"
    assert when("today", "--since", now=now) == "2026-11-24T00:00:00Z"
    assert when("Yesterday", "--since", now=now) == "2026-11-23T00:00:00Z"
    assert when("yesterday", "--until", end=True, now=now) == "2026-11-24T00:00:00Z"
    for bad in ("garbage", "7x", "-3d", ""):
        with pytest.raises(UsageError, match="today, yesterday, or Nd / Nw"):
            when(bad, "--since", now=now)


def test_status_values_read_as_words(capsys: pytest.CaptureFixture[str]) -> None:
    from memcli.surfaces.cli import render

    render.key_values(
        {"pid": 7, "uptime_s": 2.5, "last_batch": None, "serving": True, "paths": []}.items()
    )
    render.key_values(
        {"last_batch": {"paths": ["memory.md", "learnings.md"], "ms": 23.0, "rebuilt": False}}
        .items()
    )  # fmt: skip
    out = capsys.readouterr().out
    assert out == (
        "pid: 7\nuptime (s): 2.5\nlast batch: never\nserving: yes\npaths: none\n"
        "last batch:\n  paths: memory.md, learnings.md\n  ms: 23\n  rebuilt: no\n"
    )


def test_plain_text_transcripts_are_read() -> None:
    from memcli.adapters.messages import load_messages

    said = "User: I prefer tabs.\nAlso remember my cat is Miso.\nassistant: Noted!\n\nuser: thanks"
    assert load_messages("-", said) == [
        {"role": "user", "content": "I prefer tabs.\nAlso remember my cat is Miso."},
        {"role": "assistant", "content": "Noted!"},
        {"role": "user", "content": "thanks"},
    ]
    with pytest.raises(ValidationError, match="not JSON or JSONL"):  # prose is not a transcript
        load_messages("-", "Dear diary,\nuser: not a turn at the start")


def test_an_encoding_without_its_file_says_what_memcli_has() -> None:
    from memcli.adapters.tokens import get_counter

    with pytest.raises(ConfigError) as caught:
        get_counter("o200k_base")
    hint = caught.value.hint or ""
    assert "cl100k_base" in hint and "never does" in hint and "install" not in hint
