"""Which engine embeds a process's queries: numpy alone (memcli.index.bert_numpy) once it
was checked against the model's reference, onnxruntime (memcli.index.onnx_embedder)
otherwise, and torch (sentence-transformers) when there is no export either.

Every process takes numpy first, a one-off one (a cold search, inject, hook) and a
long-lived one (a watcher, the MCP server) alike: one path, the same vectors to the bit
(the forward pass on one BLAS thread everywhere: bert_numpy.one_blas_thread), so a
served and a cold search print the same scores. A cold search then imports no
onnxruntime and starts no session (≈ 100 ms of CPU); a query costs a watcher about what
onnxruntime's did (docs/benchmarks.md). The vectors are the ones the index was built with: within
MAX_DISTANCE of the reference's.

The check: the numpy path embeds CHECK_TEXTS (the export's, a text past the model's
length, Chinese, empty, punctuation), one by one and together (as an inject), and each
vector must match the reference's — the sentence-transformers model when the export is
made (`export`), else the ONNX session (`prepare`, or the first one-off process that
finds no record). What passed is kept in the export folder (`numpy-2-<the weights' path
hashed>.json`: the weights' and the tokenizer's path, size and modification time, the
cosine and distance); a record that does not match the files on disk is no record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memcli.index import onnx_embedder

if TYPE_CHECKING:
    from memcli.index.bert_numpy import NumpyEmbedder
    from memcli.index.embedder import Embedder

#: what the numpy path must embed as its reference does before a search uses it
CHECK_TEXTS = (
    *onnx_embedder.EXPORT_CHECK_TEXTS,
    "",
    "?!... ;; -- (())",
    "Deploy the billing service on Friday, after the migrations ran on staging. " * 30,
    "数据库迁移先在预发环境跑一遍，发布前检查回滚脚本",
    "café crème, naïve résumé — 10:30am",
)
MIN_COSINE = 0.99999
#: and no vector farther than this from its reference (L2): a score, the dot product
#: with a unit vector, moves by at most as much (a LayerNorm eps of 1e-5 instead of
#: the model's 1e-12, or tanh's GELU, keep the cosine ≥ MIN_COSINE but move ≈ 1e-3)
MAX_DISTANCE = 1e-5
#: 2: the forward pass's GELU in float32 (a record of version 1 checked the float64 one);
#: the version is in the file's name too, so two memcli versions on one machine keep a
#: record each instead of checking again in turn
_VERSION = 2
_PREFIX = f"numpy-{_VERSION}-"
_MAGIC = f"memcli-numpy-check-{_VERSION}"


def _record_path(model_id: str, weights: Path) -> Path:
    digest = hashlib.sha256(str(weights).encode("utf-8")).hexdigest()[:16]
    return onnx_embedder.export_dir(model_id) / f"{_PREFIX}{digest}.json"


def _stamp(path: Path) -> dict[str, object]:
    st = os.stat(path)
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _files(model_setting: str) -> tuple[Path, Path] | None:
    """The model folder and its weights file, when the numpy path supports the model."""
    from memcli.index import bert_numpy

    folder = onnx_embedder.model_source_dir(model_setting)
    if bert_numpy.unsupported(folder) is not None:
        return None
    return folder, bert_numpy.transformer_dir(folder) / bert_numpy.WEIGHTS


def checked(model_id: str, model_setting: str) -> dict | None:
    """The record of a passed check of the numpy path for this model as it is on disk,
    or None."""
    try:
        folder = onnx_embedder.model_source_dir(model_setting)
        from memcli.index.bert_numpy import WEIGHTS, transformer_dir

        weights = transformer_dir(folder) / WEIGHTS
        record = json.loads(_record_path(model_id, weights).read_text(encoding="utf-8"))
        if not isinstance(record, dict) or record.get("magic") != _MAGIC:
            return None
        if record.get("weights") != _stamp(weights):
            return None
        if record.get("tokenizer") != _stamp(Path(record["tokenizer"]["path"])):
            return None
        return record
    except (OSError, ValueError, KeyError, TypeError):
        return None


def numpy_embedder(model_id: str, model_setting: str, max_length: int) -> NumpyEmbedder:
    """The numpy path for the model (unchecked: `make` uses it only once checked)."""
    from memcli.index.bert_numpy import NumpyEmbedder

    folder = onnx_embedder.model_source_dir(model_setting)
    tokens = onnx_embedder.query_tokens(model_id, model_setting, max_length)
    return NumpyEmbedder(model_id, folder, tokens)


def agreement(expected: np.ndarray, got: np.ndarray) -> tuple[float, float]:
    """The smallest cosine and the largest L2 distance between the rows of two
    embeddings of the same texts (0 and inf when their shapes differ)."""
    if expected.shape != got.shape or not len(expected):
        return 0.0, float("inf")
    cosine = float((expected * got).sum(axis=1).min())
    distance = float(np.linalg.norm(expected.astype(np.float64) - got, axis=1).max())
    return cosine, distance


def check_against(reference: Embedder, model_setting: str, max_length: int, against: str) -> bool:
    """Check the numpy path against `reference` (an embedder of the same model) on
    CHECK_TEXTS, one by one and together (as an inject); keep the record when every cosine
    is ≥ MIN_COSINE and every distance ≤ MAX_DISTANCE. True when it passed."""
    files = _files(model_setting)
    if files is None:
        return False
    _, weights = files
    model_id = reference.model_id
    try:
        candidate = numpy_embedder(model_id, model_setting, max_length)
        texts = list(CHECK_TEXTS)
        expected = reference.embed(texts)
        cosine, distance = agreement(expected, candidate.embed(texts))
        candidate.prefetch(texts)  # together, as an inject: the same vectors
        batched = agreement(expected, candidate.embed(texts))
        cosine, distance = min(cosine, batched[0]), max(distance, batched[1])
        if not (cosine >= MIN_COSINE and distance <= MAX_DISTANCE):
            return False
        record = {
            "magic": _MAGIC,
            "model": model_id,
            "weights": _stamp(weights),
            "tokenizer": _stamp(candidate.tokens.source),
            "max_length": max_length,
            "cosine": cosine,
            "distance": distance,
            "against": against,
        }
        path = _record_path(model_id, weights)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, path)
        return True
    except Exception:  # noqa: BLE001 - the numpy path is optional: onnxruntime stays
        return False


def ensure_checked(model_id: str, model_setting: str) -> bool:
    """Check the numpy path against the ONNX export now unless a check is on record
    (`prepare` and the first process that finds none); True when numpy may be used."""
    if checked(model_id, model_setting) is not None:
        return True
    if _files(model_setting) is None or not onnx_embedder.is_exported(model_id):
        return False
    try:
        reference = onnx_embedder.OnnxEmbedder(model_id, model_setting)
    except Exception:  # noqa: BLE001 - a broken export: neither fast path
        return False
    return check_against(reference, model_setting, reference.max_length, "onnxruntime")


def export(
    model_setting: str, reference: Embedder, report: onnx_embedder.Report | None = None
) -> bool:
    """The ONNX export of the model behind `reference` (a SentenceTransformerEmbedder:
    onnx_embedder.export), then the check of the numpy path unless one is on record:
    against `reference` when its model is loaded (torch), else against the export's
    session. True when the export is in place."""
    if not onnx_embedder.export(model_setting, reference, report):
        return False
    model_id = reference.model_id
    if checked(model_id, model_setting) is None and _files(model_setting) is not None:
        if getattr(reference, "_model", None) is not None:  # loaded: no torch to load
            meta = json.loads((onnx_embedder.export_dir(model_id) / "meta.json").read_text())
            max_length = int(meta.get("max_seq_length", 256))
            check_against(reference, model_setting, max_length, "sentence-transformers")
        else:
            ensure_checked(model_id, model_setting)
    return True


def prepare(
    model_setting: str, batch_size: int = 64, report: onnx_embedder.Report | None = None
) -> bool:
    """Make the ONNX export of the configured model now, if it is not there yet, reporting
    each step, and check the numpy path; True when the export is in place (False: torch
    is missing or the export failed, and searches use torch)."""
    from memcli.index.embedder import SentenceTransformerEmbedder, model_id_for

    model_id = model_id_for(model_setting)
    if onnx_embedder.is_exported(model_id):
        ensure_checked(model_id, model_setting)
        return True
    return export(model_setting, SentenceTransformerEmbedder(model_setting, batch_size), report)


def make(model_id: str, model_setting: str) -> Embedder | None:
    """The query embedder of this process (module docstring), None for torch."""
    record = checked(model_id, model_setting)
    if record is not None:
        with contextlib.suppress(Exception):  # a model file gone bad: onnxruntime
            return numpy_embedder(model_id, model_setting, int(record["max_length"]))
    if not onnx_embedder.is_exported(model_id):
        return None
    try:
        fast = onnx_embedder.OnnxEmbedder(model_id, model_setting)
    except Exception:  # noqa: BLE001 - a broken export: use torch instead
        return None
    if record is None and _files(model_setting) is not None:
        # no check on record yet (an export made before this path): once, now; this
        # process keeps onnxruntime, the next ones take numpy
        check_against(fast, model_setting, fast.max_length, "onnxruntime")
    return fast


def engine_of(model_id: str, model_setting: str, enabled: bool = True) -> str:
    """Which engine a one-off process embeds queries with, and why (`memcli doctor`)."""
    if not enabled:
        return "torch ([index] onnx = false)"
    record = checked(model_id, model_setting)
    if record is not None:
        return (
            f"numpy (checked against {record.get('against')}: vectors within "
            f"{float(record.get('distance', 0.0)):.1e})"
        )
    try:
        from memcli.index.bert_numpy import unsupported

        why = unsupported(onnx_embedder.model_source_dir(model_setting))
    except Exception as exc:  # noqa: BLE001 - the folder cannot be read: the reason
        why = str(exc)
    if why is not None:
        return f"onnxruntime (numpy path: {why})"
    return "onnxruntime (numpy path not checked yet: the next search checks it)"
