"""MCP `search_memories` with `time_range` (issue 35: no test used it, so a planted bug
swapping its start and end passed the suite). A table of spans through the real MCP
tool (an in-process client; the hashing embedder stands in for the model: fast)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from memcli.store.workspace import init_workspace

#: three deploy notes written on three days
NOTES = [
    ("mjan", "2024-01-15", "Deploy note: the January release went out on a Tuesday"),
    ("mjun", "2024-06-15", "Deploy note: the June release needed a database migration"),
    ("mdec", "2024-12-15", "Deploy note: the December release was frozen for the holidays"),
]
#: (time_range, the notes found)
SPANS = [
    (None, {"mjan", "mjun", "mdec"}),
    ({"start": "2024-01-01", "end": "2024-12-31"}, {"mjan", "mjun", "mdec"}),
    ({"start": "2024-06-01", "end": "2024-06-30"}, {"mjun"}),
    ({"start": "2024-06-01"}, {"mjun", "mdec"}),
    ({"end": "2024-06-30"}, {"mjan", "mjun"}),
    ({"start": "2024-01-15", "end": "2024-01-15"}, {"mjan"}),  # one day, both ends in
    ({"start": "2024-02-01", "end": "2024-05-31"}, set()),
]


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("spans") / "ws"
    init_workspace(root)
    lines = "".join(f"- {t} <!-- id={i} created={d}T10:00:00Z -->\n" for i, d, t in NOTES)
    memory = root / "memory.md"
    memory.write_text(memory.read_text() + lines)
    return root


@pytest.mark.parametrize(("span", "found"), SPANS)
def test_search_memories_finds_what_was_written_in_the_span(
    notes: Path, span: dict | None, found: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp import Client

    from memcli.surfaces.mcp_server import build_server
    from tests.support.fakes import fake_memory

    monkeypatch.setattr("memcli.surfaces.mcp_server.shared_memory", fake_memory)

    args = {"query": "deploy note release", "search_mode": "keyword", "min_relevance_score": 0}
    if span is not None:
        args["time_range"] = span

    async def search() -> dict:
        async with Client(build_server(notes)) as client:
            result = await client.call_tool("search_memories", args)
            assert not result.is_error, result
            return result.structured_content

    answer = anyio.run(search)
    assert {r["memory_key"] for r in answer["results"]} == found
