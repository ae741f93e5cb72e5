"""The surfaces' shared parts, without a model: the one JSON writer, output in a pipe
as Rich writes it, requests on the wire, the argv reader, the error guard, and the
import graph (no cycles, no upward imports)."""

from __future__ import annotations

import ast
import dataclasses
import json
import random
import re
from pathlib import Path

import pytest

from memcli.core import requests as rq
from memcli.core import text
from memcli.core.errors import ExitCode, MemcliError, NotFoundError, UsageError, ValidationError
from memcli.surfaces import guard, protocol
from memcli.surfaces.cli import env as cli_env
from memcli.surfaces.cli import render, served
from memcli.surfaces.cli.env import Env

CHARS = ["a", "é", "\x1b", "\x7f", "\x9b", "\ud800", "\udcff", "\n", "\t", '"', "\\", "数",
         "\u2028", "\x00", " ", "\x85", "\r", "😀", "e\u0301", "\u200b"]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 8)))


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randint(0, 9 if depth < 3 else 5)
    if kind == 0:
        return random_text(rng)
    if kind == 1:
        return rng.random() * 10 ** rng.randint(-8, 8)
    if kind == 2:
        return rng.randint(-(10**6), 10**6)
    if kind == 3:
        return rng.choice([True, False, None, float("nan"), float("inf"), -0.0, 1e300])
    if kind == 4:
        return rng.choice([(), [], {}, Path("a/b")])
    if kind == 5:
        return round(rng.random(), 6)
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [random_text(rng), 1, 2.5, True, None]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_json_writer_writes_what_json_dumps_writes() -> None:
    raw = re.compile(r"[\x7f-\x9f\ud800-\udfff]")
    rng = random.Random(19)
    for _ in range(3000):
        value = random_value(rng)
        expected = json.dumps(value, ensure_ascii=False, indent=2, default=str)
        expected = raw.sub(lambda m: f"\\u{ord(m.group()):04x}", expected)
        assert text.dumps(value) == expected, value
        assert protocol.dumps_wire(value) == json.dumps(value, default=str), value
        wire = protocol.dumps_wire(value)
        assert protocol.dumps_wire(protocol.loads(wire)) == wire  # read back exactly


def test_json_reader_refuses_what_json_refuses() -> None:
    assert protocol.loads(' {"a": [1, 2.5, "é", null, true, NaN]} \n')["a"][:5] == [
        1, 2.5, "é", None, True
    ]
    for bad in ("", "{", '{"a": 1} x', "[1,]", "nul"):
        with pytest.raises(ValueError):
            protocol.loads(bad)


def test_escape_controls_escapes_every_control_but_tab_and_newline() -> None:
    pattern = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

    def reference(value: str) -> str:
        return pattern.sub(
            lambda m: f"\\x{ord(m.group()):02x}"
            if ord(m.group()) < 0x100
            else f"\\u{ord(m.group()):04x}",
            value,
        )

    rng = random.Random(7)
    for _ in range(5000):
        value = random_text(rng)
        assert text.escape_controls(value) == reference(value), repr(value)


# ------------------------------------------------------------------ output in a pipe


def rows(texts: list[str]) -> list[dict]:
    return [
        {
            "entry": {"id": f"m{i}", "type": "fact", "text": t},
            "score": 0.1234996 + i,  # rounds differently at 3 and at 6 digits
            "components": {"semantic": 0.5555, "accesses": 2.0},
        }
        for i, t in enumerate(texts)
    ]


def printed(capsys: pytest.CaptureFixture[str], *calls: tuple) -> tuple[str, str]:
    for fn, *args in calls:
        fn(*args)
    out = capsys.readouterr()
    return out.out, out.err


