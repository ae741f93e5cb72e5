"""The `llm` CLI plugin through the real `llm` command: its entry point is found and a
`memcli:` fragment gives the inject block."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LLM = str(Path(sys.executable).parent / "llm")


@pytest.mark.slow
def test_llm_cli_loads_the_fragment(workspace: Path, tmp_path: Path) -> None:
    env = dict(os.environ, MEMCLI_WORKSPACE=str(workspace), LLM_USER_PATH=str(tmp_path / "llm"))
    plugins = subprocess.run([LLM, "plugins"], capture_output=True, text=True, env=env)
    assert '"memcli"' in plugins.stdout and "register_fragment_loaders" in plugins.stdout
    shown = subprocess.run(
        [LLM, "fragments", "show", "memcli:How should I write Python tests?"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("<memory>") and "Prefers pytest" in shown.stdout
