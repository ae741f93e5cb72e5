"""The fast query path: the same sentence-transformers model exported once to ONNX and run
with onnxruntime + tokenizers, so a search in a fresh process imports no torch (and a BERT
model's ASCII query is tokenized in Python, memcli.index.wordpiece: no tokenizers either).

The families people pick work alike: BERT (all-MiniLM-L6-v2, multilingual MiniLM) takes
token_type_ids, XLM-RoBERTa (multilingual-e5, paraphrase-multilingual-mpnet) does not;
the export takes the inputs the model's tokenizer produces (`model_input_names`) and
records them, and keeps the tokenizer beside it as tokenizer.json (a sentencepiece
tokenizer converted by `tokenizers`), so a model named on the hub needs no lookup there.

The export (mean pooling and L2 normalization included) happens locally, once, into the
user cache (`$XDG_CACHE_HOME/memcli/onnx/`): up front by `init`, `install` and
`watch --background` (`prepare`), else the first time torch is loaded anyway (indexing);
it is checked against sentence-transformers (cosine ≥ 0.999) before use. Each of its
STEPS is reported (`Report`) so a first run says what it does and how far it is.

A BERT model's queries are then embedded by numpy alone (memcli.index.bert_numpy), once
checked against sentence-transformers or this export (memcli.index.query_engine): the
session here embeds the queries of the other models, and of a process that found no
record of that check.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from memcli.index.query_tokens import INPUTS, Prefetching, QueryTokens

#: what the one-time preparation does, in order (reported as step i of len(STEPS))
STEPS = (
    "loading the model with torch",
    "exporting it to ONNX",
    "optimizing the ONNX graph",
    "checking it against sentence-transformers",
)
#: report(step, of, what): step `step` (1-based) of `of` starts
Report = Callable[[int, int, str], None]

EXPORT_CHECK_TEXTS = ["How should I write Python tests?", "喜欢用中文讨论架构设计", "ok"]
MIN_COSINE = 0.999


def cache_root() -> Path:
    from memcli.core.paths import cache_dir

    return cache_dir(os.environ) / "onnx"


def export_dir(model_id: str) -> Path:
    return cache_root() / re.sub(r"[^A-Za-z0-9]+", "-", model_id).strip("-")


def model_source_dir(model_setting: str) -> Path:
    """The folder of the configured model: the bundled one, a local folder, or a hub
    name's folder in the Hugging Face cache (the name as a path when it is not there)."""
    from memcli.index.embedder import bundled_model_path, cached_model_dir

    name = model_setting.strip()
    if not name:
        return Path(bundled_model_path())
    local = Path(name).expanduser()
    return local if local.exists() else (cached_model_dir(name) or local)


def is_exported(model_id: str) -> bool:
    return (export_dir(model_id) / "model.onnx").is_file() and (
        export_dir(model_id) / "meta.json"
    ).is_file()