@pytest.mark.parametrize(
    "message",
    ["plain", "a\tb", "数据库迁移\tx", "evil \x1b]0;t\x07 \x9b1m", "two\nlines", "", "  pad  ",
     "[bold]not markup[/bold] :smile:", "e\u0301\u200b\u2028z", "\udcff bytes"],
)
def test_plain_output_is_what_rich_writes_in_a_pipe(
    message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = [
        (render.info, message),
        (render.note, message),
        (render.error, message),
        (render.hits_table, rows([message, "x"]), True),
        (render.hits_table, [], False),
        (render.entry_detail, {"id": "m1", "type": "fact", "file": "memory.md", "line": 3,
                               "text": message, "importance": 0.5, "confidence": 1.0,
                               "pinned": False, "access_count": 0, "meta": {"k": message}}),
    ]
    plain = printed(capsys, *calls)
    monkeypatch.setattr(render, "_plain", lambda err=False: False)  # Rich decides
    with_rich = printed(capsys, *calls)
    assert plain == with_rich
    assert message.strip() == "" or plain[0]


def test_a_served_answer_prints_as_the_in_process_one(capsys: pytest.CaptureFixture[str]) -> None:
    """The client prints what came over the wire; scores keep every digit on the way
    (a rounded score could print another third digit)."""
    answers = [
        {"hits": rows(["first", "second\nline"])},
        {"hits": []},
        {"inject": {"exact": False, "block": "<memory>\n- x\n</memory>", "tokens": 3}},
        {"entry": {"id": "m1", "type": "fact", "file": "memory.md", "line": 1, "text": "t",
                   "importance": 0.5, "confidence": 1.0, "meta": {}}},
        guard.describe(NotFoundError("no entry with id 'x'", hint="`memcli list` shows them")),
        {**guard.describe(UsageError("--since: 'soon' is not a date")), "notices": "notice: hm\n"},
    ]
    for data in answers:
        for view in ({}, {"json": True}, {"json": True, "explain": True}, {"explain": True}):
            direct = (served.show(data, view, "search"), *printed(capsys))
            wired = protocol.loads(protocol.dumps_wire(data))
            assert (served.show(wired, view, "search"), *printed(capsys)) == direct, (data, view)
    served.show(answers[0], {"json": True, "explain": True}, "search")
    shown = json.loads(capsys.readouterr().out)
    assert shown["ok"] is True and shown["command"] == "search"
    hit = shown["data"]["hits"][0]
    assert hit["score"] == 0.1235 and hit["components"]["semantic"] == 0.5555
    assert served.show(answers[4], {"json": True}, "get") == 1
    out, err = printed(capsys)
    assert json.loads(out) == {
        "ok": False,
        "command": "get",
        "error": {
            "code": "not_found",
            "message": "no entry with id 'x'",
            "hint": "`memcli list` shows them",
        },
    }
    assert err == "error: no entry with id 'x'\n  hint: `memcli list` shows them\n"
    served.show(answers[0], {}, "search")
    assert capsys.readouterr().out.startswith("1. 0.123 m0 [fact] first\n")


SERVED_ANSWERS = [
    {"hits": rows(["first", "second\nline", "tab\there \x1b[31m"])},
    {"hits": []},
    {"inject": {"exact": False, "block": "<memory>\n- x\n</memory>", "tokens": 3}},
    {"entry": {"id": "m1", "type": "fact", "file": "memory.md", "line": 1, "text": "t\tu",
               "importance": 0.5, "confidence": 1.0, "meta": {}}},
    guard.describe(NotFoundError("no entry with id 'x'", hint="`memcli list` shows them")),
    {**guard.describe(UsageError("--since: 'soon' is not a date")), "notices": "notice: hm\n"},
]


@pytest.mark.parametrize("data", SERVED_ANSWERS)
@pytest.mark.parametrize("command", ["search", "inject", "get"])
def test_what_the_daemon_prints_for_a_client_is_what_it_would_print(
    data: dict, command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client in a pipe gets the daemon's printed text (served.printed, over the wire)
    and writes it: stdout, stderr and exit code as printing the data itself gives."""
    from memcli.surfaces.cli import fastpath
    from memcli.surfaces.daemon.server import printed as daemon_printed

    for var in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(var, raising=False)
    for view in ({}, {"json": True}, {"json": True, "explain": True}, {"explain": True}):
        direct = (served.show(data, view, command), *printed(capsys))
        answer = protocol.loads(protocol.dumps_wire(daemon_printed(data, {**view, "command": command})))
        assert set(answer) == {"out", "err", "exit"} and fastpath._printed(answer)
        assert (answer["exit"], answer["out"], answer["err"]) == direct, (view, answer)


def test_the_daemon_prints_only_plainly_and_for_a_view_it_knows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memcli.surfaces.cli import fastpath
    from memcli.surfaces.daemon.server import printed as daemon_printed

    data = SERVED_ANSWERS[0]
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert "out" in daemon_printed(data, {"command": "search"})
    for view in (None, [], {}, {"command": "list"}, {"command": "search", "json": "yes"}):
        assert daemon_printed(data, view) is data, view  # the client prints the data
    monkeypatch.setenv("FORCE_COLOR", "1")  # the daemon would print in colour
    assert daemon_printed(data, {"command": "search"}) is data
    for bad in ({"out": "x", "err": "", "exit": "0"}, {"out": b"x", "err": "", "exit": 0},
                {"out": "x", "exit": 0}, {"out": "x", "err": "", "exit": True}):  # fmt: skip
        assert not fastpath._printed(bad), bad
    assert fastpath._printed({"out": "x", "err": "", "exit": 2})


# ------------------------------------------------------------------ requests and argv


def test_requests_survive_the_wire_and_refuse_wrong_values() -> None:
    examples = [
        rq.SearchQuery("q", mode="keyword", types=("fact",), limit=3, min_score=0.5),
        rq.InjectRequest("ctx", max_tokens=10, types=("skill", "lesson"), touch=False),
        rq.AddRequest("t", keywords=("a",), importance=1),
        rq.GetRequest("m1"),
        rq.ListRequest(keywords=("k",), sort="created", limit=2),
    ]
    for request in examples:
        assert rq.from_wire(protocol.loads(protocol.dumps_wire(rq.to_wire(request)))) == request
    for cls in rq.KINDS.values():  # every field's type can be checked
        for f in dataclasses.fields(cls):
            assert isinstance(rq._fits(None, str(f.type)), bool)
    for bad in (
        {"kind": "SearchQuery", "query": "q", "limit": True},
        {"kind": "SearchQuery", "query": 3},
        {"kind": "SearchQuery", "query": "q", "types": "fact"},
        {"kind": "SearchQuery", "query": "q", "argv": ["x"]},
        {"kind": "InjectRequest", "context_file": "/dev/stdin"},
        {"kind": "Search"},
        {"query": "q"},
    ):
        with pytest.raises(ValueError):
            rq.from_wire(bad)


def test_one_list_of_modes_and_formats() -> None:
    from memcli.logic import search
    from memcli.surfaces.cli.app import Format, Mode

    assert cli_env.MODES == rq.MODES == search.MODES == tuple(Mode)
    assert cli_env.FORMATS == rq.FORMATS == tuple(Format)


@pytest.mark.parametrize(
    ("args", "kind", "fields", "view"),
    [
        (["search", "q"], "SearchQuery", {"query": "q"}, {}),
        (
            ["search", "-t", "fact", "--type=skill", "-k", "a", "--mode", "keyword", "-n", "3",
             "--min-score", ".5", "--since", "7d", "--no-touch", "--include-archived", "--json",
             "--explain", "--until=today", "q"],
            "SearchQuery",
            {"query": "q", "types": ["fact", "skill"], "keywords": ["a"], "mode": "keyword",
             "limit": 3, "min_score": 0.5, "since": "7d", "until": "today", "touch": False,
             "include_archived": True},
            {"json": True, "explain": True},
        ),
        (["get", "m1", "--json"], "GetRequest", {"entry_id": "m1"}, {"json": True}),
        (
            ["inject", "-q", "ctx", "--max-tokens", "9", "-f", "xml", "--types", "skill"],
            "InjectRequest",
            {"query": "ctx", "max_tokens": 9, "fmt": "xml", "types": ["skill"]},
            {},
        ),
        (["inject", "-", "--encoding", "o200k_base"], "InjectRequest",
         {"stdin": True, "encoding": "o200k_base"}, {}),
        (["inject", "ctx", "--max-tokens", "9"], "InjectRequest",
         {"query": "ctx", "max_tokens": 9}, {}),
    ],
)
def test_argv_reads_the_fields_of_the_requests(
    args: list[str], kind: str, fields: dict, view: dict
) -> None:
    assert cli_env.served_call(Env(args)) == (kind, fields, view)
    wire = dict(fields)
    if kind == "InjectRequest":  # the client reads the context source
        wire.pop("stdin", None)
        wire["context"] = wire.pop("query", "from stdin")
    assert rq.from_wire({"kind": kind, **wire})  # the request's own spelling


@pytest.mark.parametrize(
    "args",
    [
        ["search"], ["search", "a", "b"], ["search", "q", "--limit", "0"],
        ["search", "q", "-n", "x"], ["search", "q", "--mode", "fuzzy"], ["search", "q", "-n3"],
        ["search", "q", "--json=yes"], ["search", "q", "--colour"], ["search", "q", "-n"],
        ["search", "q", "--min-score", "1e-3"], ["search", "q", "-n", "1", "-n", "2"],
        ["inject", "-q", "a", "-"], ["inject", "ctx", "-q", "a"], ["inject", "a", "b"],
        ["inject", "ctx", "-"], ["inject", "-f", "yaml"],
        ["inject", "--max-tokens", "0"], ["get"], ["get", "a", "--traceback"],
    ],
)
def test_argv_leaves_anything_unusual_to_typer(args: list[str]) -> None:
    assert cli_env.served_call(Env(args)) is None


# ------------------------------------------------------------------ errors


def test_the_guard_maps_errors_to_exit_codes_and_messages() -> None:
    try:
        b"\xff".decode("utf-8")
    except UnicodeDecodeError as exc:
        unicode_error = exc
    table = [
        (UsageError("--since: bad"), ExitCode.USAGE, "--since: bad"),
        (NotFoundError("no entry", hint="list"), ExitCode.ERROR, "no entry\n  hint: list"),
        (ValidationError("empty"), ExitCode.ERROR, "empty"),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED, None),
        (BrokenPipeError(), ExitCode.OK, None),
        (
            unicode_error,
            ExitCode.ERROR,
            "the input is not valid UTF-8 text (invalid start byte); nothing was written",
        ),
    ]
    for exc, code, message in table:
        assert guard.outcome(exc) == (code, message), exc
    assert guard.outcome(ValueError("bug")) is None  # not ours: it propagates
    assert guard.one_line(MemcliError("first\n  hint: h")) == "first"
    assert guard.one_line(OSError("disk")) == "OSError: disk"
    assert int(ExitCode.USAGE) == 2 and int(ExitCode.INTERRUPTED) == 130


def test_a_failing_served_call_answers_with_the_guards_code(tmp_path: Path) -> None:
    from memcli.store.workspace import init_workspace
    from memcli.surfaces.daemon.server import answer

    init_workspace(tmp_path)
    from memcli.services.memory import Memory

    mem = Memory(tmp_path)
    missing = answer(mem, rq.GetRequest("nope"))
    assert missing["exit"] == 1 and missing["code"] == "not_found"
    bad_type = answer(mem, rq.SearchQuery("q", types=("nonsense",)))
    assert bad_type["exit"] == 2 and bad_type["error"].startswith("--type: unknown type")
    assert bad_type["code"] == "usage" and bad_type["message"].startswith("--type:")
    bad_date = answer(mem, rq.SearchQuery("q", since="soon"))
    assert bad_date["exit"] == 2 and bad_date["error"].startswith("--since:")


# ------------------------------------------------------------------ the import graph

ORDER = ["core", "store", "index", "adapters", "logic", "services", "surfaces"]


def import_graph() -> dict[str, set[str]]:
    root = Path(__file__).resolve().parents[2] / "memcli"
    modules = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):  # lazy imports count
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {
            d for d in deps if d in modules and d != name and not name.startswith(d + ".")
        }
    return graph


def test_imports_point_down_and_go_round_nowhere() -> None:
    graph = import_graph()

    def layer(module: str) -> int | None:
        parts = module.split(".")
        return ORDER.index(parts[1]) if len(parts) > 1 and parts[1] in ORDER else None

    upward = [
        (a, b)
        for a, deps in graph.items()
        for b in deps
        if layer(a) is not None
        and (b == "memcli" or (layer(b) is not None and layer(b) > layer(a)))
    ]
    assert not upward
    # a cycle: a module that reaches itself
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            module = todo.pop()
            assert module != start, f"import cycle through {start}"
            if module not in seen:
                seen.add(module)
                todo.extend(graph[module])
