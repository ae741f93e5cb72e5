"""The ONNX export of the embedding model (torch, seconds) is made when the model first
loads, not when the bulk embedder is built: a sync with nothing to embed never makes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.services.memory import Memory


def test_a_sync_with_nothing_to_embed_never_exports_the_model(
    empty_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ONNX export (torch, seconds) waits for the first text to embed: an empty
    workspace's index is built without it, in a cache that has no export yet."""
    from memcli.index import onnx_embedder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "fresh-cache"))

    def refuse(*args: object, **kwargs: object) -> bool:
        raise AssertionError("exported with nothing to embed")

    monkeypatch.setattr(onnx_embedder, "export", refuse)
    mem = Memory(empty_workspace, notify=lambda m: None)
    mem.runtime.index_manager.ensure()  # what compress, reflect and stats do first
    assert mem.runtime.index_manager.read_manifest() is not None  # the index was built


def test_the_export_comes_first_and_once_when_the_model_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memcli.index import onnx_embedder, query_engine
    from memcli.services.runtime import _bulk_embedder

    # the numpy path's check on record, as after a real export (this one writes no files
    # to check against: without a record, the check would read the export's meta.json,
    # which only a slow test run before this one had made)
    monkeypatch.setattr(query_engine, "checked", lambda model_id, setting: {"on": "record"})
    calls: list[tuple] = []
    loaded = object()

    def export(model: str, reference: object, report: object) -> bool:
        calls.append((model, report))
        assert reference._model is None  # before the model loads
        reference._model = loaded  # the export loads it, as the real one does
        return True

    def report(step: int, of: int, what: str) -> None: ...

    monkeypatch.setattr(onnx_embedder, "export", export)
    embedder = _bulk_embedder("", 8, report)
    assert calls == []  # built: nothing exported yet
    assert embedder._load() is loaded and embedder._load() is loaded
    assert calls == [("", report)]
