"""The vector index: an exact inner-product scan over a NumPy matrix for workspaces below
`ann_threshold` (no FAISS import, one `.npy` read), FAISS HNSW above it.

An HNSW graph cannot replace a vector, so a small change to a big index appends the new
vectors and keeps a position -> slot map; the slots no position uses any more are dead
and skipped in results. Past MAX_DEAD dead slots the graph is built anew.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: dead HNSW slots tolerated before the graph is rebuilt (each costs a result slot)
MAX_DEAD = 512


class VectorIndex:
    """Cosine search over L2-normalized vectors, positions 0..n-1.

    kind "flat": `matrix` holds the vectors; kind "hnsw": `index` is a faiss.IndexHNSWFlat.
    """

    def __init__(  # noqa: ANN001 - faiss.Index
        self, index, kind: str, matrix: np.ndarray | None = None, slots: np.ndarray | None = None
    ) -> None:
        self.index = index
        self.kind = kind
        self.matrix = matrix
        #: hnsw: position -> slot in `index` (None: position i is slot i)
        self.slots = slots
        if index is not None:  # slot -> position (-1: dead), for the slots that exist now
            total = int(index.ntotal)
            if slots is None:
                self._position_of = np.arange(total, dtype=np.int64)
            else:
                self._position_of = np.full(total, -1, dtype=np.int64)
                self._position_of[slots] = np.arange(len(slots), dtype=np.int64)

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

    def updated(
        self, old_hashes: list[str], hashes: list[str], vectors: np.ndarray
    ) -> VectorIndex | None:
        """This HNSW index for entries with `hashes` (their `vectors` in order), reusing
        the slots of unchanged texts and appending the rest; None when a new build is
        due (a flat index, or too many dead slots). Appends to the shared faiss index:
        callers replace this object with the result."""
        if self.index is None or len(old_hashes) != self.size:
            return None
        old_slots = self.slots if self.slots is not None else np.arange(self.size)
        free: dict[str, list[int]] = {}
        for text_hash, slot in zip(old_hashes, old_slots.tolist(), strict=True):
            free.setdefault(text_hash, []).append(slot)
        slots = np.empty(len(hashes), dtype=np.int64)
        added: list[int] = []
        next_slot = int(self.index.ntotal)
        for position, text_hash in enumerate(hashes):
            reusable = free.get(text_hash)
            if reusable:
                slots[position] = reusable.pop()
            else:
                slots[position] = next_slot + len(added)
                added.append(position)
        if next_slot + len(added) - len(hashes) > MAX_DEAD:
            return None
        if added:
            self.index.add(np.ascontiguousarray(vectors[added], dtype=np.float32))
        return VectorIndex(self.index, "hnsw", slots=slots)

    @property
    def size(self) -> int:
        if self.matrix is not None:
            return int(self.matrix.shape[0])
        if self.slots is not None:
            return len(self.slots)
        return len(self._position_of)

    @property
    def dead(self) -> int:
        """Slots no position uses (HNSW only)."""
        return 0 if self.index is None else len(self._position_of) - self.size

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
        wanted = min(k + self.dead, int(self.index.ntotal))
        scores, labels = self.index.search(query.reshape(1, -1).astype(np.float32), wanted)
        labels = labels[0]
        known = (labels >= 0) & (labels < len(self._position_of))
        positions = np.full(len(labels), -1, dtype=np.int64)
        positions[known] = self._position_of[labels[known]]
        keep = positions >= 0
        return scores[0][keep][:k], positions[keep][:k]

    def all_scores(self, query: np.ndarray) -> np.ndarray | None:
        """Exact cosine to every vector (flat indexes only; None for approximate ones)."""
        if self.matrix is None or self.size == 0:
            return None
        return self.matrix @ query.astype(np.float32)

    def scores_for(self, query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Exact cosine to the vectors at `positions`."""
        if len(positions) == 0:
            return np.zeros(0, dtype=np.float32)
        if self.matrix is not None:
            return self.matrix[np.asarray(positions, dtype=np.int64)] @ query.astype(np.float32)
        slots = self.slots
        vectors = np.vstack(
            [self.index.reconstruct(int(p if slots is None else slots[p])) for p in positions]
        )
        return vectors @ query.astype(np.float32)

    def save(self, path: Path, slots_path: Path | None = None) -> None:
        """Write the index to `path` (and an HNSW slot map to `slots_path`)."""
        tmp = path.with_name(path.name + ".tmp")
        if self.matrix is not None:
            with open(tmp, "wb") as handle:
                np.save(handle, self.matrix, allow_pickle=False)
        else:
            import faiss

            faiss.write_index(self.index, str(tmp))
            if self.slots is not None:
                if slots_path is None:
                    raise ValueError("an index with a slot map needs a file for it")
                slots_tmp = slots_path.with_name(slots_path.name + ".tmp")
                with open(slots_tmp, "wb") as handle:
                    np.save(handle, self.slots, allow_pickle=False)
                slots_tmp.replace(slots_path)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, ef_search: int = 128, slots_path: Path | None = None) -> VectorIndex:
        if path.suffix == ".npy":
            matrix = np.load(path, allow_pickle=False)
            if matrix.ndim != 2 or matrix.dtype != np.float32:
                raise ValueError(f"{path}: not a float32 matrix")
            return cls(None, "flat", matrix)
        import faiss

        index = faiss.read_index(str(path))
        if isinstance(index, faiss.IndexHNSW):
            index.hnsw.efSearch = ef_search
            slots = None
            if slots_path is not None:
                slots = np.load(slots_path, allow_pickle=False)
                if (
                    slots.ndim != 1
                    or slots.dtype != np.int64
                    or len(slots)
                    and (slots.min() < 0 or slots.max() >= index.ntotal)
                ):
                    raise ValueError(f"{slots_path}: not a slot map for {path.name}")
            return cls(index, "hnsw", slots=slots)
        matrix = faiss.rev_swig_ptr(index.get_xb(), index.ntotal * index.d)  # an older flat index
        return cls(None, "flat", np.array(matrix).reshape(index.ntotal, index.d))
