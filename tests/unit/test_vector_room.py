"""A FAISS graph read from disk gets room for new vectors before its first add
(memcli.index.vectors.RowVectors.make_room, which a watcher calls before it serves):
otherwise that add copies every array of the graph to grow it (≈ 0.3 s at 100k entries,
paid by the first hand edit after a watcher starts). The graph finds the same rows
either way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memcli.index.vectors import RowVectors, VectorIndex

faiss = pytest.importorskip("faiss")

DIM = 16


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((301, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    path = tmp_path_factory.mktemp("graph") / "vectors.faiss"
    VectorIndex.build(vectors[:300], ann_threshold=1, hnsw_m=8).save(path)
    return path, vectors


def _first_add_copies(path: Path, vector: np.ndarray, room: int) -> tuple[bool, RowVectors]:
    rows = RowVectors(DIM, VectorIndex.load(path))
    rows.make_room(room)
    storage = faiss.downcast_index(rows.graph.storage)
    hnsw = rows.graph.hnsw
    before = (int(storage.codes.data()), int(hnsw.neighbors.data()))
    rows.put(300, vector.reshape(1, -1))
    after = (int(storage.codes.data()), int(hnsw.neighbors.data()))
    return before != after, rows


def test_the_first_add_after_make_room_copies_nothing(saved) -> None:  # noqa: ANN001
    path, vectors = saved
    assert _first_add_copies(path, vectors[300], room=0)[0]  # what it is for
    copied, rows = _first_add_copies(path, vectors[300], room=64)
    assert not copied
    for row in (0, 150, 299, 300):  # the rows read and the one added
        _, found = rows.nearest(vectors[row], 3)
        assert found[0] == row
