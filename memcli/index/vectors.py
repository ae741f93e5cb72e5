"""The FAISS vector index: exact inner product for small workspaces, HNSW above a size."""

from __future__ import annotations

from pathlib import Path

import numpy as np


class VectorIndex:
    """Cosine search over L2-normalized vectors stored in FAISS, positions 0..n-1."""

    def __init__(self, index, kind: str) -> None:  # noqa: ANN001 - faiss.Index
        self.index = index
        self.kind = kind

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        ann_threshold: int,
        hnsw_m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
    ) -> VectorIndex:
        import faiss

        n, dim = vectors.shape
        if n >= ann_threshold:
            index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = ef_construction
            index.hnsw.efSearch = ef_search
            kind = "hnsw"
        else:
            index = faiss.IndexFlatIP(dim)
            kind = "flat"
        if n:
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return cls(index, kind)

    @property
    def size(self) -> int:
        return int(self.index.ntotal)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, positions) for one query vector; positions -1 are padding."""
        k = max(1, min(k, self.size))
        if self.size == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        scores, positions = self.index.search(query.reshape(1, -1).astype(np.float32), k)
        keep = positions[0] >= 0
        return scores[0][keep], positions[0][keep]

    def all_scores(self, query: np.ndarray) -> np.ndarray | None:
        """Exact cosine to every vector (flat indexes only; None for approximate ones)."""
        if self.kind != "flat" or self.size == 0:
            return None
        import faiss

        matrix = faiss.rev_swig_ptr(self.index.get_xb(), self.size * self.index.d)
        matrix = np.asarray(matrix).reshape(self.size, self.index.d)
        return matrix @ query.astype(np.float32)

    def scores_for(self, query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Exact cosine to the vectors at `positions`."""
        if len(positions) == 0:
            return np.zeros(0, dtype=np.float32)
        vectors = np.vstack([self.index.reconstruct(int(p)) for p in positions])
        return vectors @ query.astype(np.float32)

    def save(self, path: Path) -> None:
        import faiss

        tmp = path.with_name(path.name + ".tmp")
        faiss.write_index(self.index, str(tmp))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, ef_search: int = 128) -> VectorIndex:
        import faiss

        index = faiss.read_index(str(path))
        kind = "hnsw" if isinstance(index, faiss.IndexHNSW) else "flat"
        if kind == "hnsw":
            index.hnsw.efSearch = ef_search
        return cls(index, kind)
