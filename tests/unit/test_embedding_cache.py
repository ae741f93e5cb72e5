"""EmbeddingCache.reserve: the room a watcher makes at start is used by the adds that
follow without copying the matrix; past it, the matrix grows by half as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memcli.index.embedder import EmbeddingCache


def _cache(tmp_path: Path, rows: int) -> EmbeddingCache:
    cache = EmbeddingCache(tmp_path, "model", 4)
    cache.add([f"h{i}" for i in range(rows)], np.eye(4, dtype=np.float32)[np.arange(rows) % 4])
    cache.save([f"h{i}" for i in range(rows)])
    return EmbeddingCache(tmp_path, "model", 4)  # read back: exactly `rows` rows, no room


def test_reserved_room_is_filled_without_a_copy(tmp_path: Path) -> None:
    cache = _cache(tmp_path, 8)
    cache.reserve(3)
    held = cache._matrix
    assert len(held) == 11
    for i in range(3):  # three edits of one text each
        cache.add([f"new{i}"], np.ones((1, 4), dtype=np.float32))
        assert cache._matrix is held
    cache.add(["one more"], np.full((1, 4), 2.0, dtype=np.float32))
    assert cache._matrix is not held and len(cache._matrix) == 16  # grown by half
    assert np.array_equal(cache.get(["h5", "new2", "one more"])[:, 0], [0.0, 1.0, 2.0])


def test_reserving_less_than_the_room_there_is_keeps_the_matrix(tmp_path: Path) -> None:
    cache = _cache(tmp_path, 8)
    cache.reserve(4)
    held = cache._matrix
    cache.reserve(2)
    assert cache._matrix is held and len(held) == 12
