"""Issue 25's lower findings as attacks on real processes, real git and real files: each
function runs one attack (or one variant of it) in a scratch directory and returns what
went wrong (an empty list: no harm). tests/process/test_round3_harden.py asserts on
them; `scenarios()` counts them for bench/reliability.py.

    from tests.support.round3_harden import scenarios
    for name, run in scenarios():
        attempts, harmless = run(scratch_dir)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(ROOT))
ENV = {k: v for k, v in ENV.items() if not k.startswith("MEMCLI_")}
GIT_ENV = dict(
    ENV,
    GIT_AUTHOR_NAME="t",
    GIT_AUTHOR_EMAIL="t@example.com",
    GIT_COMMITTER_NAME="t",
    GIT_COMMITTER_EMAIL="t@example.com",
    GIT_CONFIG_NOSYSTEM="1",
)

MEMORY = "# Memory\n\n## Facts\n- Works at TechCorp <!-- id=mwork -->\n"


def memcli(*args: str, env: dict[str, str] | None = None, **kw: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=120,
        **kw,  # type: ignore[arg-type]
    )


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=GIT_ENV, timeout=120
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stdout}{done.stderr}")
    return done


def _repository(root: Path, memory: str = MEMORY) -> None:
    """A git repository whose top is a memcli workspace set up with `memcli git setup`."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "memory.md").write_text(memory, encoding="utf-8")
    (root / "learnings.md").write_text("# Learnings\n", encoding="utf-8")
    done = memcli("-w", str(root), "git", "setup")
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")


# ---------------------------------------------------------------------- finding 7

#: workspace folder names that ran a command through the post-merge hook's shell
HOSTILE_NAMES = [
    "ws $(touch pwned)",
    "ws `touch pwned`",
    'ws"; touch pwned; echo "',
    "ws'$(touch pwned)'",
    "ws $(touch pwned) 100%h",
]


