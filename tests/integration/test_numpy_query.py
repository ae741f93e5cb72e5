"""The numpy query path on the REAL bundled model (issue 36): memcli.index.bert_numpy gives
the vectors of sentence-transformers and of the ONNX export (one by one and in a padded
batch; past the model's length, Chinese, empty, punctuation), and memcli.index.
query_engine uses it only once checked (every process to the same bits, whatever its
BLAS threads): a first process without a record checks it
against the export's session and keeps onnxruntime, the next ones take numpy; a record
of other weights is no record; `doctor` says which engine embeds queries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

TEXTS = [
    "How should I write Python tests?",
    "喜欢用中文讨论架构设计",
    "ok",
    "",
    "?!",
    "word " * 400,  # past the model's 256 tokens: truncated as sentence-transformers does
    "Don't deploy on Fridays; use the staging-2 cluster (see OPS-1234) at 10:30am!",
    "café crème 🍵 naïve",
    "a [MASK] here",
]


@pytest.fixture(scope="module")
def engines(exported):  # noqa: ANN001, ANN201 - (sentence-transformers, ONNX, numpy)
    from memcli.index import onnx_embedder, query_engine
    from memcli.index.embedder import model_id_for

    model_id = model_id_for("")
    onnx = onnx_embedder.OnnxEmbedder(model_id)
    return exported, onnx, query_engine.numpy_embedder(model_id, "", onnx.max_length)


def test_numpy_gives_the_vectors_of_sentence_transformers_and_onnx(engines) -> None:  # noqa: ANN001
    """Each vector within 1e-5 of the reference's (a score moves by at most as much):
    the LayerNorm's eps, BERT's exact GELU and the mask all matter at that bound."""
    from memcli.index.query_engine import MAX_DISTANCE, MIN_COSINE, agreement

    reference, onnx, numpy_path = engines
    alone = numpy_path.embed(TEXTS)
    numpy_path.prefetch(TEXTS)  # an inject's prompt parts: one padded batch
    batched = numpy_path.embed(TEXTS)
    assert not numpy_path._fetched  # each taken once
    assert alone.dtype == np.float32 and alone.shape == (len(TEXTS), 384)
    for expected in (reference.embed(TEXTS), onnx.embed(TEXTS)):
        for got in (alone, batched):
            cosine, distance = agreement(expected, got)
            assert cosine >= MIN_COSINE and distance <= MAX_DISTANCE, (cosine, distance)
    assert MAX_DISTANCE == 1e-5 and MIN_COSINE == 0.99999


def _private_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache of this test's own holding the session's export (linked, not
    copied) and no record of a check."""
    from memcli.index import onnx_embedder
    from memcli.index.embedder import model_id_for

    shared = onnx_embedder.export_dir(model_id_for(""))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    mine = onnx_embedder.export_dir(model_id_for(""))
    mine.mkdir(parents=True)
    for name in ("model.onnx", "meta.json", "tokenizer.json", onnx_embedder.OPTIMIZED,
                 onnx_embedder.OPTIMIZED_DATA):
        if (shared / name).exists():
            os.symlink(shared / name, mine / name)
    return mine


def test_a_first_process_checks_numpy_against_onnx_then_numpy_serves(
    exported, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:
    from memcli.index import query_engine
    from memcli.index.bert_numpy import NumpyEmbedder
    from memcli.index.embedder import model_id_for
    from memcli.index.onnx_embedder import OnnxEmbedder

    mine = _private_export(tmp_path, monkeypatch)
    model_id = model_id_for("")
    assert query_engine.checked(model_id, "") is None
    assert "not checked yet" in query_engine.engine_of(model_id, "")
    first = query_engine.make(model_id, "")
    assert isinstance(first, OnnxEmbedder)  # this process: the session it had to start
    record = query_engine.checked(model_id, "")
    assert record is not None and record["against"] == "onnxruntime"
    assert record["distance"] <= query_engine.MAX_DISTANCE
    second = query_engine.make(model_id, "")
    assert isinstance(second, NumpyEmbedder)
    assert query_engine.engine_of(model_id, "").startswith("numpy (checked against onnxruntime")
    query = ["how do we deploy the billing service on friday"]
    assert np.abs(first.embed(query) - second.embed(query)).max() < 1e-6

    # a record of other weights (the model file changed since): no record, checked anew
    (kept,) = mine.glob("numpy-*.json")
    stale = json.loads(kept.read_text())
    stale["weights"]["mtime_ns"] += 1
    kept.write_text(json.dumps(stale))
    assert query_engine.checked(model_id, "") is None
    assert isinstance(query_engine.make(model_id, ""), OnnxEmbedder)
    assert query_engine.checked(model_id, "") is not None  # written anew


def test_a_failed_check_keeps_onnxruntime(
    exported, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:
    """A numpy path that does not give the reference's vectors (here: a LayerNorm eps of
    1e-5, as a wrong config would) is never used: no record, onnxruntime embeds."""
    from memcli.index import bert_numpy, query_engine
    from memcli.index.embedder import model_id_for
    from memcli.index.onnx_embedder import OnnxEmbedder

    _private_export(tmp_path, monkeypatch)
    real = bert_numpy.Bert.__init__

    def wrong_eps(self: bert_numpy.Bert, folder: Path) -> None:
        real(self, folder)
        self.eps = 1e-5

    monkeypatch.setattr(bert_numpy.Bert, "__init__", wrong_eps)
    model_id = model_id_for("")
    assert isinstance(query_engine.make(model_id, ""), OnnxEmbedder)
    assert query_engine.checked(model_id, "") is None
    assert isinstance(query_engine.make(model_id, ""), OnnxEmbedder)


def test_doctor_says_which_engine_embeds_queries(workspace: Path, exported) -> None:  # noqa: ANN001
    from typer.testing import CliRunner

    from memcli.surfaces.cli.app import app
    from tests.support.cli import envelope

    done = CliRunner().invoke(app, ["-w", str(workspace), "doctor", "--json"])
    checks = {c["name"]: c for c in envelope(done.stdout)["checks"]}
    assert "queries: numpy (checked against" in checks["onnx"]["detail"]


_EMBED_BITS = """
import hashlib, sys
from memcli.index import query_engine
from memcli.index.embedder import model_id_for
texts = sys.argv[1:]
embedder = query_engine.make(model_id_for(""), "")
assert type(embedder).__name__ == "NumpyEmbedder", embedder
single = embedder.embed(texts)
embedder.prefetch(texts)
print(hashlib.sha256(single.tobytes() + embedder.embed(texts).tobytes()).hexdigest())
"""


def test_every_process_embeds_to_the_same_bits(exported) -> None:  # noqa: ANN001
    """A cold read has one BLAS thread (memcli.surfaces.blas), a watcher its default
    ones: the forward pass runs on one either way, so both give the same bits (a served
    and a cold search print the same scores)."""
    texts = [TEXTS[0], TEXTS[5], "deploy billing-service on Friday (OPS-1234) at 10:30"]
    digests = set()
    for threads in ("1", "2", None):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if threads:
            env["OPENBLAS_NUM_THREADS"] = threads
        done = subprocess.run(
            [sys.executable, "-c", _EMBED_BITS, *texts],
            capture_output=True, text=True, env=env, timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        digests.add(done.stdout.strip())
    assert len(digests) == 1, digests
