"""The runtime: settings and environment read in one place, components built lazily,
and the long-lived mode the daemon and the MCP server use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.core.errors import WorkspaceError
from memcli.services.memory import Memory
from memcli.services.runtime import Runtime
from memcli.store.config import LLMSettings, Settings
from tests.support.fakes import HashingEmbedder


def test_settings_and_llm_key_come_from_the_runtime_environment(workspace: Path) -> None:
    env = {"MEMCLI_SEARCH_LIMIT": "3", "MY_KEY": "sk-from-env"}
    assert Runtime(workspace, env=env).settings.search.limit == 3
    llm = LLMSettings(
        provider="openai", base_url="http://127.0.0.1:9", model="m", api_key_env="MY_KEY"
    )
    rt = Runtime(workspace, settings=Settings(llm=llm), env=env)
    client = rt.llm()
    assert client is not None and client.api_key == "sk-from-env"
    assert Runtime(workspace, settings=Settings(llm=llm), env={}).llm().api_key is None


def test_components_are_built_on_first_use(workspace: Path) -> None:
    built: list[int] = []

    def factory() -> HashingEmbedder:
        built.append(1)
        return HashingEmbedder()

    mem = Memory(workspace, embedder_factory=factory, notify=lambda m: None)
    mem.list()
    assert mem.runtime._index is None and not built  # listing needs no index
    mem.search("python", touch=False)
    assert mem.index_manager is mem.runtime.index_manager and built == [1]


def test_long_lived_keeps_access_counts_until_flush(workspace: Path) -> None:
    mem = Memory(workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    mem.long_lived()
    assert mem.index_manager.keep_cache_in_memory
    chosen = [c.entry.id for c in mem.inject(None, max_tokens=300).chosen]
    counts = workspace / ".memcli" / "access.json"
    assert chosen and not counts.exists()
    assert mem.get(chosen[0]).access.count == 1  # counted, not yet written
    mem.flush()
    assert json.loads(counts.read_text())[chosen[0]]["count"] == 1


def test_ready_refuses_a_missing_workspace(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "nowhere", notify=lambda m: None)
    with pytest.raises(WorkspaceError):
        mem.ready()

