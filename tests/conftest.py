"""Shared fixtures: a copy of the sample workspace per test, and a CLI runner."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "workspace"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the sample workspace (without derived state)."""
    target = tmp_path / "ws"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".memcli"))
    return target


@pytest.fixture
def empty_workspace(tmp_path: Path) -> Path:
    from memcli.store.workspace import init_workspace

    target = tmp_path / "empty"
    init_workspace(target)
    return target


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's own workspace or settings."""
    for key in list(os.environ):
        if key.startswith("MEMCLI_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
