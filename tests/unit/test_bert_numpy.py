"""The numpy BERT forward pass's parts without the real model (memcli.index.bert_numpy):
erf and GELU against math.erf, the safetensors reader on files written here, which model
folders it takes, and a tiny random BERT's forward pass (the padding of a batch masked,
a "bert." prefix, unit vectors). Its vectors against sentence-transformers and the ONNX
export: tests/integration/test_numpy_query.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from memcli.index import bert_numpy


def test_erf_is_within_5e_7_of_math_erf() -> None:
    xs = np.concatenate([np.linspace(-7, 7, 140_001), [0.0, -0.0, 1e-8, -1e-8, 30, -30]])
    expected = np.array([math.erf(x) for x in xs])
    got = bert_numpy.erf(xs)
    assert got.dtype == np.float32  # the forward pass's type: 7x quicker than float64
    assert np.abs(got - expected).max() <= 5e-7  # ≈ 7 float32 steps near ±1


def test_gelu_is_berts_exact_gelu() -> None:
    xs = np.linspace(-12, 12, 24_001).astype(np.float32)
    expected = np.array([x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in xs.astype(float)])
    got = bert_numpy.gelu(xs)
    assert got.dtype == np.float32
    assert np.abs(got - expected).max() <= 1e-6  # float32 rounding of values up to 12
    tanh = 0.5 * xs * (1 + np.tanh(0.7978845608 * (xs + 0.044715 * xs**3)))
    assert np.abs(tanh - expected).max() > 1e-4  # the approximation it is not


def write_safetensors(path: Path, arrays: dict[str, np.ndarray], pad: int = 0) -> None:
    """A safetensors file of `arrays` (F32 / F16), as the format says."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, array in arrays.items():
        raw = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        kind = {"float32": "F32", "float16": "F16", "int64": "I64"}[array.dtype.name]
        header[name] = {
            "dtype": kind,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode() + b" " * pad
    path.write_bytes(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def test_safetensors_arrays_are_read_at_their_offsets(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {
        "ids": np.arange(6, dtype=np.int64).reshape(1, 6),  # not a float: left out
        "a": rng.standard_normal((3, 5)).astype(np.float32),
        "half": rng.standard_normal((4,)).astype(np.float16),
        "b": rng.standard_normal((7,)).astype(np.float32),
    }
    write_safetensors(tmp_path / "m.safetensors", arrays, pad=3)  # unaligned data
    read = bert_numpy.read_safetensors(tmp_path / "m.safetensors")
    assert set(read) == {"a", "half", "b"}
    assert np.array_equal(read["a"], arrays["a"]) and np.array_equal(read["b"], arrays["b"])
    assert read["half"].dtype == np.float32
    assert np.array_equal(read["half"], arrays["half"].astype(np.float32))
    assert not read["a"].flags.writeable  # a view of the file, never written


def test_a_file_that_is_not_safetensors_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\xff" * 64)
    with pytest.raises(ValueError, match="not a safetensors"):
        bert_numpy.read_safetensors(bad)
    write_safetensors(bad, {"a": np.zeros(4, dtype=np.float32)})
    raw = bad.read_bytes()
    bad.write_bytes(raw[:-4])  # the array runs past the end
    with pytest.raises(ValueError, match="does not fit"):
        bert_numpy.read_safetensors(bad)


HIDDEN, HEADS, LAYERS, INNER, VOCAB, POSITIONS = 16, 2, 2, 24, 50, 20


def tiny_bert(folder: Path, prefix: str = "", **config: object) -> Path:
    """A sentence-transformers folder of a random BERT (mean pooling, Normalize)."""
    rng = np.random.default_rng(1)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    arrays = {
        "embeddings.word_embeddings.weight": w(VOCAB, HIDDEN),
        "embeddings.position_embeddings.weight": w(POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": w(2, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + w(HIDDEN),
        "embeddings.LayerNorm.bias": w(HIDDEN),
    }
    shapes = {
        "attention.self.query": (HIDDEN, HIDDEN),
        "attention.self.key": (HIDDEN, HIDDEN),
        "attention.self.value": (HIDDEN, HIDDEN),
        "attention.output.dense": (HIDDEN, HIDDEN),
        "intermediate.dense": (INNER, HIDDEN),
        "output.dense": (HIDDEN, INNER),
    }
    for i in range(LAYERS):
        for name, shape in shapes.items():
            arrays[f"encoder.layer.{i}.{name}.weight"] = w(*shape)
            arrays[f"encoder.layer.{i}.{name}.bias"] = w(shape[0])
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            arrays[f"encoder.layer.{i}.{norm}.weight"] = 1 + w(HIDDEN)
            arrays[f"encoder.layer.{i}.{norm}.bias"] = w(HIDDEN)
    folder.mkdir(parents=True)
    write_safetensors(folder / "model.safetensors", {prefix + k: v for k, v in arrays.items()})
    settings = {
        "model_type": "bert",
        "hidden_size": HIDDEN,
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "intermediate_size": INNER,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
    } | config
    (folder / "config.json").write_text(json.dumps(settings))
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"},
    ]))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": HIDDEN,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
    }))
    return folder


