"""A history object that decompresses but whose delta header holds a field of the wrong
type (issue 35, item 13): `undo`, `history` and `doctor` say which object is damaged and
what is wrong with it (not "pruned"), with no traceback, and change no file."""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.cli import invoke

#: (what the header becomes, the words the report must hold)
HEADERS = [
    (lambda h: {**h, "p": "x"}, "'p' is \"x\""),
    (lambda h: {**h, "s": None}, "'s' is null"),
    (lambda h: {**h, "n": [1]}, "'n' is [1]"),
    (lambda h: {**h, "p": True}, "'p' is true"),
    (lambda h: {**h, "s": -1}, "'s' is -1"),
    (lambda h: {**h, "p": 1.5}, "'p' is 1.5"),
    (lambda h: {**h, "base": 7}, "names no base object"),
    (lambda h: {**h, "base": "../../x"}, "names no base object"),
    (lambda h: [h], "not a JSON object"),
]


def _run(ws: Path, *args: str):  # noqa: ANN202 - click Result
    """`memcli ARGS` as a fresh process runs it (no Memory, no history read before)."""
    from memcli.services import memory

    memory._SHARED.clear()
    return invoke(CliRunner(), ws, *args)


def _damage(ws: Path, change) -> int:  # noqa: ANN001
    """Rewrite every delta object's header with `change`, validly compressed."""
    count = 0
    for path in (ws / ".memcli" / "history" / "objects").rglob("*"):
        raw = path.read_bytes() if path.is_file() else b""
        if raw.startswith(b"D"):
            line, _, middle = zlib.decompress(raw[1:]).partition(b"\n")
            head = change(json.loads(line))
            path.write_bytes(b"D" + zlib.compress(json.dumps(head).encode() + b"\n" + middle))
            count += 1
    return count


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace whose history holds deltas (three adds), made once."""
    from memcli.store.workspace import init_workspace

    root = tmp_path_factory.mktemp("history") / "ws"
    init_workspace(root)
    for text in ("Uses ruff for linting", "Uses pytest for tests", "Builds with make"):
        assert _run(root, "add", text).exit_code == 0
    return root


@pytest.fixture
def written(history: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "ws"
    shutil.copytree(history, copy)
    return copy


@pytest.mark.parametrize(("change", "said"), HEADERS, ids=[s for _, s in HEADERS])
def test_a_damaged_header_is_reported_by_undo_history_and_doctor(
    written: Path, change, said: str  # noqa: ANN001
) -> None:
    assert _damage(written, change) > 0
    before = (written / "memory.md").read_bytes()
    undo = _run(written, "undo", "--yes")
    assert undo.exit_code == 1 and "damaged" in undo.output and said in undo.output, undo.output
    assert "pruned" not in undo.output
    history = _run(written, "history")
    assert "damaged history object" in history.output and said in history.output, history.output
    listed = json.loads(_run(written, "history", "--json").stdout)["data"]
    assert any(said in line for line in listed["damaged"])
    doctor = _run(written, "doctor")
    assert doctor.exit_code == 1 and "a damaged history object" in doctor.output, doctor.output
    assert said in doctor.output
    for done in (undo, history, doctor):
        assert "Traceback" not in done.output
    assert (written / "memory.md").read_bytes() == before
