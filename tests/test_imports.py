"""Heavy libraries load only where they are needed: `memcli --help` and the store
commands must not import torch, sentence-transformers or faiss."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("torch", "sentence_transformers", "faiss", "transformers", "onnxruntime")


def imported_modules(*args: str, cwd: Path | None = None) -> set[str]:
    code = (
        "import sys, json\n"
        "from memcli.surfaces.cli.app import app\n"
        "try:\n"
        f"    app(args={list(args)!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n' + json.dumps(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def test_help_imports_nothing_heavy() -> None:
    modules = imported_modules("--help")
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_store_commands_import_nothing_heavy(workspace: Path) -> None:
    for args in (["list"], ["get", "m8f3a2c1"], ["stats"], ["add", "light import check"]):
        modules = imported_modules("-w", str(workspace), *args)
        assert not modules & set(HEAVY), (args, modules & set(HEAVY))
