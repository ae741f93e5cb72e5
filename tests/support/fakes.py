"""A deterministic stand-in embedder for fast tests of pure logic (never the only test
of a feature: the real model is used in tests/integration), and a Memory that uses it."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memcli.index.tokenize import tokenize

if TYPE_CHECKING:
    import pytest

    from memcli.services.memory import Memory


class HashingEmbedder:
    """Bag of hashed tokens, L2-normalized, in `dim` buckets (64: texts that share few
    words still look alike; more: only shared words make texts alike)."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.model_id = f"test/hashing-{dim}"
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


def fake_memory(workspace: str | Path | None = None) -> Memory:
    """A Memory on workspace that embeds with the HashingEmbedder and prints nothing."""
    from memcli.services.memory import Memory

    return Memory(workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)


def use_fake_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's Memory (shared_memory) becomes a fake_memory for this test."""
    monkeypatch.setattr("memcli.services.memory.shared_memory", fake_memory)