def hook_injection(scratch: Path, name: str = HOSTILE_NAMES[0]) -> list[str]:
    """A workspace whose path holds shell syntax; `git merge` runs the post-merge hook:
    nothing but `memcli index` of that very workspace may run."""
    root = scratch / name
    _repository(root)
    git(root, "checkout", "-qb", "side")
    (root / "notes.txt").write_text("from the side branch\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "side")
    git(root, "checkout", "-q", "main")
    (root / "other.txt").write_text("from main\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "merge", "-q", "--no-edit", "side")  # runs .git/hooks/post-merge
    problems = []
    planted = [str(p) for p in scratch.rglob("pwned")]
    if planted:
        problems.append(f"the hook ran a command from the path: {planted}")
    if not (root / ".memcli" / "index").is_dir():
        problems.append("the hook did not index the workspace it names")
    return problems


def driver_injection(scratch: Path) -> list[str]:
    """memcli installed under a path holding `%A` and `$(…)` (git expands the first in
    the driver command, the shell the second): a both-sides merge of memory.md must run
    the driver and nothing else."""
    from unittest import mock

    from memcli.store.gitmerge import setup

    bin_dir = scratch / "py 100%A $(touch pwned)"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    root = scratch / "repo"
    _repository(root)
    with mock.patch.object(sys, "executable", str(python)):
        setup(root)
    git(root, "checkout", "-qb", "side")
    (root / "memory.md").write_text(MEMORY + "- Side: standups at 9:30 <!-- id=mside -->\n")
    git(root, "commit", "-qam", "side")
    git(root, "checkout", "-q", "main")
    (root / "memory.md").write_text(MEMORY + "- Main: deploys on Fridays <!-- id=mmain -->\n")
    git(root, "commit", "-qam", "main")
    merge = git(root, "merge", "--no-edit", "side", check=False)
    problems = []
    if list(scratch.rglob("pwned")):
        problems.append("the driver command ran a command from the path")
    text = (root / "memory.md").read_text(encoding="utf-8")
    if merge.returncode != 0 or "id=mside" not in text or "id=mmain" not in text:
        problems.append(f"the driver did not merge both sides ({merge.stderr.strip()}):\n{text}")
    return problems


# ---------------------------------------------------------------------- finding 8

DOC_BASE = "# Notes for the docs\n\nThe build runs on Jenkins.\n"


def unanchored_attributes(scratch: Path, migrate: bool = False) -> list[str]:
    """A `docs/memory.md` (not memcli's) changed on one line differently on two branches:
    git must report the conflict; the memcli driver is for the workspace's own files
    only. With `migrate`, the repository starts with the unanchored lines earlier
    versions wrote and `memcli git setup` runs again."""
    root = scratch / "repo"
    _repository(root)
    if migrate:
        old = "*.txt text\nmemory.md merge=memcli\nlearnings.md merge=memcli\n"
        (root / ".gitattributes").write_text(old, encoding="utf-8")
        done = memcli("-w", str(root), "git", "setup")
        if done.returncode != 0:
            return [f"git setup failed: {done.stderr}"]
    docs = root / "docs"
    docs.mkdir()
    (docs / "memory.md").write_text(DOC_BASE, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "docs")
    git(root, "checkout", "-qb", "side")
    (docs / "memory.md").write_text(DOC_BASE.replace("Jenkins", "GitHub Actions"), "utf-8")
    git(root, "commit", "-qam", "side")
    git(root, "checkout", "-q", "main")
    (docs / "memory.md").write_text(DOC_BASE.replace("Jenkins", "Buildkite"), "utf-8")
    git(root, "commit", "-qam", "main")
    merge = git(root, "merge", "--no-edit", "side", check=False)
    problems = []
    text = (docs / "memory.md").read_text(encoding="utf-8")
    if merge.returncode == 0 or "<<<<<<<" not in text:
        problems.append(f"docs/memory.md merged without a conflict:\n{text}")
    attributes = (root / ".gitattributes").read_text(encoding="utf-8")
    if "\nmemory.md merge=memcli" in "\n" + attributes:
        problems.append(f".gitattributes still unanchored:\n{attributes}")
    if migrate and "*.txt text" not in attributes:
        problems.append("a line of the user's own left .gitattributes")
    checked = git(root, "check-attr", "merge", "memory.md", "docs/memory.md").stdout
    if "memory.md: merge: memcli" not in checked.splitlines()[0]:
        problems.append(f"the workspace's memory.md lost the driver: {checked}")
    return problems


# ---------------------------------------------------------------------- finding 9


def _big_memory(entries: int) -> str:
    lines = [f"- Fact number {n} about the build farm <!-- id=mf{n:05d} -->" for n in range(entries)]
    return "# Memory\n\n## Facts\n" + "\n".join(lines) + "\n"


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def driver_write_cut(scratch: Path, fraction: float) -> list[str]:
    """The merge driver cut off while writing %A (a file size limit makes the write fail
    at `fraction` of the result, as a kill or a full disk would): %A must hold ours,
    whole, or the whole merge; never a part."""
    scratch.mkdir(parents=True, exist_ok=True)
    base_text = _big_memory(3000)
    versions = {
        "base": base_text,
        "ours": base_text + "- Ours: deploys on Fridays <!-- id=mours -->\n",
        "theirs": base_text + "- Theirs: standups at 9:30 <!-- id=mtheirs -->\n",
    }
    paths = {}
    for name, text in versions.items():
        paths[name] = scratch / f".merge_file_{name}"
        paths[name].write_text(text, encoding="utf-8")
    paths["ours"].chmod(0o600)
    whole = len(versions["ours"]) + len(versions["theirs"]) - len(base_text)
    limit = int(whole * fraction)
    done = subprocess.run(
        [sys.executable, "-m", "memcli", "merge-driver",
         *(str(paths[n]) for n in ("base", "ours", "theirs")), "memory.md"],
        env=ENV, capture_output=True, text=True, timeout=120,
        preexec_fn=_file_size_limit(limit) if fraction < 1 else None,  # noqa: PLW1509
    )
    result = paths["ours"].read_text(encoding="utf-8")
    problems = []
    if result == versions["ours"]:
        if done.returncode == 0:
            problems.append("the driver said merged but left ours unchanged")
    elif not ("id=mours" in result and "id=mtheirs" in result and result.endswith("\n")):
        problems.append(f"%A holds {len(result)} of {whole} bytes: a part of the merge")
    elif done.returncode != 0:
        problems.append(f"merged but exit {done.returncode}: {done.stderr}")
    if paths["ours"].stat().st_mode & 0o777 != 0o600:
        problems.append(f"%A's mode changed to {paths['ours'].stat().st_mode & 0o777:o}")
    left = sorted(p.name for p in scratch.iterdir() if p not in paths.values())
    if left:
        problems.append(f"temp files left behind: {left}")
    return problems


# ---------------------------------------------------------------------- finding 17 (ids)

CONFLICT_BASE = "# Memory\n\n## Facts\n- Works at TechCorp <!-- id=mwork -->\n"
THEIR_TEXT = "Works at DataCorp"


def _planted(where: str, depth: int) -> dict[str, str]:
    """Base, ours and theirs of a both-sides text change of mwork, with entries planted
    under the ids the conflict copy would get (`mwork-<6 hex>`, then 7, … `depth` of
    them) in the version `where` names."""
    import hashlib

    digest = hashlib.sha256(THEIR_TEXT.encode("utf-8")).hexdigest()
    planted = "".join(
        f"- Planted {n} <!-- id=mwork-{digest[: 6 + n]} -->\n" for n in range(depth)
    )
    versions = {
        "base": CONFLICT_BASE,
        "ours": CONFLICT_BASE.replace("TechCorp", "TechCorp as a staff engineer"),
        "theirs": CONFLICT_BASE.replace("Works at TechCorp", THEIR_TEXT),
    }
    names = ["base", "ours", "theirs"] if where == "all" else [where]
    for name in names:
        versions[name] += planted
    return versions


#: where the entries are planted, how many ids deep
PLANTS = [("ours", 1), ("theirs", 2), ("all", 1), ("all", 3)]


def planted_conflict_id(scratch: Path, where: str = "ours", depth: int = 1) -> list[str]:
    """Real git: both sides change mwork's text (the driver keeps theirs under a new id)
    while a planted entry already holds that id: the result has no id twice and both
    texts."""
    from collections import Counter

    from memcli.store.markdown import parse

    versions = _planted(where, depth)
    root = scratch / "repo"
    _repository(root, versions["base"])
    for branch, name in (("side", "theirs"), ("main", "ours")):
        git(root, "checkout", "-q", *(["-b"] if branch == "side" else []), branch)
        (root / "memory.md").write_text(versions[name], encoding="utf-8")
        git(root, "commit", "-qam", name)
    merge = git(root, "merge", "--no-edit", "side", check=False)
    text = (root / "memory.md").read_text(encoding="utf-8")
    entries = parse(text, "memory.md").entries()
    twice = [i for i, n in Counter(e.id for e in entries).items() if n > 1]
    problems = []
    if merge.returncode != 0:
        problems.append(f"the merge failed: {merge.stdout}{merge.stderr}")
    if twice:
        problems.append(f"ids used twice: {twice}")
    texts = {e.text for e in entries}
    if not {"Works at TechCorp as a staff engineer", THEIR_TEXT} <= texts:
        problems.append(f"a side's text was lost: {sorted(texts)}")
    return problems


# ---------------------------------------------------------------------- the scenarios


def _count(attack: Callable[[Path], list[str]], variants: int) -> Callable[[Path], tuple[int, int]]:
    def run(scratch: Path) -> tuple[int, int]:
        harmless = 0
        for number in range(variants):
            place = scratch / f"attempt-{number}"
            place.mkdir(parents=True)
            harmless += not attack(place, number)  # type: ignore[call-arg]
        return variants, harmless

    return run


def scenarios() -> list[tuple[str, Callable[[Path], tuple[int, int]]]]:
    """One scenario per finding fixed: (name, run(scratch) -> (attempts, harmless))."""
    return [
        (
            "post-merge hook: shell syntax in the workspace path (#7)",
            _count(lambda p, n: hook_injection(p, HOSTILE_NAMES[n]), len(HOSTILE_NAMES)),
        ),
        (
            "merge driver: `%A` and `$(…)` in memcli's own path (#7)",
            _count(lambda p, n: driver_injection(p), 1),
        ),
        (
            "merge driver: the write of %A cut off part way (#9)",
            _count(lambda p, n: driver_write_cut(p, (0.0, 0.3, 0.7, 0.999, 1.0)[n]), 5),
        ),
        (
            "merge driver: a planted <id>-<sha6> entry (#17)",
            _count(lambda p, n: planted_conflict_id(p, *PLANTS[n]), len(PLANTS)),
        ),
        (
            ".gitattributes: a docs/memory.md conflict reported by git (#8)",
            _count(lambda p, n: unanchored_attributes(p, migrate=bool(n % 2)), 2),
        ),
    ]
