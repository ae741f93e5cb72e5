"""Layered memory (memcli.services.layers): which layers a workspace reads, the merge of
their hits and candidates, where writes go; with the fake embedder (the real model's
test is tests/integration/test_layers.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcli.core.models import Entry
from memcli.core.names import MEMORY_FILE
from memcli.core.requests import InjectRequest, ListRequest, SearchQuery
from memcli.services import layers
from memcli.services.layers import LayerCandidate, LayerHit
from memcli.store.workspace import init_workspace
from memcli.surfaces import operations
from tests.support.fakes import fake_memory


def _user_dir() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "memcli"


def _add(root: Path, *texts: str, type_: str = "fact") -> None:
    mem = fake_memory(root)
    for text in texts:
        mem.add(text, type=type_, by="person")


def _entry(text: str, entry_id: str) -> Entry:
    return Entry(id=entry_id, type="fact", text=text, file=MEMORY_FILE, line=1)


def _hit(text: str, score: float, layer: str, entry_id: str = "") -> LayerHit:
    return LayerHit(_entry(text, entry_id or f"m{len(text)}{layer}"), score, {}, layer=layer)


# ------------------------------------------------------------------ merge, dedupe (pure)

MERGE_ROWS = [
    # (hits as (text, score, layer), expected (text, layer) in order)
    ([("a", 0.9, "user"), ("b", 0.5, "project")], [("a", "user"), ("b", "project")]),
    ([("a", 0.2, "project"), ("b", 0.8, "user")], [("b", "user"), ("a", "project")]),
    # the same normalised text: the nearest layer's stays, even when it scores less
    (
        [("Uses pytest.", 0.9, "user"), ("uses  PYTEST", 0.4, "project")],
        [("uses  PYTEST", "project")],
    ),
    # equal scores: the nearest layer first
    ([("x", 0.5, "user"), ("y", 0.5, "project")], [("y", "project"), ("x", "user")]),
    ([], []),
    # one layer's hits come out in its search's order, not re-sorted by score
    ([("a", 0.4, "project"), ("b", 0.7, "project")], [("a", "project"), ("b", "project")]),
    # interleaved by each layer's next hit: the user's 0.6 beats the project's head, 0.4
    (
        [("a", 0.4, "project"), ("b", 0.7, "project"), ("c", 0.6, "user")],
        [("c", "user"), ("a", "project"), ("b", "project")],
    ),
    (
        [("a", 0.9, "project"), ("b", 0.3, "project"), ("c", 0.5, "user"), ("d", 0.8, "user")],
        [("a", "project"), ("c", "user"), ("d", "user"), ("b", "project")],
    ),
]


@pytest.mark.parametrize(("given", "expected"), MERGE_ROWS)
def test_merge_keeps_each_layers_order_and_the_nearest_duplicate(given, expected) -> None:  # noqa: ANN001
    hits = [_hit(text, score, layer) for text, score, layer in given]
    merged = layers.merge(hits, ["project", "user"])
    assert [(h.entry.text, h.layer) for h in merged] == expected


def test_dedupe_keeps_the_nearest_layers_candidate_in_order() -> None:
    found = [
        LayerCandidate(_entry("Deploys to web1", "m1"), 0.5, False, "project"),
        LayerCandidate(_entry("Prefers pytest", "m2"), 0.9, False, "user"),
        LayerCandidate(_entry("deploys to WEB1.", "m3"), 0.95, False, "user"),
        LayerCandidate(_entry("Prefers pytest", "m4"), 0.1, False, "project"),
    ]
    kept = layers.dedupe(found, ["project", "user"])
    assert [(c.layer, c.entry.id) for c in kept] == [("project", "m1"), ("project", "m4")]


def test_a_layer_hit_says_its_layer() -> None:
    hit = _hit("a", 0.5, "user", "m1")
    assert hit.to_dict()["layer"] == "user" and hit.to_dict()["id"] == "m1"


# ------------------------------------------------------------------ which layers


def test_layers_read_by_default_the_user_workspace(tmp_path: Path) -> None:
    project = tmp_path / "project"
    init_workspace(project)
    assert [lay.name for lay in layers.open_layers(fake_memory(project))] == ["project"]  # none yet
    init_workspace(_user_dir())
    found = layers.open_layers(fake_memory(project))
    assert [(lay.name, lay.memory.root) for lay in found] == [
        ("project", project.resolve()),
        ("user", _user_dir().resolve()),
    ]
    # the per-user workspace reads no other layer, even one it names
    os.environ["MEMCLI_LAYERS_READ"] = f"user, {project}"
    try:
        assert [lay.name for lay in layers.open_layers(fake_memory(_user_dir()))] == ["project"]
        assert len(layers.open_layers(fake_memory(project))) == 2  # (a path of itself: once)
    finally:
        del os.environ["MEMCLI_LAYERS_READ"]


def test_read_names_paths_and_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, notes = tmp_path / "project", tmp_path / "notes"
    init_workspace(project)
    init_workspace(notes)
    init_workspace(_user_dir())
    monkeypatch.setenv("MEMCLI_LAYERS_READ", "")
    assert [lay.name for lay in layers.open_layers(fake_memory(project))] == ["project"]
    monkeypatch.setenv("MEMCLI_LAYERS_READ", "../notes, user, ../missing")
    told: list[str] = []
    mem = fake_memory(project)
    mem.runtime.notify = told.append
    assert [lay.name for lay in layers.open_layers(mem)] == ["project", "../notes", "user"]
    assert len(told) == 1 and "missing" in told[0] and "no memcli workspace" in told[0]


def test_a_layer_others_can_write_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, shared = tmp_path / "project", tmp_path / "shared"
    init_workspace(project)
    init_workspace(shared)
    shared.chmod(0o777)
    monkeypatch.setenv("MEMCLI_LAYERS_READ", "../shared")
    told: list[str] = []
    mem = fake_memory(project)
    mem.runtime.notify = told.append
    assert [lay.name for lay in layers.open_layers(mem)] == ["project"]
    assert len(told) == 1 and "anyone can write in it" in told[0]


def test_a_path_layer_in_an_untrusted_memcli_toml_is_not_read(tmp_path: Path) -> None:
    project, notes = tmp_path / "project", tmp_path / "notes"
    init_workspace(project)
    init_workspace(notes)
    (project / "memcli.toml").write_text('[layers]\nread = "../notes"\n')
    assert [lay.name for lay in layers.open_layers(fake_memory(project))] == ["project"]


def test_a_long_lived_memory_sees_layers_come_and_change(tmp_path: Path) -> None:
    """The layer list is decided on every call (a watcher is not restarted): a per-user
    workspace made later is read; a layer's Memory is kept while its memcli.toml stays
    the same, and made again when it changes (its own settings)."""
    project = tmp_path / "project"
    init_workspace(project)
    mem = fake_memory(project)
    assert [lay.name for lay in layers.open_layers(mem)] == ["project"]
    init_workspace(_user_dir())
    first = layers.open_layers(mem)
    assert [lay.name for lay in first] == ["project", "user"]
    assert layers.open_layers(mem)[1].memory is first[1].memory  # kept warm
    (_user_dir() / "memcli.toml").write_text("[search]\nlimit = 3\n")
    again = layers.open_layers(mem)[1].memory
    assert again is not first[1].memory and again.settings.search.limit == 3
    os.environ["MEMCLI_LAYERS_READ"] = ""
    try:
        assert [lay.name for lay in layers.open_layers(fake_memory(project))] == ["project"]
    finally:
        del os.environ["MEMCLI_LAYERS_READ"]


READ_ROWS = [
    # (`[layers] read` in an untrusted memcli.toml, whether it waits for `memcli trust`)
    ("", False),  # reads no other layer
    ("user", False),  # the default
    (" user , ", False),
    ("user, user", False),
    ("../notes", True),  # another directory
    ("user, ../notes", True),
    ("/home/someone/memory", True),
    ("users", True),  # not the name of the person's layer: a path
    (["user"], True),  # not a string: never taken as harmless
]


@pytest.mark.parametrize(("value", "withheld"), READ_ROWS)
def test_reading_no_other_directory_needs_no_approval(value, withheld: bool) -> None:  # noqa: ANN001
    from memcli.store import trust

    assert (("layers", "read") in trust.withheld({"layers": {"read": value}})) is withheld


def test_an_untrusted_memcli_toml_may_read_fewer_layers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    (project / "memcli.toml").write_text('[layers]\nread = ""\n')
    mem = fake_memory(project)
    assert mem.settings.ignored == () and [lay.name for lay in layers.open_layers(mem)] == [
        "project"
    ]


def test_each_layer_applies_its_own_memcli_toml_as_its_trust_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A layer is read with its own settings: the harmless ones of its memcli.toml apply,
    the sensitive ones only once that layer is trusted (a `memcli trust` is seen by a
    long-lived process); the layers a layer names are not read in turn."""
    from memcli.store import trust

    project, notes, secret = tmp_path / "project", tmp_path / "notes", tmp_path / "secret"
    for root in (project, notes, secret, _user_dir()):
        init_workspace(root)
    _add(secret, "The vault password hint is a bird")
    (notes / "memcli.toml").write_text(
        '[search]\nlimit = 3\n[llm]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[layers]\nread = "user, ../secret"\n'
    )
    monkeypatch.setenv("MEMCLI_LAYERS_READ", "user, ../notes")  # the person's own choice
    mem = fake_memory(project)
    found = layers.open_layers(mem)
    assert [lay.name for lay in found] == ["project", "user", "../notes"]
    theirs = found[2].memory.settings
    assert theirs.search.limit == 3 and theirs.llm.base_url == ""
    assert set(theirs.ignored) >= {"llm.provider", "llm.base_url"}
    trust.trust(notes)
    trusted = layers.open_layers(mem)[2].memory.settings
    assert trusted.llm.base_url == "http://127.0.0.1:9/v1" and trusted.ignored == ()
    assert [lay.name for lay in layers.open_layers(mem)] == ["project", "user", "../notes"]
    assert not any("vault" in h.entry.text for h in layers.search(found, "vault password"))


