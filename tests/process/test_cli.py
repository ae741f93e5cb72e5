"""The workspace the real `memcli` entry point resolves, from the working directory, the
environment and the default, in child processes. Every store command through the Typer
app: tests/integration/test_cli.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_workspace_resolution_from_cwd_and_env(tmp_path: Path, workspace: Path) -> None:
    nested = workspace / "deep" / "er"
    nested.mkdir(parents=True)
    env = {"PATH": "", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")  # this checkout's memcli
    cmd = [sys.executable, "-m", "memcli", "stats", "--json"]
    from_cwd = subprocess.run(cmd, cwd=nested, env=env, capture_output=True, text=True)
    assert json.loads(from_cwd.stdout)["data"]["workspace"] == str(workspace)
    env["MEMCLI_WORKSPACE"] = str(workspace)
    from_env = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert json.loads(from_env.stdout)["data"]["workspace"] == str(workspace)
    del env["MEMCLI_WORKSPACE"]
    default = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert default.returncode == 1 and str(tmp_path / "xdg" / "memcli") in default.stderr
