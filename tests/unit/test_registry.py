"""The registry of a workspace's files (issue 27 item 2): one module names the files, a
bad `[files]` entry is an error naming memcli.toml:line, and what a declared file is
(its types, default type, headings, whether git merges it and the watcher watches it)
comes from the registry alone."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from memcli.core.errors import ConfigError
from memcli.core.registry import BUILTIN, Registry
from memcli.store.config_files import load_registry

PACKAGE = Path(__file__).resolve().parents[2] / "memcli"
#: the registry: the only modules that spell the curated files' names
REGISTRY_MODULES = {"core/names.py"}
#: the only modules that import the built-in names (they are for tests and tools)
NAME_IMPORTERS = {"core/names.py", "core/registry.py"}
#: a literal that spells a workspace file in code: `"memory.md"`, `"/learnings.md"`,
#: `"memory://memory.md"`, `r"(?:memory|learnings)\.md"`, `"archive.md"`, `"memcli.toml"`
SPELLED = re.compile(r"(memory|learnings|archive)[^\s]*\.md|memcli\.toml")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def spellings(source: str) -> list[tuple[int, str]]:
    """(line, literal) of each string literal in `source` that spells a curated file's
    name as a value: a literal with no whitespace (a name, a path, a URI, a pattern).
    Docstrings, comments and prose (messages and help text: literals with spaces) are
    text about the files, not code that decides which files there are."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
            if SPELLED.search(text) and not re.search(r"\s", text):
                out.append((node.lineno, text))
    return out


def name_imports(source: str) -> list[tuple[int, str]]:
    """(line, name) of each import of MEMORY_FILE or LEARNINGS_FILE."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            out += [
                (node.lineno, a.name)
                for a in node.names
                if a.name in ("MEMORY_FILE", "LEARNINGS_FILE")
            ]
    return out


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('x = "memory.md"', True),
        ('x = ("memory.md", "learnings.md")', True),
        ('x = f"/{name}"', False),
        ('x = "memory://memory.md"', True),
        ('x = r"(?:memory|learnings|archive)\\.md"', True),
        ('"""Reads memory.md."""', False),  # a docstring
        ('x = 1  # memory.md', False),  # a comment
        ('f(help="memory.md (default), learnings.md or archive.md.")', False),  # help text
        ('raise E(f"{path}: no memory.md here")', False),  # a message
        ('x = "projects.md"', False),
        ('x = root / "memcli.toml"', True),
        ('x = "archive.md"', True),
        ('x = r"(?:memory|system|user)\\b"', False),  # the word, not the file
    ],
)
def test_the_spelling_rule(source: str, found: bool) -> None:
    """The rule itself, at its boundaries: names, paths, URIs and patterns are code;
    docstrings, comments, help text and messages are not."""
    assert bool(spellings(source)) is found


def test_no_module_but_the_registry_spells_a_curated_file() -> None:
    """Which files a workspace has is the registry's: no other module of memcli spells
    memory.md, learnings.md, archive.md or memcli.toml in code, or imports the curated
    files' names."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        source = path.read_text(encoding="utf-8")
        if rel not in REGISTRY_MODULES:
            offenders += [f"{rel}:{line}: {text!r}" for line, text in spellings(source)]
        if rel not in NAME_IMPORTERS:
            offenders += [f"{rel}:{line}: imports {name}" for line, name in name_imports(source)]
    assert offenders == [], "ask the workspace's registry instead:\n" + "\n".join(offenders)


def test_the_registry_module_does_spell_them() -> None:
    """The check above can fail: the registry's own module is caught by it."""
    source = (PACKAGE / "core/names.py").read_text(encoding="utf-8")
    assert {text for _, text in spellings(source)} == {
        "memory.md", "learnings.md", "archive.md", "memcli.toml",
    }


# ----------------------------------------------------------------- [files] validation

GOOD = '[files."projects.md"]\ntypes = ["project"]\n'

