"""The vector file of one generation of the local index (memcli.index.local): a NumPy
matrix below `ann_threshold` (an exact inner-product scan, no FAISS import, one `.npy`
read), a FAISS HNSW graph above it; built, saved and loaded here. Which rows are dead
and when a graph is built anew is the local index's business (its row numbering).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


class VectorIndex:
    """Cosine search over L2-normalized vectors, positions 0..n-1.

    kind "flat": `matrix` holds the vectors; kind "hnsw": `index` is a faiss.IndexHNSWFlat.
    """

    def __init__(self, index, kind: str, matrix: np.ndarray | None = None) -> None:  # noqa: ANN001 - faiss.Index
        self.index = index
        self.kind = kind
        self.matrix = matrix

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        ann_threshold: int,
        hnsw_m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
    ) -> VectorIndex:
        n, dim = vectors.shape
        if n < ann_threshold:
            return cls(None, "flat", np.ascontiguousarray(vectors, dtype=np.float32))
        import faiss

        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        index.hnsw.efSearch = ef_search
        if n:
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return cls(index, "hnsw")

    @property
    def size(self) -> int:
        if self.matrix is not None:
            return int(self.matrix.shape[0])
        return int(self.index.ntotal)

    @property
    def suffix(self) -> str:
        """File suffix the index is saved with."""
        return "npy" if self.kind == "flat" else "faiss"

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, positions) for one query vector, best first."""
        k = max(1, min(k, self.size))
        if self.size == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        if self.matrix is not None:
            scores = self.matrix @ query.astype(np.float32)
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            return scores[top], top.astype(np.int64)
        scores, labels = self.index.search(query.reshape(1, -1).astype(np.float32), k)
        keep = labels[0] >= 0
        return scores[0][keep], labels[0][keep].astype(np.int64)

    def save(self, path: Path) -> None:
        """Write the index to `path` (through a temporary file)."""
        tmp = path.with_name(path.name + ".tmp")
        if self.matrix is not None:
            with open(tmp, "wb") as handle:
                np.save(handle, self.matrix, allow_pickle=False)
        else:
            import faiss

            faiss.write_index(self.index, str(tmp))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, ef_search: int = 128) -> VectorIndex:
        if path.suffix == ".npy":
            # mapped, not read: a query's scan reads the pages from the page cache with no
            # copy of the whole matrix first; copy-on-write, so no write here ever reaches
            # the file. Read on Windows, where a mapped file cannot be removed (the
            # generation a compaction replaces)
            matrix = np.load(path, allow_pickle=False, mmap_mode=None if os.name == "nt" else "c")
            if matrix.ndim != 2 or matrix.dtype != np.float32:
                raise ValueError(f"{path}: not a float32 matrix")
            return cls(None, "flat", matrix)
        import faiss

        index = faiss.read_index(str(path))
        if isinstance(index, faiss.IndexHNSW):
            index.hnsw.efSearch = ef_search
            return cls(index, "hnsw")
        matrix = faiss.rev_swig_ptr(index.get_xb(), index.ntotal * index.d)  # an older flat index
        return cls(None, "flat", np.array(matrix).reshape(index.ntotal, index.d))


class RowVectors:
    """The vectors of the local index's rows (memcli.index.local): a flat matrix grown
    ahead of the rows, or an HNSW graph whose labels are the rows. Which rows are dead
    is the local index's to say."""

    def __init__(self, dim: int, index: VectorIndex | None = None) -> None:
        self.dim = dim
        if index is None:
            index = VectorIndex(None, "flat", np.zeros((0, dim), dtype=np.float32))
        self.kind, self.matrix, self.graph = index.kind, index.matrix, index.index

    def grow(self, size: int, n: int) -> None:
        """Room for `size` rows, the first `n` kept (a graph grows as it is added to)."""
        if self.matrix is not None:
            grown = np.zeros((size, self.dim), dtype=np.float32)
            grown[:n] = self.matrix[:n]
            self.matrix = grown

    def make_room(self, rows: int) -> None:
        """Room for `rows` more vectors in a graph read from disk, whose arrays (the
        vectors, the levels, the neighbor lists) are exactly as long as it is: its first
        add otherwise copies them all to grow them (≈ 0.3 s at 100k entries, paid by
        the first hand edit after a watcher starts). Each grows and shrinks back, which
        keeps the capacity. Nothing for a flat matrix (grown ahead by the local index);
        a FAISS without these arrays is left as it is."""
        if self.graph is None or rows <= 0:
            return
        import faiss

        try:
            storage = faiss.downcast_index(self.graph.storage)
            hnsw = self.graph.hnsw
            per_node = hnsw.cum_nneighbor_per_level.at(1)  # a level-0 node's neighbors
            arrays = [(storage.codes, storage.code_size), (hnsw.levels, 1)]
            arrays += [(hnsw.offsets, 1), (hnsw.neighbors, per_node)]
            for array, unit in arrays:
                size = array.size()
                array.resize(size + rows * unit)
                array.resize(size)
        except (AttributeError, TypeError):  # another FAISS: its first add grows them
            return

    def put(self, start: int, vectors: np.ndarray) -> None:
        """The vectors of rows start, start + 1, ... (a graph: the next labels)."""
        if self.graph is not None:
            self.graph.add(vectors)
        else:
            self.matrix[start : start + len(vectors)] = vectors

    def all_scores(self, vector: np.ndarray, n: int) -> np.ndarray | None:
        """Exact cosine of `vector` to rows [0, n) (None for a graph)."""
        return None if self.matrix is None else self.matrix[:n] @ vector.astype(np.float32)

    def nearest(self, vector: np.ndarray, wanted: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows) of the `wanted` rows the graph finds nearest, best first (dead
        rows included)."""
        wanted = min(wanted, int(self.graph.ntotal))
        scores, labels = self.graph.search(vector.reshape(1, -1).astype(np.float32), wanted)
        keep = labels[0] >= 0
        return scores[0][keep], labels[0][keep]

    def of_rows(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of `rows`."""
        if self.matrix is not None:
            return self.matrix[rows]
        return np.vstack([self.graph.reconstruct(int(r)) for r in rows])

    def compacted(self, order: np.ndarray, n: int, keep_rows: bool, settings: Any) -> VectorIndex:
        """Rows `order` of the first `n`, as a generation's vectors: the graph as it is
        with `keep_rows` (its dead rows stay), else built anew (`settings`: [index])."""
        if keep_rows:
            return VectorIndex(self.graph, "hnsw")
        if self.graph is not None:
            vectors = self.graph.reconstruct_n(0, n)[order] if n else None
        else:
            vectors = self.matrix[:n][order]
        if vectors is None:
            vectors = np.zeros((0, self.dim), dtype=np.float32)
        return VectorIndex.build(
            vectors,
            settings.ann_threshold,
            settings.hnsw_m,
            settings.hnsw_ef_construction,
            settings.hnsw_ef_search,
        )
