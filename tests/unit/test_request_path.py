"""One request, straight through (issue 27 item 3): the request a surface builds reaches
the services as is; the command line is read once, the workspace resolved once, memory.md
parsed once per add; the command's environment (streams, clock) is passed down; the
tests' CLI helper fails on a crash."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memcli.core.requests import AddRequest, GetRequest, InjectRequest, ListRequest, SearchQuery
from memcli.surfaces import operations
from memcli.surfaces.cli import fastpath
from memcli.surfaces.cli.env import Env
from tests.support.cli import invoke
from tests.support.fakes import HashingEmbedder, fake_memory, use_fake_memory


def _spy(monkeypatch: pytest.MonkeyPatch, target: str, seen: list[Any], position: int) -> None:
    """Record argument `position` of every call of `target` (module.function)."""
    module, name = target.rsplit(".", 1)
    import importlib

    real = getattr(importlib.import_module(module), name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[position])
        return real(*args, **kwargs)

    monkeypatch.setattr(f"{module}.{name}", spy)


@pytest.mark.parametrize(
    ("call", "request_", "target", "position"),
    [
        (
            operations.search,
            SearchQuery("python tests", mode="keyword", touch=False),
            "memcli.services.search.checked_hits",
            1,
        ),
        (
            operations.inject,
            InjectRequest("python tests", touch=False),
            "memcli.services.inject.inject",
            1,
        ),
        (
            operations.add,
            AddRequest("The staging host is zebra-7"),
            "memcli.services.intake.add",
            1,
        ),
        (
            operations.list_entries,
            ListRequest(types=("fact",), limit=2),
            "memcli.services.entries.list_entries",
            1,
        ),
        (operations.get, GetRequest("m8f3a2c1"), "memcli.services.entries.get", 1),
    ],
)
def test_the_services_get_the_request_the_surface_built(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    call: Any,
    request_: Any,
    target: str,
    position: int,
) -> None:
    seen: list[Any] = []
    _spy(monkeypatch, target, seen, position)
    mem = fake_memory(workspace)
    call(mem, request_)
    if isinstance(request_, GetRequest):  # the service takes the id
        assert seen == [request_.entry_id]
    else:
        assert len(seen) == 1 and seen[0] is request_  # not unpacked and built again


def test_the_python_api_builds_the_request_once(workspace: Path) -> None:
    """`Memory.search("text", limit=...)` is the request's convenience: the same hits."""
    mem = fake_memory(workspace)
    q = SearchQuery("python tests", mode="keyword", limit=2, touch=False)
    by_request = [h.entry.id for h in mem.search(q)]
    by_words = [
        h.entry.id for h in mem.search("python tests", mode="keyword", limit=2, touch=False)
    ]
    assert by_request == by_words and len(by_request) == 2
    assert [e.id for e in mem.list(ListRequest(limit=3))] == [e.id for e in mem.list(limit=3)]
    assert mem.get(GetRequest("m8f3a2c1")).entry == mem.get("m8f3a2c1").entry