def test_the_prompt_hooks_first_answer_reads_both_layers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the first indexing the prompt hook answers from the keyword side alone
    (no model, no index): of every layer, not of the project alone."""
    import json

    from memcli.surfaces import hooks

    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    with (_user_dir() / MEMORY_FILE).open("a") as out:
        out.write("- Writes tests before fixing a bug <!-- id=mu1 type=preference -->\n")
    with (project / MEMORY_FILE).open("a") as out:
        out.write("- The tests run with make test in CI <!-- id=mp1 -->\n")
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    monkeypatch.setattr(hooks, "_index_in_background", lambda root: False)
    payload = json.dumps({"prompt": "how should I write tests?", "cwd": str(project)})
    out, said = hooks.answer("user-prompt-submit", str(project), payload, 500, 30.0)
    block = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "Writes tests before fixing a bug" in block and "make test in CI" in block
    assert "keyword side" in said
    assert not any((root / ".memcli" / "index").exists() for root in (project, _user_dir()))


def test_the_prompt_hook_names_an_unreadable_file_of_the_user_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty block because the person's own memory.md cannot be read says so, with
    its path (it used to look at the project's files only)."""
    import json

    from memcli.surfaces import hooks

    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    mine = _user_dir() / MEMORY_FILE
    mine.write_bytes(mine.read_bytes() + b"- Prefers pytest \xff\xfe for tests\n")
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    monkeypatch.setattr(hooks, "_index_in_background", lambda root: False)
    payload = json.dumps({"prompt": "how should I write tests?", "cwd": str(project)})
    with pytest.raises(hooks.HookError) as caught:
        hooks.answer("user-prompt-submit", str(project), payload, 500, 30.0)
    assert str(caught.value).startswith(str(mine.resolve()) + ":")
    assert "its memories were left out" in str(caught.value)
    # the project's own unreadable file is named as before (its name alone)
    ours = project / MEMORY_FILE
    ours.write_bytes(ours.read_bytes() + b"- \xff\n")
    with pytest.raises(hooks.HookError, match=r"^memory\.md:"):
        hooks.answer("user-prompt-submit", str(project), payload, 500, 30.0)