#: (memcli.toml text, the line named, words of the message); None: accepted
CASES: list[tuple[str, str, int | None, str | None]] = [
    ("a plain file", GOOD, None, None),
    ("two types, default, title, headings",
     '[files."projects.md"]\ntypes = ["project", "host"]\ndefault = "host"\n'
     'title = "Work"\nheadings = { host = "Hosts" }\n', None, None),
    ("dotted keys", 'files."notes-2.md".types = ["note"]\n', None, None),
    ("a path", '[files."sub/projects.md"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("..", '[files."../projects.md"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("absolute", '[files."/etc/projects.md"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("dot-dot inside", '[files."a..md"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("hidden", '[files.".projects.md"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("not .md", '[files."projects.txt"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("only .md", '[files.".md"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("a space", '[files."my projects.md"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("archive.md", '[files."archive.md"]\ntypes = ["project"]\n', 1, "archive.md"),
    ("memcli.toml", '[files."memcli.toml"]\ntypes = ["project"]\n', 1, "not a file name"),
    ("memory.md", '[files."memory.md"]\ntypes = ["project"]\n', 1, "built in"),
    ("Learnings.md", '[files."Learnings.md"]\ntypes = ["project"]\n', 1, "built in"),
    ("the same file twice",
     GOOD + '[files."Projects.md"]\ntypes = ["plan"]\n', 3, "the same file"),
    ("a type twice",
     GOOD + '[files."plans.md"]\ntypes = ["project"]\n', 4, "declared twice"),
    ("a type twice in one file", '[files."p.md"]\ntypes = ["project", "project"]\n', 2,
     "declared twice"),
    ("a built-in type", '[files."p.md"]\ntypes = ["fact"]\n', 2, "built-in type of memory.md"),
    ("a built-in type's plural", '[files."p.md"]\ntypes = ["lessons"]\n', 2, "built-in type"),
    ("archived", '[files."p.md"]\ntypes = ["archived"]\n', 2, "reserved"),
    ("episode", '[files."p.md"]\ntypes = ["episode"]\n', 2, "reserved"),
    ("not a type name", '[files."p.md"]\ntypes = ["Project Notes"]\n', 2, "not a type name"),
    ("empty type", '[files."p.md"]\ntypes = [""]\n', 2, "not a type name"),
    ("no types", '[files."p.md"]\ntitle = "P"\n', 1, "non-empty list"),
    ("empty types", '[files."p.md"]\ntypes = []\n', 2, "non-empty list"),
    ("types not a list", '[files."p.md"]\ntypes = "project"\n', 2, "non-empty list"),
    ("unknown key", '[files."p.md"]\ntypes = ["project"]\ntype = "x"\n', 3, "unknown key 'type'"),
    ("default not a type", '[files."p.md"]\ntypes = ["project"]\ndefault = "host"\n', 3,
     "not one of its types"),
    ("title two lines", '[files."p.md"]\ntypes = ["project"]\ntitle = "a\\nb"\n', 3,
     "one line"),
    ("heading of another type", '[files."p.md"]\ntypes = ["project"]\n'
     'headings = { project = "Facts" }\n', 3, "heading of type 'fact'"),
    ("heading for no type", '[files."p.md"]\ntypes = ["project"]\n'
     'headings = { host = "Hosts" }\n', 3, "not one of its types"),
    ("not a table", 'files = ["projects.md"]\n', 1, "must be a table"),
    ("a file not a table", '[files]\n"p.md" = ["project"]\n', 2, "must be a table"),
    ("after other tables", '[search]\nlimit = 5\n\n[files."x/p.md"]\ntypes = ["p"]\n', 4,
     "not a file name"),
]


@pytest.mark.parametrize(
    ("text", "line", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_files_validation(tmp_path: Path, text: str, line: int | None, words: str | None) -> None:
    (tmp_path / "memcli.toml").write_text(text, encoding="utf-8")
    if words is None:
        files = load_registry(tmp_path)
        assert len(files.curated) == len(BUILTIN.curated) + text.count(".md")
        return
    with pytest.raises(ConfigError) as caught:
        load_registry(tmp_path)
    message = caught.value.message
    assert message.startswith(f"{tmp_path / 'memcli.toml'}:{line}: "), message
    assert words in message
    assert "nothing was read or changed" in (caught.value.hint or "")


def test_settings_refuse_a_bad_files_table(tmp_path: Path) -> None:
    """`config set` loads the settings with the new text before writing: a bad [files]
    stops it there, like any bad setting."""
    from memcli.store.config import load_settings

    (tmp_path / "memcli.toml").write_text('[files."../p.md"]\ntypes = ["p"]\n')
    with pytest.raises(ConfigError, match=r"memcli.toml:1: .*not a file name"):
        load_settings(tmp_path, env={}, user_config=tmp_path / "none.toml")
    user = tmp_path / "user.toml"
    user.write_text(GOOD)
    (tmp_path / "memcli.toml").write_text("")
    with pytest.raises(ConfigError, match=r"\[files\] names a workspace's curated files"):
        load_settings(tmp_path, env={}, user_config=user)


# ----------------------------------------------------------------------- the registry


def _files(tmp_path: Path, text: str) -> Registry:
    (tmp_path / "memcli.toml").write_text(text, encoding="utf-8")
    return load_registry(tmp_path)


def test_without_files_the_registry_is_the_built_in_one(tmp_path: Path) -> None:
    assert load_registry(tmp_path) is BUILTIN
    assert _files(tmp_path, "[search]\nlimit = 3\n") is BUILTIN
    assert BUILTIN.names == ("memory.md", "learnings.md")
    assert [BUILTIN.file_for_type(t) for t in ("preference", "lesson", "skill", "rumour")] == [
        "memory.md", "learnings.md", "learnings.md", "memory.md",
    ]


@pytest.mark.parametrize(
    ("ask", "answer"),
    [
        (("file_for_type", "project"), "projects.md"),
        (("file_for_type", "host"), "projects.md"),
        (("file_for_type", "fact"), "memory.md"),
        (("file_for_type", "undeclared"), "memory.md"),
        (("section_title", "host"), "Hosts"),
        (("section_title", "project"), "Project"),
        (("section_title", "preference"), "Preferences"),
        (("heading_type", "Hosts"), "host"),
        (("heading_type", "hosts"), "host"),
        (("heading_type", "Projects"), "project"),
        (("heading_type", "Project"), "project"),
        (("heading_type", "Known Facts"), "fact"),
        (("heading_type", "Widgets"), "widgets"),
        (("default_type", "projects.md"), "host"),
        (("default_type", "memory.md"), "fact"),
        (("default_type", "learnings.md"), "lesson"),
        (("default_type", "episodes/2026-01-02.md"), "episode"),
        (("default_type", "conversations/x.md"), "turn"),
        (("is_entry_file", "projects.md"), True),
        (("is_entry_file", "archive.md"), True),
        (("is_entry_file", "episodes/x.md"), True),
        (("is_entry_file", "episodes/a/x.md"), False),
        (("is_entry_file", "other.md"), False),
        (("is_entry_file", "../projects.md"), False),
        (("is_own_file", "projects.md"), True),
        (("is_own_file", "archive.md"), False),
        (("is_own_file", "episodes/2026-01-02.md"), True),
        (("is_own_file", "conversations/x.md"), False),
        (("watched", "projects.md"), True),
        (("watched", "memcli.toml"), True),
        (("watched", "README.md"), False),
        (("watched", "episodes/2026-01-02.md"), True),
        (("watched", "sub/projects.md"), False),
        (("is_log", "episodes/2026-01-02.md"), True),
        (("is_log", "projects.md"), False),
    ],
)
def test_what_a_declared_file_is(tmp_path: Path, ask: tuple[str, str], answer: object) -> None:
    files = _files(
        tmp_path,
        '[files."projects.md"]\ntypes = ["project", "host"]\ndefault = "host"\n'
        'headings = { host = "Hosts" }\n',
    )
    method, arg = ask
    assert getattr(files, method)(arg) == answer


def test_git_merges_and_the_template_of_a_declared_file(tmp_path: Path) -> None:
    from memcli.store.gitmerge import attributes

    files = _files(tmp_path, '[files."projects.md"]\ntypes = ["project", "host"]\n')
    assert "/projects.md merge=memcli" in attributes(files)
    assert "/projects.md merge=memcli" not in attributes(BUILTIN)
    assert files.spec("projects.md").template() == (  # type: ignore[union-attr]
        "---\nmemcli: 1\n---\n# Projects\n\n## Project\n\n## Host\n"
    )


def test_the_parser_reads_a_declared_file_with_its_registry(tmp_path: Path) -> None:
    """Items before the first heading take the file's default type, `## Hosts` its
    declared type, in a first parse and in an incremental re-read alike."""
    from memcli.store.store import Store

    (tmp_path / "memory.md").write_text("# Memory\n")
    (tmp_path / "memcli.toml").write_text(
        '[files."projects.md"]\ntypes = ["project", "host"]\nheadings = { host = "Hosts" }\n'
    )
    path = tmp_path / "projects.md"
    path.write_text("- Apollo ships in March\n\n## Hosts\n- bx1 builds\n")
    store = Store(tmp_path)
    assert [(e.type, e.text) for e in store.entries()] == [
        ("project", "Apollo ships in March"),
        ("host", "bx1 builds"),
    ]
    path.write_text("- Apollo ships in March\n- Zeus ships in May\n\n## Hosts\n- bx1 builds\n")
    assert [(e.type, e.text) for e in store.entries()] == [
        ("project", "Apollo ships in March"),
        ("project", "Zeus ships in May"),
        ("host", "bx1 builds"),
    ]
    (tmp_path / "memcli.toml").write_text("")  # no longer declared: no longer read
    assert {e.file for e in store.entries()} <= {"memory.md"}


def test_the_watcher_follows_the_registry(tmp_path: Path) -> None:
    from memcli.surfaces.daemon.watch import is_relevant

    files = _files(tmp_path, GOOD)
    assert is_relevant(tmp_path / "projects.md", tmp_path, files)
    assert not is_relevant(tmp_path / "projects.md", tmp_path)  # the built-in registry
    assert not is_relevant(tmp_path / ".projects.md.swp", tmp_path, files)
    assert not is_relevant(tmp_path / "notes.md", tmp_path, files)


def test_export_and_import_keep_a_declared_type(tmp_path: Path) -> None:
    """A Markdown export writes a declared type's heading and an import reads it back as
    that type; a workspace that does not declare it imports such items as facts."""
    from memcli.adapters.portability import export_entries, parse_import
    from memcli.core.models import Entry

    files = _files(tmp_path, '[files."projects.md"]\ntypes = ["host"]\nheadings = { host = "Hosts" }\n')
    text = export_entries([Entry("m1", "bx1 builds", "host", "projects.md", 1)], "markdown", files)
    assert text == "## Hosts\n- bx1 builds\n\n"
    assert [(i.text, i.type) for i in parse_import(text, "x.md", "markdown", files)] == [
        ("bx1 builds", "host")
    ]
    row = '{"text": "bx1 builds", "type": "host"}\n'
    assert parse_import(row, "x.jsonl", "jsonl", files)[0].type == "host"
    assert parse_import(row, "x.jsonl", "jsonl")[0].type == "fact"
    assert parse_import(text, "x.md", "markdown")[0].type == "fact"
