"""A BERT sentence embedder in numpy alone: a search embeds its query without importing
onnxruntime (≈ 80 ms of CPU) or starting its session (≈ 20 ms) (issue 36).

It reads the weights straight from the model folder's `model.safetensors` (a JSON header,
then raw little-endian arrays: each a view of one read-only memory map, so the 30522-row
word-embedding table is touched only at the query's rows) and runs what
sentence-transformers runs for a BERT model with mean pooling: the embeddings (word +
position + token type, LayerNorm), each layer's self-attention (the padding masked),
dense + residual + LayerNorm, the intermediate dense with BERT's exact GELU (erf: numpy
has none, `erf` below is a rational approximation in float32 within 5e-7), dense + residual +
LayerNorm; then the mean over the attention mask and the L2 normalization every memcli
vector gets (the Normalize module, or `normalize_embeddings=True`), in float32.

`unsupported` says why a model folder is not for this path (not BERT, another pooling, a
Dense module, no safetensors); memcli.index.query_engine then uses onnxruntime, and
checks this path against it (or sentence-transformers) before a search uses it.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memcli.index.query_tokens import Prefetching, QueryTokens

WEIGHTS = "model.safetensors"
#: safetensors dtypes read (F16 is widened to float32 when loaded)
_DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2")}
#: Eigen's / XLA's rational erf (odd numerator, even denominator, in x²), made for float32
#: on [-4, 4] (erf is ±1 beyond in float32), evaluated in float32: |error| ≤ 5e-7 against
#: math.erf (≈ 7 float32 steps near ±1; 6.5e-8 in float64). In float64 it cost a quarter
#: of the forward pass; in float32 a third to a seventh of that, and the vectors move by
#: ≈ 1e-6 (a tenth of what the check allows, memcli.index.query_engine.MAX_DISTANCE)
_ERF_P = tuple(np.float32(c) for c in (
    -2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
    -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
    -1.60960333262415e-02))
_ERF_Q = tuple(np.float32(c) for c in (
    -1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
    -7.37332916720468e-03, -1.42647390514189e-02))
_SQRT_HALF = np.float32(0.7071067811865476)
_HALF, _ONE = np.float32(0.5), np.float32(1.0)


def _erf_into(z: np.ndarray) -> np.ndarray:
    """erf of each element of float32 `z`, computed in place (`z` is overwritten) and
    returned."""
    np.clip(z, -4.0, 4.0, out=z)
    z2 = np.square(z)
    p = z2 * _ERF_P[0]
    p += _ERF_P[1]
    for c in _ERF_P[2:]:
        p *= z2
        p += c
    q = z2 * _ERF_Q[0]
    q += _ERF_Q[1]
    for c in _ERF_Q[2:]:
        q *= z2
        q += c
    z *= p
    z /= q
    return z


def erf(x: np.ndarray) -> np.ndarray:
    """erf of each element, in float32 (|error| ≤ 5e-7)."""
    return _erf_into(np.array(x, dtype=np.float32))


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x · Φ(x) = x · (1 + erf(x / √2)) / 2, in float32."""
    x = np.asarray(x, dtype=np.float32)
    phi = _erf_into(x * _SQRT_HALF)
    phi += _ONE
    phi *= _HALF
    phi *= x
    return phi


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as torch)."""
    centered = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(np.square(centered), axis=-1, keepdims=True)
    centered /= np.sqrt(variance + np.float32(eps))
    centered *= weight
    centered += bias
    return centered


_limiter: list = []  # [threadpoolctl's controller of the BLAS libraries, or None]


def one_blas_thread() -> contextlib.AbstractContextManager:
    """The forward pass's matrix products on one BLAS thread, in every process: the
    same bits in a watcher as in a cold search (two threads sum in another order), and
    no thread spinning for products this small (a query: 18 ms of CPU on one thread, 155
    on two, on the loaded 2-core machine). Nothing to do when OPENBLAS_NUM_THREADS=1 (a
    one-off read: memcli.surfaces.blas), else threadpoolctl's limit for the call."""
    if os.environ.get("OPENBLAS_NUM_THREADS") == "1":
        return contextlib.nullcontext()
    if not _limiter:
        try:
            from threadpoolctl import ThreadpoolController

            _limiter.append(ThreadpoolController().select(user_api="blas"))
        except Exception:  # noqa: BLE001 - not installed or not readable: as it is
            _limiter.append(None)
    return _limiter[0].limit(limits=1) if _limiter[0] is not None else contextlib.nullcontext()


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float arrays of a safetensors file, each a read-only view of one memory map
    (F16 widened to a float32 copy); ValueError for a file that is not one."""
    with open(path, "rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        if not 2 <= size <= 100_000_000:
            raise ValueError(f"{path}: not a safetensors file")
        header = json.loads(handle.read(size))
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors header")
    base, arrays = 8 + size, {}
    for name, spec in header.items():
        if name == "__metadata__" or spec.get("dtype") not in _DTYPES:
            continue
        dtype = _DTYPES[spec["dtype"]]
        shape = tuple(int(n) for n in spec["shape"])
        start, end = (int(n) for n in spec["data_offsets"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - start != count * dtype.itemsize or base + end > len(mapped):
            raise ValueError(f"{path}: {name} does not fit its offsets")
        array = np.frombuffer(mapped, dtype=dtype, count=count, offset=base + start)
        array = array.reshape(shape)
        arrays[name] = array if dtype.itemsize == 4 else array.astype(np.float32)
    return arrays


def _json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def transformer_dir(folder: Path) -> Path:
    """Where a sentence-transformers folder keeps its transformer (modules.json's first
    module: the folder itself, or an older layout's 0_Transformer/)."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        return folder / str(modules[0].get("path", ""))
    except (OSError, ValueError, IndexError, KeyError, TypeError, AttributeError):
        return folder


def unsupported(folder: Path) -> str | None:
    """Why the model in `folder` (a sentence-transformers folder) is not for this path,
    or None: BERT with absolute positions and GELU, mean pooling over the tokens and
    nothing after it but Normalize, its weights in model.safetensors."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
    except (OSError, ValueError, KeyError, TypeError):
        return "no sentence-transformers modules.json"
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        return f"modules {', '.join(kinds)} (Transformer, Pooling[, Normalize] only)"
    pooling = _json(folder / str(modules[1].get("path", "")) / "config.json")
    # sentence-transformers 5 writes "pooling_mode": "mean", earlier ones a flag per mode
    modes = {k[13:] for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True}
    named = pooling.get("pooling_mode")
    modes |= set(named if isinstance(named, list) else [named] if named else [])
    if modes not in ({"mean_tokens"}, {"mean"}):
        return f"pooling {', '.join(sorted(map(str, modes))) or 'unknown'} (mean only)"
    inner = transformer_dir(folder)
    config = _json(inner / "config.json")
    if config.get("model_type") != "bert":
        return f"model type {config.get('model_type')!r} (bert only)"
    if config.get("hidden_act", "gelu") != "gelu":
        return f"activation {config.get('hidden_act')!r} (gelu only)"
    if config.get("position_embedding_type", "absolute") != "absolute":
        return f"{config.get('position_embedding_type')} positions (absolute only)"
    if not (inner / WEIGHTS).is_file():
        return f"no {WEIGHTS}"
    return None


class Bert:
    """The weights of one BERT model and its forward pass (module docstring)."""

    def __init__(self, folder: Path) -> None:
        inner = transformer_dir(folder)
        config = _json(inner / "config.json")
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        arrays = read_safetensors(inner / WEIGHTS)
        found = [k for k in arrays if k.endswith("embeddings.word_embeddings.weight")]
        if len(found) != 1:
            raise ValueError(f"{inner / WEIGHTS}: no word embeddings")
        prefix = found[0][: -len("embeddings.word_embeddings.weight")]  # "" or "bert."

        def get(name: str) -> np.ndarray:
            return arrays[prefix + name]

        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight")
        self.token_type = get("embeddings.token_type_embeddings.weight")
        self.norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            at = f"encoder.layer.{i}."
            # torch's Linear keeps (out, in): x @ weight.T, a transposed view (no copy)
            self.layers.append(
                tuple(
                    get(at + name + suffix).T if suffix == ".weight" else get(at + name + suffix)
                    for name in (
                        "attention.self.query",
                        "attention.self.key",
                        "attention.self.value",
                        "attention.output.dense",
                        "attention.output.LayerNorm",
                        "intermediate.dense",
                        "output.dense",
                        "output.LayerNorm",
                    )
                    for suffix in (".weight", ".bias")
                )
            )

    def forward(
        self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray | None = None
    ) -> np.ndarray:
        """The L2-normalized mean-pooled embedding of each row of `ids` (batch × length,
        `mask` 1 on its tokens, 0 on its padding), float32."""
        batch, length = ids.shape
        heads, size = self.heads, self.hidden // self.heads
        x = self.word[ids] + self.position[:length]
        x += self.token_type[types] if types is not None else self.token_type[0]
        x = layer_norm(x, *self.norm, self.eps).reshape(batch * length, self.hidden)
        keep = mask.astype(np.float32)
        # scores of the padding: the smallest float32, as transformers' extended mask
        masked = ((1.0 - keep) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(size))
        for (wq, bq, wk, bk, wv, bv, wo, bo, n1w, n1b, wi, bi, wo2, bo2, n2w, n2b) in self.layers:

            def split(h: np.ndarray) -> np.ndarray:
                return h.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

            q, k, v = split(x @ wq + bq), split(x @ wk + bk), split(x @ wv + bv)
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += masked
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, self.hidden)
            attended = context @ wo
            attended += bo
            attended += x
            attended = layer_norm(attended, n1w, n1b, self.eps)
            inner = attended @ wi
            inner += bi
            out = gelu(inner) @ wo2
            out += bo2
            out += attended
            x = layer_norm(out, n2w, n2b, self.eps)
        hidden = x.reshape(batch, length, self.hidden)
        summed = (hidden * keep[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(keep.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


class NumpyEmbedder(Prefetching):
    """Query embeddings by `Bert` in numpy; the same vectors as the ONNX export and
    sentence-transformers (memcli.index.query_engine checks before use)."""

    engine = "numpy"

    def __init__(self, model_id: str, folder: Path, tokens: QueryTokens) -> None:
        super().__init__()
        self.model_id = model_id
        self._bert = Bert(folder)
        self.dim = self._bert.hidden
        self.tokens = tokens

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of `texts`, each text's forward pass alone: no padding, so an
        inject's short prompt parts cost their own length, not the prompt's (≈ 40% less
        CPU for a prompt and three parts), and a text's vector never depends on what it
        was embedded with."""
        names = ("input_ids", "attention_mask", "token_type_ids")
        vectors = []
        with one_blas_thread():
            for text in texts:
                row = self.tokens.batch([text], names)
                vectors.append(self._bert.forward(*(row[name] for name in names)))
        return np.concatenate(vectors) if vectors else np.zeros((0, self.dim), np.float32)