class OnnxEmbedder(Prefetching):
    """Embeds with onnxruntime; same vectors as sentence-transformers (cos ≥ 0.999)."""

    engine = "onnxruntime"

    def __init__(self, model_id: str, model_setting: str = "") -> None:
        import onnxruntime as ort

        # the environment switch (memcli/__init__.py) is what stops the native uploader;
        # this turns off the events themselves too
        with contextlib.suppress(Exception):
            ort.disable_telemetry_events()

        super().__init__()
        directory = export_dir(model_id)
        meta = json.loads((directory / "meta.json").read_text())
        self.model_id = model_id
        self.dim = int(meta["dim"])
        self._inputs = tuple(meta.get("inputs", INPUTS))  # exports before the field: all
        self.max_length = int(meta.get("max_seq_length", 256))
        self._tokens = query_tokens(model_id, model_setting, self.max_length)
        self._session = _session(ort, directory)

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of `texts`, one padded batch through the session."""
        return self._session.run(None, self._tokens.batch(texts, self._inputs))[0]


def query_tokens(model_id: str, model_setting: str, max_length: int) -> QueryTokens:
    """The query tokenizer of a model: the tokenizer.json kept beside its export (a
    sentencepiece one converted), else the model folder's; its wordpiece file in the
    export folder."""
    directory = export_dir(model_id)
    kept = directory / "tokenizer.json"
    source = kept if kept.is_file() else model_source_dir(model_setting) / "tokenizer.json"
    return QueryTokens(directory, source, max_length)


def model_inputs(tokenizer) -> tuple[str, ...]:  # noqa: ANN001 - a transformers tokenizer
    """The INPUTS a model's tokenizer produces: BERT's three, XLM-RoBERTa's two (it has
    no token types)."""
    names = set(getattr(tokenizer, "model_input_names", INPUTS))
    return tuple(name for name in INPUTS if name in names or name == "input_ids")


OPTIMIZED = "model.ext.onnx"  # graph-optimized, weights in OPTIMIZED_DATA beside it
OPTIMIZED_DATA = "model.ext.data"


def _session(ort, directory: Path):  # noqa: ANN001, ANN202 - onnxruntime module and session
    """An inference session on the graph-optimized copy of the export, its weights in an
    external file (written once, on first use): nothing is optimized or parsed again per
    process, so a session starts in ≈ 20 ms instead of ≈ 180 ms."""
    optimized = directory / OPTIMIZED
    options = ort.SessionOptions()
    options.intra_op_num_threads = min(4, os.cpu_count() or 1)
    # no spin-waiting worker threads: a daemon embeds one query every few dozen ms, and
    # threads that went to sleep after spinning made each embedding ≈ 8 ms slower
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    if optimized.is_file() and (directory / OPTIMIZED_DATA).is_file():
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # no weight pre-packing: a one-off process starts ≈ 40 ms sooner, and the daemon
        # must compute exactly the same vectors (pre-packed kernels round differently)
        options.add_session_config_entry("session.disable_prepacking", "1")
        return ort.InferenceSession(str(optimized), options, providers=providers)
    from memcli.store.files import file_lock

    with file_lock(directory / "optimize.lock"):
        if optimized.is_file() and (directory / OPTIMIZED_DATA).is_file():
            return _session(ort, directory)  # another process just wrote it
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        partial = directory / f"{OPTIMIZED}.partial"
        options.optimized_model_filepath = str(partial)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", OPTIMIZED_DATA
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
        session = ort.InferenceSession(str(directory / "model.onnx"), options, providers=providers)
        try:
            os.replace(partial, optimized)  # last: its weights file is complete by now
        except OSError:
            return session  # cannot write the cache: use the session at hand
        with contextlib.suppress(OSError):
            (directory / "model.opt.onnx").unlink()  # the older, self-contained copy
    return _session(ort, directory)  # the same session every later process gets


def export(model_setting: str, reference, report: Report | None = None) -> bool:  # noqa: ANN001
    """Export the model behind `reference` (a SentenceTransformerEmbedder) to ONNX, verify
    it, and keep it only if it matches; `report` hears of each of STEPS as it starts.
    Returns True when an export is in place."""
    model_id = reference.model_id
    if is_exported(model_id):
        return True

    def step(number: int) -> None:
        if report is not None:
            report(number, len(STEPS), STEPS[number - 1])

    step(1)
    try:
        import torch
    except ImportError:
        return False
    directory = export_dir(model_id)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f"model.{os.getpid()}.onnx.tmp"
    try:
        loaded = reference._load()
        model = loaded[0].auto_model  # the transformer of the loaded sentence-transformers
        model.eval()
        inputs = model_inputs(loaded.tokenizer)

        class Pooled(torch.nn.Module):
            def __init__(self, inner: torch.nn.Module) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *given):  # noqa: ANN002, ANN201 - tensors named by `inputs`
                named = dict(zip(inputs, given, strict=True))
                hidden = self.inner(**named).last_hidden_state
                mask = named["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, p=2, dim=1)

        step(2)
        ids = torch.ones((1, 8), dtype=torch.long)
        axes = {0: "batch", 1: "sequence"}
        import warnings

        with (
            warnings.catch_warnings(),
            open(os.devnull, "w") as devnull,
            contextlib.redirect_stderr(devnull),
        ):
            warnings.simplefilter("ignore")
            example = {"input_ids": ids, "attention_mask": ids, "token_type_ids": ids * 0}
            torch.onnx.export(
                Pooled(model),
                tuple(example[name] for name in inputs),
                str(tmp),
                input_names=list(inputs),
                output_names=["embedding"],
                dynamic_axes={**{name: axes for name in inputs}, "embedding": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
        max_len = getattr(loaded, "max_seq_length", 256) or 256
        meta = {
            "model": model_id,
            "dim": reference.dim,
            "max_seq_length": int(max_len),
            "inputs": list(inputs),
        }
        loaded.tokenizer.backend_tokenizer.save(str(directory / "tokenizer.json"))
        os.replace(tmp, directory / "model.onnx")
        (directory / "meta.json.tmp").write_text(json.dumps(meta))
        os.replace(directory / "meta.json.tmp", directory / "meta.json")
        step(3)
        candidate = OnnxEmbedder(model_id, model_setting)  # writes the optimized copy
        step(4)
        expected = reference.embed(EXPORT_CHECK_TEXTS)
        got = candidate.embed(EXPORT_CHECK_TEXTS)
        if float((expected * got).sum(axis=1).min()) < MIN_COSINE:
            raise ValueError("exported model does not match")
        return True
    except Exception:  # noqa: BLE001 - the fast path is optional; fall back to torch
        for name in (
            "model.onnx",
            OPTIMIZED,
            OPTIMIZED_DATA,
            "meta.json",
            "tokenizer.json",
            tmp.name,
        ):
            with contextlib.suppress(OSError):
                (directory / name).unlink()
        return False