# ------------------------------------------------------------------ reading every layer


def test_search_inject_list_read_both_layers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    _add(_user_dir(), "Prefers pytest fixtures for tests", type_="preference")
    _add(project, "The tests run with make test", "The deploy host is web1")
    _add(_user_dir(), "The tests run with make test")  # a duplicate: the project's stays
    mem = fake_memory(project)
    hits = operations.search(mem, SearchQuery("tests", touch=False))
    assert {(h.entry.text, h.layer) for h in hits} >= {
        ("Prefers pytest fixtures for tests", "user"),
        ("The tests run with make test", "project"),
    }
    assert [h.entry.text for h in hits].count("The tests run with make test") == 1
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    packed = operations.inject(mem, InjectRequest("tests", touch=True))
    assert "Prefers pytest fixtures" in packed.text and "make test" in packed.text
    assert packed.text.count("make test") == 1
    assert {(e["text"], e["layer"]) for e in packed.to_dict()["entries"]} >= {
        ("Prefers pytest fixtures for tests", "user"),
        ("The tests run with make test", "project"),
    }
    # each chosen entry counts as accessed in its own layer
    user_id = next(c.entry.id for c in packed.chosen if "pytest" in c.entry.text)
    assert fake_memory(_user_dir()).access.load().get(user_id) is not None
    assert fake_memory(project).access.load().get(user_id) is None

    recall = operations.inject(mem, InjectRequest(None, touch=False))  # no context: all
    assert {e["layer"] for e in recall.to_dict()["entries"]} == {"project", "user"}

    listed = operations.list_entries(mem, ListRequest())
    assert [(e.layer, e.entry.text) for e in listed] == [
        ("project", "The tests run with make test"),
        ("project", "The deploy host is web1"),
        ("user", "Prefers pytest fixtures for tests"),
        ("user", "The tests run with make test"),
    ]
    assert len(operations.list_entries(mem, ListRequest(limit=3))) == 3

    from memcli import Layers  # the Python API: the same reads

    api = Layers(mem)
    assert [(h.layer, h.entry.id) for h in api.search("tests", touch=False)] == [
        (h.layer, h.entry.id) for h in hits
    ]
    assert api.inject("tests", touch=False).text == packed.text
    assert [e.layer for e in api.list(types=("preference",))] == ["user"]


