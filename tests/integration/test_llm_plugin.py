"""The `llm` CLI plugin's functions in this process with the real `llm` package:
`memcli:` fragments give the inject block, and the tools search and remember. The `llm`
command itself: tests/process/test_llm_plugin.py."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.slow  # embeds with the real model (torch, then its ONNX export)
def test_plugin_functions(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # imported here, not at collection: `llm` costs ≈ 1 s of imports in every worker
    llm = pytest.importorskip("llm")
    from memcli.surfaces import llm_plugin

    monkeypatch.setenv("MEMCLI_WORKSPACE", str(workspace))
    llm.load_plugins()
    assert llm.get_fragment_loaders()["memcli"] is llm_plugin.memcli_fragment
    fragment = llm_plugin.memcli_fragment("docker images")
    assert isinstance(fragment, llm.Fragment) and fragment.source == "memcli:docker images"
    assert "Docker" in fragment
    tools = llm.get_tools()
    assert {"memcli_search", "memcli_remember"} <= set(tools)
    assert "m8f3a2c1 [preference]" in tools["memcli_search"].implementation("python tests", 3)
    added = tools["memcli_remember"].implementation("Prefers Vim keybindings", "preference")
    assert added.startswith("added ")
    assert "Prefers Vim keybindings" in (workspace / "memory.md").read_text()
    monkeypatch.setenv("MEMCLI_WORKSPACE", str(workspace / "missing"))
    with pytest.raises(ValueError, match="memcli: .*no memcli workspace"):
        llm_plugin.memcli_fragment("x")
