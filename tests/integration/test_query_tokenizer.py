"""The ONNX query path tokenizes ASCII queries in Python (memcli.index.wordpiece) and
gives the very vectors the `tokenizers` path gives, on the bundled model's real export:
the first embedder keeps the tokenizer's file beside the export, the next ones load it
and never import `tokenizers` for an ASCII query; anything else goes through
`tokenizers`; a damaged file is written anew."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

QUERIES = [
    "How should I write Python tests?",
    "deploy billing-service on Friday (OPS-1234) at 10:30",
    "x" * 120,
]
OTHERS = ["喜欢用中文讨论架构设计", "café crème", "a [MASK] here"]


def _embedder():  # noqa: ANN202 - OnnxEmbedder
    from memcli.index.embedder import model_id_for
    from memcli.index.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(model_id_for(""))


def _kept_file() -> Path:
    """The bundled model's kept wordpiece file (memcli.index.wordpiece.path_for)."""
    from memcli.index import wordpiece
    from memcli.index.embedder import model_id_for
    from memcli.index.onnx_embedder import export_dir

    embedder = _embedder()
    key = wordpiece.source_key(embedder._tokens.source, embedder._tokens.max_length)
    return wordpiece.path_for(export_dir(model_id_for("")), key)


def test_same_vectors_as_the_tokenizers_path(exported) -> None:  # noqa: ANN001

    kept = _kept_file()
    kept.unlink(missing_ok=True)
    first = _embedder()  # writes the file
    assert first._tokens._fast is not None and kept.is_file()
    second = _embedder()  # loads it
    assert second._tokens._fast is not None
    vectors = second.embed(QUERIES)
    assert second._tokens._hub_tokenizer is None  # `tokenizers` never loaded for these
    reference = _embedder()
    reference._tokens._fast = None  # every text through `tokenizers`
    assert np.array_equal(vectors, reference.embed(QUERIES))
    assert np.array_equal(second.embed(OTHERS), reference.embed(OTHERS))
    assert second._tokens._hub_tokenizer is not None  # loaded for the others
    second.prefetch(QUERIES + OTHERS)  # one padded batch: the same vectors
    batch = second.embed(QUERIES + OTHERS)
    assert np.allclose(batch, reference.embed(QUERIES + OTHERS), atol=1e-5)


def test_a_damaged_file_is_written_anew(exported) -> None:  # noqa: ANN001

    kept = _kept_file()
    _embedder()
    raw = kept.read_bytes()
    kept.write_bytes(raw[: len(raw) // 3])
    damaged = _embedder()  # not used: written anew from `tokenizers`
    assert damaged._tokens._hub_tokenizer is not None
    assert kept.read_bytes() == raw
    assert _embedder()._tokens._fast is not None