@pytest.mark.parametrize("floor", ["0.25", "0.9"])
def test_an_empty_second_layer_changes_no_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, floor: str
) -> None:
    """Inject has its own relevance rule: every layer's candidates come from a search
    without the search's floor, as on one workspace, so the block of a project that also
    reads an empty per-user workspace is the block it had alone, whatever
    search.relevance_floor says; a profile entry of either layer has its place."""
    monkeypatch.setenv("MEMCLI_SEARCH_RELEVANCE_FLOOR", floor)
    project = tmp_path / "project"
    init_workspace(project)
    fake_memory(project).add(
        "Prefers dark mode in every editor", type="preference", importance=0.9, by="person"
    )
    _add(project, "The deploy host is web1", "Deploys go through staging first")
    _add(project, "The tests run with make test", "The staging host is called tern")
    request = InjectRequest("which host do we deploy to?", touch=False)
    alone = operations.inject(fake_memory(project), request)
    assert "Prefers dark mode in every editor" in alone.text and "web1" in alone.text
    init_workspace(_user_dir())
    both = operations.inject(fake_memory(project), request)
    assert both.text == alone.text
    fake_memory(_user_dir()).add(
        "Answers in British English", type="preference", importance=0.95, by="person"
    )
    both = operations.inject(fake_memory(project), request)
    assert "Answers in British English" in both.text and "web1" in both.text


def test_a_single_workspace_reads_as_before(tmp_path: Path) -> None:
    """No user workspace, or the workspace is the user one: the old path, untouched."""
    project = tmp_path / "project"
    init_workspace(project)
    _add(project, "The tests run with make test", "The deploy host is web1")
    for root in (project, _user_dir()):
        if root == _user_dir():
            init_workspace(root)
            _add(root, "The tests run with make test", "The deploy host is web1")
        mem = fake_memory(root)
        hits = operations.search(mem, SearchQuery("tests", touch=False))
        before = mem.search("tests", touch=False)
        assert [type(h) for h in hits] == [type(h) for h in before] and not any(
            isinstance(h, LayerHit) for h in hits
        )
        assert [h.to_dict(True) for h in hits] == [h.to_dict(True) for h in before]
        packed = operations.inject(mem, InjectRequest("tests", touch=False))
        assert packed.to_dict() == mem.inject("tests", touch=False).to_dict()
        assert operations.list_entries(mem, ListRequest()) == mem.list()


