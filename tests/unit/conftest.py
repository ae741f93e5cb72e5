"""Unit tests stay unit tests: loading the real model or starting a child process here
fails the test (use tests/support/fakes.py, or move the test to integration/ or
process/)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_model_no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    from memcli.index import bert_numpy, embedder, onnx_embedder

    def refuse(what: str):  # noqa: ANN202 - a stand-in __init__
        def init(self: object, *args: object, **kwargs: object) -> None:
            pytest.fail(f"a unit test {what}: use the fake, or move it out of tests/unit")

        return init

    monkeypatch.setattr(
        embedder.SentenceTransformerEmbedder, "__init__", refuse("loads the real model")
    )
    monkeypatch.setattr(onnx_embedder.OnnxEmbedder, "__init__", refuse("loads the real model"))
    monkeypatch.setattr(bert_numpy.NumpyEmbedder, "__init__", refuse("loads the real model"))
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("starts a child process"))


@pytest.fixture
def token_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A user cache of its own (XDG_CACHE_HOME) for the tiktoken encoding's copy and the
    kept token counts, each test starting with no counter loaded (as a new process)."""
    from memcli.adapters import tokens

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    tokens.get_counter.cache_clear()
    yield tmp_path
    tokens.get_counter.cache_clear()