def test_which_model_folders_it_takes(tmp_path: Path) -> None:
    good = tiny_bert(tmp_path / "good")
    assert bert_numpy.unsupported(good) is None
    roberta = tiny_bert(tmp_path / "roberta", model_type="xlm-roberta")
    assert "xlm-roberta" in bert_numpy.unsupported(roberta)
    relu = tiny_bert(tmp_path / "relu", hidden_act="relu")
    assert "relu" in bert_numpy.unsupported(relu)
    cls = tiny_bert(tmp_path / "cls")
    pooling = json.loads((cls / "1_Pooling" / "config.json").read_text())
    pooling |= {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}
    (cls / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    assert "cls_token" in bert_numpy.unsupported(cls)
    (cls / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "cls"}))
    assert "cls" in bert_numpy.unsupported(cls)
    (cls / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "mean"}))
    assert bert_numpy.unsupported(cls) is None  # sentence-transformers 5 spells it so
    dense = tiny_bert(tmp_path / "dense")
    modules = json.loads((dense / "modules.json").read_text())
    modules.insert(2, {"path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    (dense / "modules.json").write_text(json.dumps(modules))
    assert "Dense" in bert_numpy.unsupported(dense)
    torch_only = tiny_bert(tmp_path / "bin")
    (torch_only / "model.safetensors").rename(torch_only / "pytorch_model.bin")
    assert "model.safetensors" in bert_numpy.unsupported(torch_only)
    assert "modules.json" in bert_numpy.unsupported(tmp_path / "nothing")


def test_a_batch_masks_its_padding(tmp_path: Path) -> None:
    """Each text's vector in a padded batch is its vector alone (the attention and the
    mean both skip the padding), a unit vector; a "bert."-prefixed file reads alike."""
    bert = bert_numpy.Bert(tiny_bert(tmp_path / "m"))
    texts = [[2, 7, 9, 3], [2, 11, 3], [2, 5, 6, 8, 12, 40, 3]]
    width = max(map(len, texts))
    ids = np.zeros((len(texts), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, t in enumerate(texts):
        ids[row, : len(t)], mask[row, : len(t)] = t, 1
    batched = bert.forward(ids, mask)
    alone = np.stack([bert.forward(np.array([t]), np.ones((1, len(t)), np.int64))[0] for t in texts])
    assert batched.dtype == np.float32 and batched.shape == (3, HIDDEN)
    assert np.abs(batched - alone).max() < 1e-6
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-6)
    assert np.abs(alone[0] - alone[1]).max() > 1e-2  # other texts, other vectors
    prefixed = bert_numpy.Bert(tiny_bert(tmp_path / "p", prefix="bert."))
    assert np.array_equal(prefixed.forward(ids, mask), batched)
