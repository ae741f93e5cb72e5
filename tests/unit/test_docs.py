"""The documentation: the MkDocs site builds strictly (no broken link or anchor), the
generated reference pages follow the code, every MEMCLI_* variable the code reads is
documented, the README stays a front door, and nothing points at a document the
repository does not hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.env import ROOT

#: what cites a document the repository does not hold (the product spec, its seeds, the
#: issue tracker)
FOREIGN = re.compile(r"(?-i:DESIGN)\b|§|\bseeds?\s*0\d\d\b|\bissues?\s*#?\d+", re.IGNORECASE)
#: a relative Markdown link or image: [text](target)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def foreign_references(text: str) -> list[str]:
    """Lines of `text` that cite a document the repository does not hold."""
    return [line.strip() for line in text.splitlines() if FOREIGN.search(line)]


def missing_links(path: Path) -> list[str]:
    """Relative link targets in the Markdown file `path` that name no file."""
    out = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (path.parent / target.split("#")[0]).exists():
            out.append(target)
    return out


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: a broken link, anchor or page outside the nav fails."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True)
    build(config)
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The strict build is a real check: a page linking to a missing one stops it."""
    import shutil

    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    page = tmp_path / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n")
    config = load_config(str(tmp_path / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    with pytest.raises(Abort):
        build(config)


@pytest.mark.parametrize("page", ["docs/reference/cli.md", "docs/reference/mcp.md",
                                  "docs/reference/settings.md", "docs/reference/modules.md",
                                  "memcli/surfaces/mcp_snapshot.json"])  # fmt: skip
def test_generated_pages_are_current(page: str) -> None:
    from memcli.surfaces import docgen

    make = docgen.pages()[page]
    committed = (ROOT / page).read_text(encoding="utf-8")
    assert committed == make(), f"{page} is stale: run `{docgen.REGENERATE}`"


def test_every_command_is_in_the_cli_reference() -> None:
    import typer

    from memcli.surfaces.cli.app import app

    page = (ROOT / "docs/reference/cli.md").read_text(encoding="utf-8")
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        if not command.hidden:
            assert f"## memcli {name}\n" in page
            for option in command.params:
                if option.param_type_name == "option" and not getattr(option, "hidden", False):
                    assert all(o in page for o in option.opts), f"{name} {option.opts}"


def test_every_setting_has_a_meaning() -> None:
    """A setting added to the model needs a line in memcli.surfaces.docgen.settings.MEANINGS (and one
    that is gone, its line removed)."""
    from memcli.surfaces.docgen.settings import MEANINGS, settings_rows

    keys = {f"{section}.{key}" for section, key, _ in settings_rows()}
    assert keys - set(MEANINGS) == set(), "describe these in memcli.surfaces.docgen.settings.py"
    assert set(MEANINGS) - keys == set(), "these settings are gone: remove their lines"


def code_variables() -> set[str]:
    """Every MEMCLI_* name the code spells in full (a string or a comment)."""
    found: set[str] = set()
    for folder in ("memcli", "bench", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".sh") and path.is_file():
                found |= set(re.findall(r"\bMEMCLI_[A-Z0-9_]*[A-Z0-9]\b", path.read_text()))
    return found


def test_every_environment_variable_is_documented() -> None:
    """Each MEMCLI_* variable the code reads is in the settings page's table, or is a
    setting's MEMCLI_<SECTION>_<KEY>; MEMCLI_TEST_* belong to the test suite."""
    from memcli.surfaces.docgen.settings import VARIABLES, settings_rows

    page = (ROOT / "docs/reference/settings.md").read_text(encoding="utf-8")
    settings = {f"MEMCLI_{s.upper()}_{k.upper()}" for s, k, _ in settings_rows()}
    prefixes = {f"MEMCLI_{s.upper()}" for s, _, _ in settings_rows()}
    for name in sorted(code_variables()):
        if name.startswith("MEMCLI_TEST_") or name in prefixes or name == "MEMCLI_LLM":
            continue  # a test's own variable; a prefix such as MEMCLI_LLM_ in a comment
        assert name in settings or name in VARIABLES, f"{name} is read but not documented"
        assert f"`{name}`" in page


def test_the_variable_scan_sees_what_the_code_reads() -> None:
    """The scan above finds the variables read with os.environ (not just config's)."""
    found = code_variables()
    assert {"MEMCLI_WORKSPACE", "MEMCLI_NO_DAEMON", "MEMCLI_LOCK_TIMEOUT",
            "MEMCLI_MCP_READ_TIMEOUT"} <= found  # fmt: skip


def test_readme_is_a_front_door() -> None:
    """At most 8 KB, and the two setup commands CI and a newcomer run, as they are."""
    readme = (ROOT / "README.md").read_bytes()
    assert len(readme) <= 8192, f"README.md is {len(readme)} bytes; move detail to docs/"
    text = readme.decode("utf-8")
    assert "bash scripts/test.sh" in text and "bash scripts/demo.sh" in text
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_to_a_document_the_repository_lacks(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert foreign_references(text) == []
    if path.name == "README.md":  # inside docs/ the strict build checks links
        assert missing_links(path) == []


@pytest.mark.parametrize(
    ("line", "foreign"),
    [
        ("see DESIGN §4", True),
        ("as seed 001 says", True),
        ("fixed in issue 14", True),
        ("issue #29", True),
        ("the seeds 002 and 003", True),
        ("the issue is the lock", False),
        ("a design choice", False),
        ("seed the random generator with 0", False),
    ],
)
def test_foreign_reference_pattern(line: str, foreign: bool) -> None:
    assert bool(foreign_references(line)) is foreign


def test_missing_links_are_found(tmp_path: Path) -> None:
    (tmp_path / "here.md").write_text("x")
    page = tmp_path / "page.md"
    page.write_text("[a](here.md) [b](gone.md#x) [c](https://x.org) [d](#top)")
    assert missing_links(page) == ["gone.md#x"]


def test_help_texts_cite_nothing_the_repository_lacks() -> None:
    """What `--help` shows, the MCP tools' descriptions and the Python API's docstrings
    (help(memcli.Memory), help(memcli.Layers), … : everything memcli exports) name no
    outside document."""
    import inspect

    import typer

    from memcli.services.memory import Memory
    from memcli.surfaces.cli import helptext
    from memcli.surfaces.cli.app import app

    texts: list[str] = []

    def walk(command: object) -> None:
        texts.extend(getattr(command, a) or "" for a in ("help", "epilog", "short_help"))
        texts.extend(getattr(p, "help", None) or "" for p in command.params)  # type: ignore[attr-defined]
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    root = typer.main.get_command(app)
    helptext.attach(root)
    walk(root)
    texts.append((ROOT / "docs/reference/mcp.md").read_text(encoding="utf-8"))
    import memcli

    for public in (Memory, *(getattr(memcli, name) for name in memcli.__all__)):
        texts.append(inspect.getdoc(public) or "")
        for name, member in inspect.getmembers(public):
            if not name.startswith("_"):
                texts.append(inspect.getdoc(member) or "")
    assert [line for text in texts for line in foreign_references(text)] == []


@pytest.mark.parametrize(
    ("docstring", "line"),
    [
        ("Planning `compress` (DESIGN §5): the steps.", "Planning `compress`: the steps."),
        (
            "What may fade (DESIGN §5.1, §5.5): the seed 002 retention curve.",
            "What may fade: the retention curve.",
        ),
        ("Extract (DESIGN §7, mem0 style): ADD or NOOP.", "Extract (mem0 style): ADD or NOOP."),
        ("Keywords (seed 001 §3.2, offline).", "Keywords (offline)."),
        ("Credentials (issue 14 §6): keys.", "Credentials: keys."),
        ("the rule of seed 000 (last 3 turns).", "the rule (last 3 turns)."),
        ("Two sentences. The second (DESIGN §1).", "Two sentences."),
        ("Plain (a note, with commas).", "Plain (a note, with commas)."),
    ],
)
def test_the_module_map_leaves_outside_citations_out(docstring: str, line: str) -> None:
    from memcli.surfaces.docgen.modules import _scrub, first_sentence

    assert _scrub(first_sentence(docstring)) == line


def test_readme_tool_installs_end_on_path_and_say_what_to_do_offline() -> None:
    """Issue 37 item 2: each tool install in the README is followed by the step that puts
    `memcli` on PATH, the fallback without download.pytorch.org is there (both tools),
    and the size of the environment is said."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install") : readme.index("## The first ten minutes")]
    lines = [line.strip() for line in install.splitlines()]
    for tool, on_path in (
        ("pipx install", "pipx ensurepath"),
        ("uv tool install", "uv tool update-shell"),
    ):
        at = next(i for i, line in enumerate(lines) if line.startswith(tool))
        assert lines[at + 1] == on_path, (tool, lines[at : at + 2])
    assert '`pipx install . --pip-args="--find-links DIR"`' in install
    assert "`uv tool install --find-links DIR .`" in install
    assert re.search(r"about \d+(\.\d)? GB \(`du -sh \.venv`", install)