def _count_parses(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    from memcli.store import markdown

    parsed: list[str] = []
    real = markdown.parse_file

    def counting(text: str, filename: str, *files: Any) -> Any:
        if filename == name:
            parsed.append(filename)
        return real(text, filename, *files)

    # memcli.store.store imports it from there when it first parses a file
    monkeypatch.setattr(markdown, "parse_file", counting)
    return parsed


def test_an_add_parses_memory_md_once(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _count_parses(monkeypatch, "memory.md")
    mem = fake_memory(workspace)
    result = mem.add("The staging host is called zebra-7", type="fact")
    assert result.action == "added"
    assert "zebra-7" in (workspace / "memory.md").read_text()
    assert parsed == ["memory.md"]


def test_an_add_still_sees_a_change_made_after_its_read(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parse is reused only for the very text it read: a hand edit between the
    add's read and its write is parsed and kept."""
    from memcli.store.store import Store

    memory = workspace / "memory.md"
    real = Store.update

    def edited_first(self: Store, name: str, change: Any) -> Any:
        memory.write_text(memory.read_text() + "- written by hand meanwhile\n")
        return real(self, name, change)

    monkeypatch.setattr(Store, "update", edited_first)
    parsed = _count_parses(monkeypatch, "memory.md")
    fake_memory(workspace).add("The staging host is called zebra-7", type="fact")
    text = memory.read_text()
    assert "written by hand meanwhile" in text and "zebra-7" in text
    assert parsed == ["memory.md", "memory.md"]  # the add's read, then the changed text


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


@pytest.mark.parametrize(
    "args",
    [
        ["search", "python tests", "--mode", "keyword", "--no-pager"],
        ["add", "The staging host is called zebra-7"],
        ["list", "--json"],
    ],
)
def test_a_command_reads_argv_once_and_resolves_its_workspace_once(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
) -> None:
    """No --workspace: the walk up from the current directory happens once."""
    from memcli.services.memory import Memory
    from memcli.store import workspace as resolver
    from memcli.surfaces.cli import env

    real_init = Memory.__init__

    def hashing(self: Memory, *args: Any, **kwargs: Any) -> None:  # the real shared_memory
        kwargs.setdefault("embedder_factory", HashingEmbedder)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(Memory, "__init__", hashing)
    monkeypatch.chdir(workspace)
    reads = _counting(monkeypatch, env, "read_globals")
    options = _counting(monkeypatch, env, "parse_options")
    walks = _counting(monkeypatch, resolver, "discover")
    roots = _counting(monkeypatch, resolver, "find_root")
    assert fastpath.run(args) == 0, capsys.readouterr()
    assert len(reads) == 1
    assert len(options) == (1 if args[0] == "search" else 0)  # only served commands
    assert len(walks) == 1
    # resolved once, then passed down and taken as is
    assert [r for r in roots if not isinstance(r, resolver.Resolved)] == [None]


def test_the_environment_is_passed_down(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command writes to its Env's streams (not sys.stdout) and reads its clock
    (relative dates)."""
    use_fake_memory(monkeypatch)

    def listed(clock: float, *args: str) -> list[str]:
        out = io.StringIO()
        argv = ["-w", str(workspace), *args]
        assert fastpath.run(argv, Env(argv, stdout=out, clock=lambda: clock)) == 0
        return [e["id"] for e in json.loads(out.getvalue())["data"]["entries"]]

    everything = listed(time.time(), "list", "--json")
    assert everything
    year_2000 = 946_684_800.0
    dated = listed(time.time(), "list", "--json", "--since", "1990-01-01")
    assert dated and listed(year_2000, "list", "--json", "--since", "7d") == dated
    assert listed(year_2000 + 200 * 365 * 86400, "list", "--json", "--since", "7d") == []
    out = io.StringIO()
    argv = [
        "-w",
        str(workspace),
        "search",
        "python tests",
        "--mode",
        "keyword",
        "--json",
        "--since",
        "7d",
    ]
    assert fastpath.run(argv, Env(argv, stdout=out, clock=lambda: 4102444800.0)) == 0
    assert json.loads(out.getvalue())["data"]["hits"] == []  # nothing created after 2099
    assert capsys.readouterr().out == ""


def test_the_cli_helper_fails_on_a_crash(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deliberate error is an exit code; anything else propagates (a crash is never
    mistaken for exit code 1)."""
    use_fake_memory(monkeypatch)
    runner = CliRunner()
    missing = invoke(runner, workspace, "get", "nosuchid")
    assert missing.exit_code == 1 and "nosuchid" in missing.stderr

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("memcli.services.entries.stats", crash)
    with pytest.raises(RuntimeError, match="a bug"):
        invoke(runner, workspace, "stats")
    monkeypatch.setattr("memcli.services.search.checked_hits", crash)
    with pytest.raises(RuntimeError, match="a bug"):  # the quick path too
        invoke(runner, workspace, "search", "python")
