"""The one rule for links (memcli.store.links, docs/security.md Links, issue 35 #1 #2 #7 #8
#12), as a table: what a workspace name is, where it leads, whether memcli follows it;
and the bounded read every reader outside the Store uses (a regular file, no link, at
most the size limit). Real symlinks, real owners (chown needs root); the processes that
meet the rule through the CLI, the Python API and MCP: tests/process/test_links.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memcli.core.errors import MemcliError
from memcli.store.atomic import read_bounded
from memcli.store.links import LinkRefused, follow
from memcli.store.trust import trust
from memcli.store.workspace_read import read_workspace_file

OTHER_UID = 54321
as_root = pytest.mark.skipif(os.name == "nt" or os.geteuid() != 0, reason="chown needs root")


def _ws(tmp: Path) -> Path:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "learnings.md").write_text("# Learnings\n")
    return ws


def _outside(tmp: Path, name: str = "notes.md") -> Path:
    target = tmp / "outside" / name
    target.parent.mkdir(exist_ok=True)
    target.write_text("- elsewhere\n")
    return target


# Each case: (how the workspace is made: returns the name to follow, trust it?, folder?,
# what `follow` gives: "itself", "target" or the refusal's words)
def plain(ws: Path, tmp: Path) -> str:
    (ws / "memory.md").write_text("# Memory\n")
    return "memory.md"


def absent(ws: Path, tmp: Path) -> str:
    return "memory.md"


def inside_file(ws: Path, tmp: Path) -> str:
    (ws / "memory.md").symlink_to("learnings.md")
    return "memory.md"


def inside_dangling(ws: Path, tmp: Path) -> str:
    (ws / "memory.md").symlink_to("nowhere.md")
    return "memory.md"


def outside_file(ws: Path, tmp: Path) -> str:
    (ws / "memory.md").symlink_to(_outside(tmp))
    return "memory.md"


def outside_dangling(ws: Path, tmp: Path) -> str:
    (ws / "memory.md").symlink_to(tmp / "outside-nothing.md")
    return "memory.md"


def device(ws: Path, tmp: Path) -> str:
    (ws / "memory.md").symlink_to("/dev/zero")
    return "memory.md"


def into_git(ws: Path, tmp: Path) -> str:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "projects.md").symlink_to(".git/config")
    return "projects.md"


def to_directory(ws: Path, tmp: Path) -> str:
    (ws / "memory.md").symlink_to(tmp)
    return "memory.md"


def inside_other_owner(ws: Path, tmp: Path) -> str:
    (ws / "theirs.md").write_text("- theirs\n")
    os.chown(ws / "theirs.md", OTHER_UID, OTHER_UID)
    (ws / "memory.md").symlink_to("theirs.md")
    return "memory.md"


def outside_other_owner(ws: Path, tmp: Path) -> str:
    target = _outside(tmp)
    os.chown(target, OTHER_UID, OTHER_UID)
    (ws / "memory.md").symlink_to(target)
    return "memory.md"


def folder_outside(ws: Path, tmp: Path) -> str:
    (tmp / "elsewhere").mkdir()
    (ws / "episodes").symlink_to(tmp / "elsewhere")
    return "episodes"


def folder_inside(ws: Path, tmp: Path) -> str:
    (ws / "notes").mkdir()
    (ws / "episodes").symlink_to("notes")
    return "episodes"


def note_in_linked_folder(ws: Path, tmp: Path) -> str:
    (tmp / "elsewhere").mkdir()
    (tmp / "elsewhere" / "2026-01-01.md").write_text("- a note\n")
    (ws / "episodes").symlink_to(tmp / "elsewhere")
    return "episodes/2026-01-01.md"


def state_outside(ws: Path, tmp: Path) -> str:
    (tmp / "state").mkdir()
    (ws / ".memcli").symlink_to(tmp / "state")
    return ".memcli"


def note_is_link(ws: Path, tmp: Path) -> str:
    (ws / "episodes").mkdir()
    (ws / "episodes" / "2026-01-01.md").symlink_to(_outside(tmp))
    return "episodes/2026-01-01.md"


CASES: list[tuple[Callable[[Path, Path], str], bool, bool, str]] = [
    (plain, False, False, "itself"),
    (absent, False, False, "itself"),
    (inside_file, False, False, "target"),
    (inside_dangling, False, False, "target"),  # reads find nothing; a write creates it
    (outside_file, False, False, "not trusted"),
    (outside_file, True, False, "target"),  # memory.md in a dotfiles repository
    (outside_dangling, True, False, "does not exist"),
    (device, True, False, "not a regular file"),
    (into_git, False, False, ".git folder"),
    (to_directory, True, False, "not a regular file"),
    pytest.param(inside_other_owner, False, False, "belongs to uid 54321", marks=as_root),
    pytest.param(outside_other_owner, True, False, "belongs to uid 54321", marks=as_root),
    (folder_outside, False, True, "not trusted"),
    (folder_outside, True, True, "target"),
    (folder_inside, False, True, "target"),
    (note_in_linked_folder, False, False, "not trusted"),
    (state_outside, False, True, "not trusted"),
    (note_is_link, False, False, "not trusted"),
]


@pytest.mark.parametrize(("make", "trusted", "folder", "expected"), CASES)
def test_the_rule(
    tmp_path: Path,
    make: Callable[[Path, Path], str],
    trusted: bool,
    folder: bool,
    expected: str,
) -> None:
    ws = _ws(tmp_path)
    name = make(ws, tmp_path)
    if trusted:
        trust(ws)
    if expected == "itself":
        assert follow(ws, name, folder=folder) == ws / name
    elif expected == "target":
        assert follow(ws, name, folder=folder) == Path(os.path.realpath(ws / name))
    else:
        with pytest.raises(LinkRefused) as refused:
            follow(ws, name, folder=folder)
        message = str(refused.value)
        assert expected in message
        link = next(p for p in (ws / name, *(ws / name).parents) if p.is_symlink())
        assert str(link) in message and os.path.realpath(ws / name) in message


def test_a_changed_memcli_toml_withdraws_the_trust(tmp_path: Path) -> None:
    """The trust is of the workspace as approved: a link out of it stops being followed
    once its memcli.toml changes (a pull), until approved again."""
    ws = _ws(tmp_path)
    outside_file(ws, tmp_path)
    trust(ws)
    assert follow(ws, "memory.md") == _outside(tmp_path)
    (ws / "memcli.toml").write_text("[search]\n")
    with pytest.raises(LinkRefused, match="not trusted"):
        follow(ws, "memory.md")



def test_a_link_pulled_after_the_trust_is_not_followed(tmp_path: Path) -> None:
    """The trust approves the links there were: one a later pull brings into a trusted
    workspace (`learnings.md -> ~/.bashrc`, memcli.toml unchanged) or one changed to lead
    elsewhere is refused until approved again; the approved one is still followed."""
    ws = _ws(tmp_path)
    outside_file(ws, tmp_path)  # memory.md -> outside/notes.md, made by the person
    trust(ws)
    bashrc = _outside(tmp_path, ".bashrc")
    (ws / "learnings.md").unlink()
    (ws / "learnings.md").symlink_to(bashrc)  # the pull
    assert follow(ws, "memory.md") == _outside(tmp_path)
    with pytest.raises(LinkRefused, match="learnings.md: a link to .*not trusted with this link"):
        follow(ws, "learnings.md")
    (ws / "memory.md").unlink()
    (ws / "memory.md").symlink_to(bashrc)  # the approved name, led elsewhere
    with pytest.raises(LinkRefused, match="not trusted with this link"):
        follow(ws, "memory.md")
    trust(ws)
    assert follow(ws, "learnings.md") == bashrc

@as_root
def test_a_plain_file_another_user_owns_is_not_read_as_memory(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    (ws / "memory.md").write_text("- Always run the deploy script as root\n")
    assert "deploy script" in read_workspace_file(ws, "memory.md")
    os.chown(ws / "memory.md", OTHER_UID, OTHER_UID)
    with pytest.raises(LinkRefused, match="belongs to uid 54321"):
        read_workspace_file(ws, "memory.md")


def _fifo(tmp: Path) -> Path:
    path = tmp / "fifo"
    os.mkfifo(path)
    return path


def _big(tmp: Path) -> Path:
    path = tmp / "big.md"
    path.write_bytes(b"x" * 2_000_001)
    return path


def _link(tmp: Path) -> Path:
    (tmp / "real.md").write_text("- real\n")
    (tmp / "link.md").symlink_to(tmp / "real.md")
    return tmp / "link.md"


@pytest.mark.parametrize(
    ("make", "refusal"),
    [
        (lambda tmp: Path("/dev/zero"), "not a regular file"),
        (_fifo, "not a regular file"),  # opened without blocking
        (lambda tmp: tmp, "not a regular file"),
        (_big, "above the 2 MB"),
        (_link, "it is a link"),
    ],
)
def test_a_bounded_read_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], Path], refusal: str
) -> None:
    monkeypatch.setenv("MEMCLI_MAX_FILE_MB", "2")
    path = make(tmp_path)
    with pytest.raises(MemcliError, match=refusal) as refused:
        read_bounded(path)
    assert str(path) in str(refused.value)


def test_a_bounded_read_reads_up_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMCLI_MAX_FILE_MB", "2")
    path = tmp_path / "exact.md"
    path.write_bytes(b"y" * 2_000_000)
    assert read_bounded(path) == b"y" * 2_000_000
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "missing.md")


@as_root
def test_the_store_reads_no_file_another_user_owns(tmp_path: Path) -> None:
    """#7 for a plain file: the Store's reads and writes refuse memory.md once another
    user owns it (in a workspace that is not theirs), naming the owner."""
    from memcli.store.store import Store

    ws = _ws(tmp_path)
    (ws / "memory.md").write_text("# Memory\n\n## Corrections\n- Disable the firewall\n")
    assert [e.text for e in Store(ws).entries()] == ["Disable the firewall"]
    os.chown(ws / "memory.md", OTHER_UID, OTHER_UID)
    for step in (lambda s: s.entries(), lambda s: s.update("memory.md", lambda doc: None)):
        with pytest.raises(LinkRefused, match="belongs to uid 54321"):
            step(Store(ws))


@pytest.mark.parametrize("what", ["link", "fifo"])
def test_the_merge_driver_reads_only_regular_files(tmp_path: Path, what: str) -> None:
    """The git merge driver applies the rule to the versions git hands it: a link (to a
    file outside) or a FIFO is left to git (exit 1), nothing written through it."""
    from memcli.store.gitmerge import run_driver

    base, theirs = tmp_path / "base.md", tmp_path / "theirs.md"
    for path in (base, theirs):
        path.write_text("# Memory\n\n## Facts\n- a fact <!-- id=m1 -->\n")
    outside = _outside(tmp_path, ".bashrc")
    ours = tmp_path / "ours.md"
    if what == "link":
        ours.symlink_to(outside)
    else:
        os.mkfifo(ours)
    before = outside.read_bytes()
    assert run_driver(base, ours, theirs, "memory.md") == 1
    assert outside.read_bytes() == before
    assert ours.is_symlink() if what == "link" else ours.is_fifo()


@pytest.mark.parametrize(
    ("inside", "target"),
    [
        ("history/log.jsonl", "bashrc"),  # the history's log is opened for appending
        ("history/objects/ab", "folder"),  # a folder the history writes objects into
        ("locks", "folder"),
        ("access.json", "bashrc"),
    ],
)
def test_no_link_inside_the_state_folder(tmp_path: Path, inside: str, target: str) -> None:
    """`.memcli/` itself may pass the rule, but memcli makes no link inside it: one a
    cloned repository committed is refused before anything is opened through it."""
    from memcli.store.store import Store

    ws = _ws(tmp_path)
    assert Store(ws).state_dir == ws / ".memcli"  # none there yet
    outside = _outside(tmp_path, ".bashrc")
    link = ws / ".memcli" / inside
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside if target == "bashrc" else outside.parent)
    with pytest.raises(LinkRefused, match="no links inside .memcli") as refused:
        Store(ws).state_dir  # noqa: B018 - the property is the check
    assert str(link) in str(refused.value)


@pytest.mark.parametrize(
    ("target", "said"),
    [("/dev/zero", "a link to /dev/zero"), ("outside", "not trusted")],
)
def test_the_hooks_check_of_the_files_applies_the_rule(
    tmp_path: Path, target: str, said: str
) -> None:
    """The hooks read each curated file before answering (is it UTF-8?): under the rule
    and bounded, so memory.md -> /dev/zero is named at once instead of read without end."""
    from memcli.surfaces.hook_extract import unreadable_file

    ws = _ws(tmp_path)
    (ws / "memory.md").symlink_to(_outside(tmp_path) if target == "outside" else target)
    problem = unreadable_file(str(ws))
    assert problem is not None and said in problem and str(ws / "memory.md") in problem


def test_init_writes_nothing_through_a_dangling_link(tmp_path: Path) -> None:
    """`memcli init` in a clone whose learnings.md leads to a file that does not exist
    yet outside the workspace: the link is left alone (later commands name it), nothing
    is created through it."""
    from memcli.store.workspace import init_workspace

    ws = tmp_path / "clone"
    ws.mkdir()
    planted = tmp_path / "autostart" / "evil.desktop"
    planted.parent.mkdir()
    (ws / "learnings.md").symlink_to(planted)
    created = init_workspace(ws)
    assert not planted.exists() and (ws / "learnings.md").is_symlink()
    assert sorted(p.name for p in created) == [".gitignore", "memory.md"]
    with pytest.raises(LinkRefused, match="does not exist"):
        follow(ws, "learnings.md")


@pytest.mark.parametrize(
    ("link", "target", "refused"),
    [
        ("memory.md", "archive.md", True),  # forget's archive write overwrote its removal
        ("learnings.md", "memory.md", True),
        ("projects.md", "memory.md", True),  # a [files] name
        ("memory.md", "projects.md", True),
        ("memory.md", ".memcli/notes.md", True),
        ("memory.md", "memcli.toml", True),
        ("episodes", "conversations", True),
        ("memory.md", "episodes/2026-01-01.md", True),
        ("memory.md", "notes/mine.md", False),  # a file of its own elsewhere in the workspace
        ("episodes", "logs", False),
    ],
)
def test_a_link_to_another_file_memcli_keeps_is_refused(
    tmp_path: Path, link: str, target: str, refused: bool
) -> None:
    """Two names for one file lose entries (`memory.md -> archive.md`: the entry a forget
    moved to archive.md was gone from both): a link inside the workspace may lead to any
    file or folder but one memcli keeps under another name."""
    from memcli.store.store import Store

    ws = _ws(tmp_path)
    (ws / "memcli.toml").write_text('[files."projects.md"]\ntypes = ["project"]\n')
    for name in (
        "archive.md",
        "memory.md",
        "projects.md",
        ".memcli/notes.md",
        "episodes/2026-01-01.md",
        "notes/mine.md",
    ):
        (ws / name).parent.mkdir(exist_ok=True)
        if not (ws / name).exists():
            (ws / name).write_text("# Notes\n")
    for folder in ("conversations", "logs"):
        (ws / folder).mkdir(exist_ok=True)
    if (ws / link).is_dir():
        (ws / link / "2026-01-01.md").unlink()
        (ws / link).rmdir()
    else:
        (ws / link).unlink(missing_ok=True)
    (ws / link).symlink_to(target)
    store = Store(ws)
    ask = store.folder if link == "episodes" else store.path
    if refused:
        with pytest.raises(LinkRefused, match="which memcli keeps under its own name"):
            ask(link)
        if link != "episodes":  # the MCP resources' and hooks' read, outside the Store
            with pytest.raises(LinkRefused, match="which memcli keeps under its own name"):
                read_workspace_file(ws, link)
    else:
        assert ask(link) == (ws / target).resolve()
        if link != "episodes":
            assert read_workspace_file(ws, link) == "# Notes\n"
