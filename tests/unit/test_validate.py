"""Reading stdin (issue 14): bytes or text, the same refusals. The CLI reads bytes; a
caller that replaced sys.stdin with a text stream used to get a NUL through (the
"served `inject -`" harm of the attack suite came from that branch)."""

from __future__ import annotations

import io
import sys

import pytest

from memcli.core.errors import ValidationError
from memcli.core.validate import read_stdin


class _Bytes(io.TextIOWrapper):
    """A stdin as the interpreter makes it: text over a byte buffer."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")


def _text_surrogates(data: bytes) -> io.StringIO:
    """A text stdin that decoded with errors="surrogateescape" (Python's own choice
    for stdin under a C locale)."""
    return io.StringIO(data.decode("utf-8", "surrogateescape"))


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"line one\nnul \x00 here\n", "stdin:2: holds a NUL byte"),
        (b"ok\n\xc3(", "stdin:2: not valid UTF-8 (byte 3)"),
        (b"bad \xff text", "stdin:1: not valid UTF-8 (byte 4)"),
    ],
)
@pytest.mark.parametrize("stream", ["bytes", "text"])
def test_stdin_is_refused_alike_as_bytes_or_text(
    monkeypatch: pytest.MonkeyPatch, data: bytes, says: str, stream: str
) -> None:
    fake = _Bytes(data) if stream == "bytes" else _text_surrogates(data)
    monkeypatch.setattr(sys, "stdin", fake)
    with pytest.raises(ValidationError) as caught:
        read_stdin()
    assert says in caught.value.message


@pytest.mark.parametrize("stream", ["bytes", "text"])
def test_stdin_text_comes_back_without_a_bom(monkeypatch: pytest.MonkeyPatch, stream: str) -> None:
    data = "\ufeffPrefers 中文 and tabs\there\n".encode()
    fake = _Bytes(data) if stream == "bytes" else io.StringIO(data.decode())
    monkeypatch.setattr(sys, "stdin", fake)
    assert read_stdin() == "Prefers 中文 and tabs\there\n"
