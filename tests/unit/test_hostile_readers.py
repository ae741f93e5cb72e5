"""The readers of files people bring (issue 25, findings 10 and 11): JSON nested too
deeply, ChatGPT exports whose nodes loop or are not what the format holds: a clear
error naming the file and the line or node, never a RecursionError, never a hang. The
same inputs through the real CLI: tests/process/test_round3_harden.py."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memcli.adapters.conversations import parse_conversations
from memcli.adapters.messages import deepest_line, load_messages
from memcli.adapters.portability import parse_import
from memcli.core.errors import ValidationError
from tests.support.round3_harden import CLI_INPUTS


def _read(command: list[str], path: Path, text: str) -> object:
    if command[0] in ("extract", "inject"):
        return load_messages(path)
    if "--conversation" in command:
        return parse_conversations(text, path.name)
    return parse_import(text, path.name)


@pytest.mark.parametrize("number", range(len(CLI_INPUTS)), ids=[c[0] for c in CLI_INPUTS])
def test_a_malformed_file_is_refused_naming_the_place(tmp_path: Path, number: int) -> None:
    _, command, filename, text, expected = CLI_INPUTS[number]
    path = tmp_path / filename
    path.write_text(text, encoding="utf-8")
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(_read(command, path, text))
        except BaseException as exc:  # noqa: BLE001 - what it raised is the finding
            outcome.append(exc)

    worker = threading.Thread(target=read, daemon=True)  # a loop must not hang the suite
    worker.start()
    worker.join(10)
    assert outcome, "still reading after 10 s"
    [result] = outcome
    if expected is None:
        assert not isinstance(result, BaseException), result
        return
    assert isinstance(result, ValidationError), repr(result)
    place = f"{filename}{expected}" if expected.startswith(":") else expected
    assert place in str(result)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[]", 1),
        ("[\n[\n[]\n]\n]", 3),
        ('["[[[[[", \n[[1]]]', 2),  # brackets in a string do not count
        ('["\\"[[[[", \n[[1]]]', 2),  # nor after an escaped quote
        ("[[[1]]]\n[[[[2]]]]\n[[[3]]]", 2),
        ("{}", 1),
        ("", 1),
    ],
)
def test_the_deepest_line_is_where_the_nesting_peaks(text: str, line: int) -> None:
    assert deepest_line(text) == line
