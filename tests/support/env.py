"""Where tests run: the sample workspace and fixtures, small workspaces of one entry, and
an environment with none of the developer's settings, data or caches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the sample workspace tests copy (its derived state left behind)
SAMPLE = ROOT / "workspace"
#: transcripts and other inputs the tests read
FIXTURES = ROOT / "tests" / "fixtures"


def isolate(monkeypatch: pytest.MonkeyPatch, base: Path, cache: Path) -> None:
    """No MEMCLI_* variables; user data and config (approvals) under base; the run's one
    user cache (the ONNX export)."""
    for key in list(os.environ):
        if key.startswith("MEMCLI_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "xdg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "xdg-config"))  # config, approvals
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    # no watcher started behind a test's back by a hook or `memcli mcp` (the tests of
    # memcli.surfaces.daemon.autostart turn it on)
    monkeypatch.setenv("MEMCLI_WATCH_AUTOSTART", "0")


def make_workspace(path: Path, entry_id: str, text: str) -> Path:
    """A new workspace at path holding one fact with that id and text."""
    from memcli.store.workspace import init_workspace

    init_workspace(path)
    memory = path / "memory.md"
    memory.write_text(memory.read_text() + f"- {text} <!-- id={entry_id} -->\n")
    return path.resolve()
