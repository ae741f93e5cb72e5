"""Heavy libraries load only where they are needed: `memcli --help` and the store
commands must not import torch, sentence-transformers or faiss (nor extraction's
sentence splitter)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.processes import imported_modules

HEAVY = ("torch", "sentence_transformers", "faiss", "transformers", "onnxruntime")


def test_help_imports_nothing_heavy() -> None:
    modules = imported_modules("--help")
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_store_commands_import_nothing_heavy(workspace: Path) -> None:
    for args in (["list"], ["get", "m8f3a2c1"], ["stats"], ["add", "light import check"]):
        modules = imported_modules("-w", str(workspace), *args)
        assert not modules & set(HEAVY), (args, modules & set(HEAVY))


def test_the_sentence_splitter_is_not_imported_by_help_or_store_commands(workspace: Path) -> None:
    assert "pysbd" not in imported_modules("--help")
    assert "pysbd" not in imported_modules("-w", str(workspace), "list")


def test_the_served_path_imports_no_library(tmp_path: Path) -> None:
    """The client side of a served command: the command line, the daemon client, the
    printer."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memcli.surfaces.cli import env, fastpath, served\n"
        "from memcli.surfaces import protocol\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(ast.literal_eval(out.stdout))
    heavy = {"re", "json", "dataclasses", "enum", "typing", "rich", "typer", "numpy", "pathlib"}
    assert not modules & heavy, modules & heavy
