"""The stdio front of `memcli mcp` (memcli.surfaces.mcp_stdio.Front): `initialize`,
`tools/list` and `ping` answered from the snapshot before the server is built, every
other line kept in order and handed over, the server's own answer to the replayed
`initialize` dropped, and nothing answered twice (issue 37, item 4)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memcli.surfaces import mcp_stdio
from memcli.surfaces.mcp_stdio import Front, ServerOut

SNAPSHOT = {
    "versions": {
        "2025-06-18": {
            "initialize": {"protocolVersion": "2025-06-18", "serverInfo": {"name": "memcli"}},
            "tools/list": {"tools": [{"name": "search_memories"}]},
        }
    }
}


def line(ident: object, method: str, **params: object) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        message["id"] = ident
    if params:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def initialize(version: str = "2025-06-18", ident: object = 1) -> bytes:
    return line(ident, "initialize", protocolVersion=version, capabilities={})


def written(out: io.BytesIO) -> list[dict]:
    return [json.loads(x) for x in out.getvalue().decode().splitlines()]


def run_front(lines: list[bytes], snapshot: dict = SNAPSHOT) -> tuple[Front, io.BytesIO]:
    out = io.BytesIO()
    front = Front(io.BytesIO(b"".join(lines)), out, json.loads(json.dumps(snapshot)))
    front.pump()
    return front, out


def test_initialize_tools_list_and_ping_are_answered_before_the_server() -> None:
    front, out = run_front(
        [
            initialize(),
            line(None, "notifications/initialized"),
            line(2, "tools/list"),
            line(3, "ping"),
            line(4, "tools/call", name="search_memories", arguments={"query": "x"}),
        ]
    )
    answers = written(out)
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert answers[0]["result"] == SNAPSHOT["versions"]["2025-06-18"]["initialize"]
    assert answers[1]["result"] == SNAPSHOT["versions"]["2025-06-18"]["tools/list"]
    assert answers[2]["result"] == {}
    # kept for the server, in order: the initialize (to initialize it), the rest
    kept = [json.loads(x).get("method") for x in front.kept]
    assert kept == ["initialize", "notifications/initialized", "tools/call"]
    assert front.ended and front.dropped == {1}


def test_the_hand_over_replays_in_order_and_drops_the_second_initialize_answer() -> None:
    out = io.BytesIO()
    front = Front(io.BytesIO(b""), out, SNAPSHOT)
    assert front._answer(initialize()) is not None  # noqa: SLF001
    front._answer(line(5, "tools/call", name="x"))  # noqa: SLF001
    server_in = io.BytesIO()
    server_in.close = lambda: None  # type: ignore[method-assign] - read it afterwards
    front.connect(server_in)
    forwarded = [json.loads(x)["method"] for x in server_in.getvalue().splitlines()]
    assert forwarded == ["initialize", "tools/call"]
    before = out.getvalue()
    to_host = ServerOut(front)
    to_host.write('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}\n')
    assert out.getvalue() == before  # the host has its initialize answer already
    to_host.write('{"jsonrpc":"2.0","id":5,')  # a line may come in pieces
    to_host.write('"result":{}}\n')
    assert written(out)[-1] == {"jsonrpc": "2.0", "id": 5, "result": {}}
    # connected: a later tools/list goes to the server, not the snapshot
    front.wire_in = io.BytesIO(line(6, "tools/list"))
    front.pump()
    assert json.loads(server_in.getvalue().splitlines()[-1])["id"] == 6
    assert written(out)[-1]["id"] == 5


@pytest.mark.parametrize(
    ("lines", "answered"),
    [
        ([initialize("1999-01-01"), line(2, "tools/list")], []),  # unknown version: server
        ([line(2, "tools/list"), initialize()], [1]),  # no version negotiated yet
        ([initialize(), initialize(ident=9)], [1]),  # a second initialize: the server's
        ([initialize(), line(2, "tools/list", cursor="c1")], [1]),  # a page: the server's
        ([b"not json\n", initialize()], [1]),
    ],
)
def test_what_the_front_leaves_to_the_server(lines: list[bytes], answered: list[int]) -> None:
    front, out = run_front(lines)
    assert [a["id"] for a in written(out)] == answered
    assert len(front.kept) == len(lines)  # each goes to the server, in order


@pytest.mark.parametrize(
    ("config", "tools_here"),
    [("[search]\nhalf_life_days = 30\n", True), ("[files.notes]\ntypes = ['note']\n", False)],
)
def test_a_workspace_declaring_types_gets_tools_list_from_the_server(
    tmp_path: Path, config: str, tools_here: bool
) -> None:
    (tmp_path / "memcli.toml").write_text(config)
    snapshot = mcp_stdio.load_snapshot(tmp_path)
    assert snapshot["versions"], "the committed snapshot has versions"
    front, out = run_front([initialize(), line(2, "tools/list")], snapshot)
    assert [a["id"] for a in written(out)] == ([1, 2] if tools_here else [1])
