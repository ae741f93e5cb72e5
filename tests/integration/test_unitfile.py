"""The service files of `memcli watch --install-service` name the workspace as data
(issue 25, finding 7): systemd specifiers and variables escaped, newlines refused."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memcli.core.errors import ValidationError
from memcli.surfaces.daemon.unitfile import service_file


def _exec_words(value: str) -> list[str]:
    """ExecStart split as systemd does (quotes, C escapes, `%%`, `$$`) for these words."""
    words, word, quoted, i = [], "", False, 0
    while i < len(value):
        c = value[i]
        if c == "\\" and quoted:
            word += value[i + 1]
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == " " and not quoted:
            words.append(word)
            word = ""
        elif c in "%$":
            assert value[i + 1] == c, f"an unescaped {c} at {i}: {value}"
            word += c
            i += 1
        else:
            word += c
        i += 1
    return [*words, word]


@pytest.mark.parametrize(
    "name", ["plain", "with space", "100%h", "$HOME and ${USER}", 'quote" \\ back', "a%%b"]
)
def test_the_unit_names_the_workspace_literally(tmp_path: Path, name: str) -> None:
    root = tmp_path / name
    path, text = service_file(root, "systemd", {"HOME": str(tmp_path)})
    unit = configparser.ConfigParser(interpolation=None)
    unit.read_string(text)
    assert sorted(unit["Service"]) == ["environment", "execstart", "restart", "restartsec"]
    assert _exec_words(unit["Service"]["ExecStart"]) == [
        sys.executable, "-m", "memcli", "-w", str(root), "watch"
    ]
    description = unit["Unit"]["Description"]
    assert description.replace("%%", "%") == f"memcli watch for {root}"
    assert "%" not in description.replace("%%", "")
    if shutil.which("systemd-analyze"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        done = subprocess.run(
            ["systemd-analyze", "verify", str(path)], capture_output=True, text=True
        )
        assert "Failed" not in done.stderr and "nvalid" not in done.stderr, done.stderr


@pytest.mark.parametrize("kind", ["systemd", "launchd"])
@pytest.mark.parametrize("bad", ["\n", "\r", "\x1b", "\x7f"])
def test_a_control_character_in_the_path_is_refused(tmp_path: Path, kind: str, bad: str) -> None:
    root = tmp_path / f"ws{bad}[Service]{bad}ExecStartPre=/bin/touch /tmp/pwned"
    with pytest.raises(ValidationError, match="control character"):
        service_file(root, kind, {"HOME": str(tmp_path)})
