"""A deterministic stand-in embedder for fast tests of pure logic (never the only test
of a feature: the real model is used in test_search.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memcli.index.tokenize import tokenize


class HashingEmbedder:
    """Bag of hashed tokens, L2-normalized."""

    model_id = "test/hashing-64"
    dim = 64

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text) or ["empty"]:
                digest = hashlib.sha256(token.encode()).digest()
                out[row, digest[0] % self.dim] += 1.0
            out[row] /= np.linalg.norm(out[row]) or 1.0
        return out