def test_get_and_forget_find_the_entry_in_its_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An id a search returned from the person's layer can be read and forgotten from the
    project (CLI, MCP and the daemon go through operations.get / operations.holder); it
    is archived in its own layer."""
    from memcli.core.errors import NotFoundError
    from memcli.core.requests import GetRequest
    from memcli.services.memory import Memory
    from tests.support.cli import envelope, invoke
    from tests.support.fakes import use_fake_memory

    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    _add(_user_dir(), "Prefers pytest fixtures for tests", type_="preference")
    _add(project, "The tests run with make test")
    mem = fake_memory(project)
    theirs = next(
        h.entry for h in operations.search(mem, SearchQuery("tests")) if h.layer == "user"
    )
    ours = next(
        e.entry for e in operations.list_entries(mem, ListRequest()) if e.layer == "project"
    )
    detail = operations.get(mem, GetRequest(theirs.id)).to_dict()
    assert detail["layer"] == "user" and detail["text"] == theirs.text
    assert operations.get(mem, GetRequest(ours.id)).to_dict()["layer"] == "project"
    with pytest.raises(NotFoundError, match="m0000000000"):
        operations.get(mem, GetRequest("m0000000000"))
    assert operations.holder(mem, theirs.id).root == _user_dir().resolve()
    assert operations.holder(mem, "m0000000000") is mem

    use_fake_memory(monkeypatch)
    monkeypatch.setenv("MEMCLI_NO_DAEMON", "1")
    from typer.testing import CliRunner

    runner = CliRunner()
    shown = envelope(invoke(runner, project, "get", theirs.id, "--json").output)
    assert shown["entry"]["layer"] == "user"
    edited = invoke(runner, project, "edit", theirs.id, "--importance", "0.8")
    assert edited.exit_code == 0 and f"of {_user_dir().resolve()}" in edited.output, edited.output
    assert "imp=0.8" in (_user_dir() / "memory.md").read_text()
    done = invoke(runner, project, "forget", theirs.id)
    assert done.exit_code == 0 and f"of {_user_dir().resolve()}" in done.output, done.output
    archived = Memory(_user_dir(), notify=lambda m: None).entries(include_archived=True)
    assert [e.file for e in archived if e.id == theirs.id] == ["archive.md"]
    assert (
        not (project / "archive.md").exists()
        or theirs.id not in (project / "archive.md").read_text()
    )


# ------------------------------------------------------------------ writes

TARGET_ROWS = [
    # (--to, user_types setting, type, expected layer)
    (None, "", "preference", "project"),
    (None, "preference", "preference", "user"),
    (None, "preference, lesson", "fact", "project"),
    (None, "preference, lesson", "lesson", "user"),
    ("user", "", "fact", "user"),
    ("project", "preference", "preference", "project"),
]


@pytest.mark.parametrize(("to", "user_types", "entry_type", "expected"), TARGET_ROWS)
def test_writes_go_to_the_nearest_layer_unless_told(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    to,
    user_types,
    entry_type,
    expected,  # noqa: ANN001
) -> None:
    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    monkeypatch.setenv("MEMCLI_LAYERS_USER_TYPES", user_types)
    target = layers.target(fake_memory(project), to, entry_type)
    assert target.root == (project if expected == "project" else _user_dir()).resolve()


EXTRACT_ROWS = [
    # (user_types, a per-user workspace exists, where the preference, the fact and the
    # pattern go; "held": the person's layer has that pattern already, nothing is added)
    ("", True, ("project", "project", "project")),
    ("preference", True, ("user", "project", "project")),
    ("preference, pattern", True, ("user", "project", "held")),
    ("preference, fact, pattern", True, ("user", "user", "held")),
    ("preference", False, ("project", "project", "project")),  # no per-user workspace
]
SAID = (
    "I prefer pytest over unittest. Remember that our staging host is called tern. "
    "I always write tests before fixing a bug."
)
EXTRACTED = ("Prefers pytest over unittest", "Our staging host is called tern")
HELD = "Always writes tests before fixing a bug"


@pytest.mark.parametrize(("user_types", "has_user", "where"), EXTRACT_ROWS)
def test_extraction_sends_each_statement_where_its_type_goes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    user_types: str,
    has_user: bool,
    where: tuple[str, str, str],
) -> None:
    """Extraction (the Stop hook, `memcli extract`) follows `[layers] user_types` as
    `add` does, and compares a statement with the entries of the layer it goes to."""
    project = tmp_path / "project"
    init_workspace(project)
    if has_user:
        init_workspace(_user_dir())
        _add(_user_dir(), HELD, type_="pattern")
    monkeypatch.setenv("MEMCLI_LAYERS_USER_TYPES", user_types)
    mem = fake_memory(project)
    messages = [{"role": "user", "content": SAID}]
    planned = operations.extract(mem, messages, dry_run=True)
    assert [d.candidate.type for d in planned] == ["preference", "fact", "pattern"]
    decisions = operations.extract(mem, messages, source="s1")
    assert [d.action for d in decisions] == [
        "NOOP" if place == "held" else "ADD" for place in where
    ]
    # each decision names the layer it went to while two are read, none with one
    named = [("user" if place == "held" else place) if has_user else None for place in where]
    assert [d.layer for d in decisions] == [d.layer for d in planned] == named
    assert all(("layer" in d.to_dict()) == has_user for d in decisions)
    texts = {"project": [e.text for e in fake_memory(project).entries()], "user": []}
    if has_user:
        texts["user"] = [e.text for e in fake_memory(_user_dir()).entries() if e.text != HELD]
    for text, place in zip((*EXTRACTED, HELD), where, strict=True):
        if place != "held":
            assert text in texts[place]
            assert text not in texts["user" if place == "project" else "project"]
    if where[2] == "held":
        assert HELD not in texts["project"]


def test_the_stop_hook_remembers_a_preference_in_the_persons_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Stop hook's extraction goes through the same rule (user_types = preference):
    the session's preference lands in the per-user workspace, not in the project."""
    from memcli.services.memory import Memory
    from memcli.surfaces.hook_extract import extract_new
    from tests.support.env import FIXTURES
    from tests.support.fakes import HashingEmbedder

    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    monkeypatch.setenv("MEMCLI_LAYERS_USER_TYPES", "preference")

    def fake(root: str | Path) -> Memory:
        return Memory(root, embedder_factory=HashingEmbedder, notify=lambda m: None)

    monkeypatch.setattr("memcli.services.memory.Memory", fake)  # the hook's Memory(root)
    session = FIXTURES / "claude_code_session.jsonl"
    said = extract_new(str(project), {"transcript_path": str(session), "session_id": "s1"})
    assert "1 ADD" in said, said
    mine = [e for e in fake(_user_dir()).entries() if e.type == "preference"]
    assert [e.text for e in mine] == [
        "Prefers pytest fixtures over setUp methods, so keep it that way when you fix it"
    ]
    assert not [e for e in fake(project).entries() if e.type == "preference"]


