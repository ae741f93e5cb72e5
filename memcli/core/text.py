"""Text that leaves memcli: control characters made visible, and the readable JSON
writer of --json output.

Builtin modules only (no json, no re). `dumps` writes exactly what
`json.dumps(data, ensure_ascii=False, indent=2, default=str)` writes, with DEL, C1
controls and lone surrogates as `\\u` escapes (a test compares the two). The compact
wire form and its reader (the daemon's requests and answers, hook answers) are
memcli.surfaces.protocol's `dumps_wire` and `loads`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_ESCAPES: dict[int, str] | None = None
_JSON_RAW: dict[int, str] | None = None


def _control_table() -> dict[int, str]:
    global _ESCAPES
    if _ESCAPES is None:
        codes = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]
        table = {c: f"\\x{c:02x}" for c in codes}
        table.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})
        _ESCAPES = table
    return _ESCAPES


def escape_controls(text: str) -> str:
    """Control characters (but tab and line feed) and undecodable bytes as visible
    `\\x1b` / `\\udcff` escapes: what a terminal or a prompt receives is text, never an
    escape sequence."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_control_table())


def _raw_table() -> dict[int, str]:
    global _JSON_RAW
    if _JSON_RAW is None:
        codes = [*range(0x7F, 0xA0), *range(0xD800, 0xE000)]
        _JSON_RAW = {c: f"\\u{c:04x}" for c in codes}
    return _JSON_RAW


def _encoder() -> Callable[[str], str]:
    try:
        from _json import encode_basestring
    except ImportError:  # an interpreter without the C accelerator
        from json.encoder import py_encode_basestring as encode_basestring
    return encode_basestring


def _readable(value: str) -> str:
    """A JSON string literal, UTF-8 kept, DEL / C1 / surrogates escaped."""
    quoted = _encoder()(value)
    if quoted.isascii() and "\x7f" not in quoted:
        return quoted
    return quoted.translate(_raw_table())


def _number(value: Any) -> str | None:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    return None


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    text = _number(key)
    if text is None:
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
    return text


#: what `dumps` indents by (json.dumps' indent=2)
_INDENT = "  "


def _write(value: Any, out: list[str], level: int) -> None:
    if isinstance(value, str):
        out.append(_readable(value))
        return
    scalar = _number(value)
    if scalar is not None:
        out.append(scalar)
        return
    if isinstance(value, list | tuple | dict):
        is_dict = isinstance(value, dict)
        if not value:
            out.append("{}" if is_dict else "[]")
            return
        out.append("{" if is_dict else "[")
        newline = "\n" + _INDENT * (level + 1)
        separator = "," + newline
        close = "\n" + _INDENT * level
        out.append(newline)
        first = True
        for item in value.items() if is_dict else value:
            if not first:
                out.append(separator)
            first = False
            if is_dict:
                out.append(_readable(_key(item[0])) + ": ")
                item = item[1]
            _write(item, out, level + 1)
        out.append(close + ("}" if is_dict else "]"))
        return
    _write(str(value), out, level)  # default=str


def dumps(data: Any) -> str:
    """--json output: readable UTF-8 JSON (indent 2) in which every control character
    is a `\\u` escape (json.dumps escapes only C0 ones)."""
    out: list[str] = []
    _write(data, out, 0)
    return "".join(out)
