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


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """One user cache (ONNX export) for the whole run, set before any other fixture:
    exporting takes seconds, and tests must not touch the developer's cache."""
    path = tmp_path_factory.mktemp("xdg-cache")
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session_cache: Path) -> None:
    """No test reads the developer's own workspace, settings or caches."""
    for key in list(os.environ):
        if key.startswith("MEMCLI_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))  # config, approvals
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache))