@pytest.mark.parametrize(("user_types", "refused"), [("preference", True), ("", False)])
def test_the_stop_hook_waits_while_the_layer_it_writes_to_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_types: str, refused: bool
) -> None:
    """A preference the Stop hook would write to an unreadable memory.md of the person's
    layer: it says so, with the path, and writes nothing (the transcript is read again
    next time); a layer it does not write to does not stop it."""
    from memcli.services.memory import Memory
    from memcli.surfaces import hook_extract
    from tests.support.env import FIXTURES
    from tests.support.fakes import HashingEmbedder

    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    mine = _user_dir() / MEMORY_FILE
    mine.write_bytes(mine.read_bytes() + b"- Prefers \xff tabs\n")
    monkeypatch.setenv("MEMCLI_LAYERS_USER_TYPES", user_types)

    def fake(root: str | Path, **given: object) -> Memory:
        return Memory(root, embedder_factory=HashingEmbedder, notify=lambda m: None)

    monkeypatch.setattr("memcli.services.memory.Memory", fake)
    payload = {"transcript_path": str(FIXTURES / "claude_code_session.jsonl"), "session_id": "s"}
    before = (project / MEMORY_FILE).read_bytes()
    if refused:
        with pytest.raises(hook_extract.HookError) as caught:
            hook_extract.extract_new(str(project), payload)
        assert str(caught.value).startswith(str(mine.resolve()) + ":")
        assert "cannot be updated" in str(caught.value)
        assert (project / MEMORY_FILE).read_bytes() == before
    else:
        assert "1 ADD" in hook_extract.extract_new(str(project), payload)


def test_an_unknown_layer_to_write_to_is_refused(tmp_path: Path) -> None:
    from memcli.core.errors import ValidationError

    init_workspace(tmp_path / "p")
    with pytest.raises(ValidationError, match="unknown layer 'team'"):
        layers.target(fake_memory(tmp_path / "p"), "team", "fact")


def test_the_layers_embed_a_query_once(tmp_path: Path) -> None:
    from tests.support.fakes import HashingEmbedder

    inner = HashingEmbedder()
    memo = layers.LastQuery(lambda: inner)
    first = memo.embed(["how do we test?"])
    first[0, 0] = 42.0  # a caller's change never reaches the next caller
    again = memo.embed(["how do we test?"])
    assert inner.calls == [1] and again[0, 0] != 42.0 and memo.dim == inner.dim
    memo.embed(["something else"])
    assert inner.calls == [1, 1]

    project = tmp_path / "project"
    init_workspace(project)
    init_workspace(_user_dir())
    found = layers.open_layers(fake_memory(project))
    shared = found[0].memory.index_manager.query_embedder
    assert isinstance(shared, layers.LastQuery)
    assert found[1].memory.index_manager.query_embedder is shared
