"""A multilingual model one command away (issue 38 item 8): with a fifth of a workspace
in Chinese, `init`, `index` and `doctor` say the bundled model does not read it and name
the command; `memcli config set index.model FOLDER` prepares the model (each step on
stderr), rebuilds the index, and searches then embed queries through its ONNX export
with the vectors sentence-transformers gives. For both families people pick: BERT
(token types) and XLM-RoBERTa (none; a sentencepiece-style tokenizer), each a tiny
model made here (tests.support.tiny_models): the path, not the quality."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from memcli.index.sync import embed_text, query_text
from memcli.surfaces.cli.app import app
from tests.support.cli import envelope
from tests.support.tiny_models import FAMILIES, tiny_model

CHINESE = [
    "数据库迁移先在预发环境跑一遍",
    "喜欢先看结论，再看细节",
    "代码注释用英文，讨论用中文",
    "周四上午不排会议，留给深度工作",
    "发布前检查回滚脚本",
    "大表加索引要用并发方式",
    "测试里不要用固定的等待时间",
    "值班表每两周轮换一次",
    "日志保留三十天",
    "新功能先放在开关后面",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("tiny-models")
    return {family: tiny_model(family, where) for family in FAMILIES}


def _chinese_workspace(workspace: Path) -> Path:
    memory = workspace / "memory.md"
    lines = "".join(f"- {text}\n" for text in CHINESE)
    memory.write_text(memory.read_text().replace("## Facts\n", "## Facts\n" + lines, 1))
    return workspace


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_config_set_index_model_prepares_rebuilds_and_queries_through_onnx(
    workspace: Path, models: dict[str, Path], family: str
) -> None:
    from memcli.index import onnx_embedder, query_engine
    from memcli.index.bert_numpy import NumpyEmbedder
    from memcli.index.embedder import SentenceTransformerEmbedder
    from memcli.services.memory import Memory

    ws = _chinese_workspace(workspace)
    runner = CliRunner()
    base = ["-w", str(ws)]
    indexed = runner.invoke(app, [*base, "index"])
    assert indexed.exit_code == 0, indexed.output
    switch = "memcli config set index.model"
    assert switch in indexed.stderr  # the bundled model does not read Chinese: the notice
    assert indexed.stderr.count(switch) == 1
    init = runner.invoke(app, [*base, "init"])  # on a workspace that has notes already
    assert init.exit_code == 0 and init.stderr.count(switch) == 1, init.output
    doctor = envelope(runner.invoke(app, [*base, "doctor", "--json"]).stdout)
    languages = {c["name"]: c for c in doctor["checks"]}["languages"]
    assert languages["ok"] and switch in languages["detail"]

    folder = str(models[family])
    done = runner.invoke(app, [*base, "config", "set", "index.model", folder])
    assert done.exit_code == 0, done.output
    assert "preparing the embedding model, once (1/4)" in done.stderr
    assert "preparing the embedding model, once (4/4)" in done.stderr
    assert "index rebuilt with the new model" in done.stdout

    mem = Memory(ws, notify=lambda m: None)
    assert mem.settings.index.model == folder  # applied: the file was approved for it
    manifest = json.loads((ws / ".memcli" / "index" / "manifest.json").read_text())
    assert manifest["model"] == folder
    meta = json.loads((onnx_embedder.export_dir(folder) / "meta.json").read_text())
    expected = ["input_ids", "attention_mask"] + (["token_type_ids"] if family == "bert" else [])
    assert meta["inputs"] == expected and meta["dim"] == 32

    query = "数据库迁移"
    fast = mem.runtime.index_manager.query_embedder
    # BERT: numpy alone, checked against sentence-transformers when it was prepared;
    # XLM-RoBERTa: the ONNX export (the numpy path is BERT's only)
    engine = NumpyEmbedder if family == "bert" else onnx_embedder.OnnxEmbedder
    assert isinstance(fast, engine)
    if family == "bert":
        assert query_engine.checked(folder, folder)["against"] == "sentence-transformers"
    reference = SentenceTransformerEmbedder(folder)
    texts = [query, "Run database migrations on staging first", CHINESE[1]]
    cosines = (fast.embed(texts) * reference.embed(texts)).sum(axis=1)
    assert cosines.min() >= 0.999, cosines
    fast.prefetch(texts)  # an inject's prompt and parts: one padded batch, each taken once
    batched, alone = fast.embed(texts), fast.embed(texts)
    assert np.abs(batched - alone).max() < 1e-5 and not fast._fetched
    hits = mem.search(query, mode="semantic", limit=3, floor=0.0, touch=False)
    assert hits
    top = hits[0]
    # what the model embedded: a model that reads English only reads Chinese as its gloss
    glossed = mem.runtime.index_manager.glossed
    assert glossed == (family == "bert")  # the XLM-R family reads every script
    pair = [query_text(query, glossed), embed_text(top.entry, glossed)]
    expected_cos = float(np.dot(*reference.embed(pair)))
    assert top.components["semantic"] == pytest.approx(expected_cos, abs=1e-3)

    again = runner.invoke(app, [*base, "index"])
    assert again.exit_code == 0
    # XLM-RoBERTa is multilingual by its config; this tiny BERT (200 pieces) is not
    assert (switch in again.stderr) is (family == "bert")
