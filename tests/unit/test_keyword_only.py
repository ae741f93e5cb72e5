"""Before the embeddings can be used (issue 29): whether they can, and the inject block
from the keyword side alone, with no model and no index."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memcli.core.requests import InjectRequest
from memcli.services.memory import Memory
from memcli.services.search import inject_keyword_only
from tests.support.fakes import HashingEmbedder


def no_model() -> HashingEmbedder:
    raise AssertionError("the keyword side loads no model")


def test_embeddings_ready_needs_the_export_and_an_index(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "fresh-cache"))
    mem = Memory(workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    assert not mem.runtime.embeddings_ready()  # no export in a fresh cache
    off = dataclasses.replace(mem.settings.index, onnx=False)
    mem = Memory(
        workspace,
        settings=dataclasses.replace(mem.settings, index=off),
        embedder_factory=HashingEmbedder,
        notify=lambda m: None,
    )
    assert not mem.runtime.embeddings_ready()  # never indexed
    mem.index()
    assert mem.runtime.embeddings_ready()


def test_the_keyword_side_answers_without_a_model_or_an_index(workspace: Path) -> None:
    mem = Memory(workspace, embedder_factory=no_model, notify=lambda m: None)
    packed = inject_keyword_only(mem.runtime, InjectRequest("pytest or unittest for tests?"))
    texts = [c.entry.text for c in packed.chosen]
    assert any("Prefers pytest over unittest" in t for t in texts)
    assert not (workspace / ".memcli" / "index" / "manifest.json").exists()
    off_topic = inject_keyword_only(mem.runtime, InjectRequest("sourdough starter hydration"))
    # nothing shares a word with it: only what goes into every block (pinned, corrections,
    # important preferences)
    assert all(c.priority or c.entry.type in ("preference", "correction") for c in off_topic.chosen)
