"""Where memcli keeps per-user files: data (the default workspace), config (config.toml,
trusted.json) and cache (the ONNX export of the model).

An `XDG_*_HOME` variable wins wherever it is set. Otherwise Linux and the BSDs use the
XDG defaults under HOME (~/.local/share, ~/.config, ~/.cache), and macOS and Windows
their own folders through platformdirs (~/Library/Application Support, %LOCALAPPDATA%…),
except that a memcli folder already kept at the XDG place there stays in use. The
environment is passed in (the daemon resolves paths for its client's environment), so
these are pure functions of it and of the platform.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

APP = "memcli"
_XDG = {
    "data": ("XDG_DATA_HOME", (".local", "share")),
    "config": ("XDG_CONFIG_HOME", (".config",)),
    "cache": ("XDG_CACHE_HOME", (".cache",)),
}


def data_dir(env: Mapping[str, str]) -> Path:
    """memcli's per-user data folder (the default workspace)."""
    return _dir("data", env)


def config_dir(env: Mapping[str, str]) -> Path:
    """memcli's per-user config folder (config.toml, trusted.json)."""
    return _dir("config", env)


def cache_dir(env: Mapping[str, str]) -> Path:
    """memcli's per-user cache folder (derived files that can be rebuilt)."""
    return _dir("cache", env)


def home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _dir(kind: str, env: Mapping[str, str]) -> Path:
    variable, default = _XDG[kind]
    if env.get(variable):
        return Path(env[variable]) / APP
    xdg = home(env).joinpath(*default) / APP
    if not sys.platform.startswith(("darwin", "win32", "cygwin")) or xdg.exists():
        return xdg
    import platformdirs

    finder = {
        "data": platformdirs.user_data_dir,
        "config": platformdirs.user_config_dir,
        "cache": platformdirs.user_cache_dir,
    }[kind]
    return Path(finder(APP, appauthor=False))
