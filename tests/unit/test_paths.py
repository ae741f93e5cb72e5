"""Per-user folders: XDG variables, the XDG defaults on Linux, platformdirs elsewhere."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest

from memcli.core import paths


def test_xdg_variables_win_then_the_xdg_defaults_under_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    assert paths.data_dir(env) == tmp_path / "data" / "memcli"
    if sys.platform.startswith("linux"):
        assert paths.config_dir(env) == tmp_path / ".config" / "memcli"
        assert paths.cache_dir(env) == tmp_path / ".cache" / "memcli"


def test_macos_uses_its_own_folders_unless_memcli_is_already_at_the_xdg_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    library = tmp_path / "Library" / "Application Support" / "memcli"
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda app, appauthor: str(library))
    env = {"HOME": str(tmp_path)}
    assert paths.data_dir(env) == library
    legacy = tmp_path / ".local" / "share" / "memcli"
    legacy.mkdir(parents=True)
    assert paths.data_dir(env) == legacy  # an existing workspace is not abandoned
    assert paths.data_dir({**env, "XDG_DATA_HOME": str(tmp_path / "x")}) == tmp_path / "x" / "memcli"
