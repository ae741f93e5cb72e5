"""Deliberate bugs, and whether the tests meant to catch them do (issue 19, item 8).

Each mutation names a file, an exact snippet of it and what to put instead, and the
tests that should fail once the bug is in. For each one the runner copies the tree to
a temporary directory, applies the patch there, runs those tests with PYTHONPATH
pointing at the copy (subprocesses the tests start import the copy too) and reports:

    caught   the tests failed (pytest exit code 1: a test failed, not a collection error)
    missed   the tests passed with the bug in
    broken   the patched tree did not even run the tests (exit code ≥ 2: an import error…)
    n/a      the snippet is not in the tree any more (code moved or changed): update it

A snippet is looked up in the named file first, then in every other module of memcli/
(other branches move code between modules); it must occur exactly once.

    python bench/mutations.py [--only NAME ...] [--baseline] [--jobs N] [--json] [--list]

--baseline first runs each mutation's tests on the unpatched copy (they must pass, or a
"caught" means nothing). Run from the repository root with the project's interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", ".memcli", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"
)


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str  # where the snippet is today (other modules are searched when it moved)
    edits: tuple[tuple[str, str], ...]  # (exact old snippet, new snippet), in order
    tests: tuple[str, ...]  # pytest node ids that must fail with the bug in
    why: str = ""


def m(name: str, file: str, old: str, new: str, *tests: str, why: str = "") -> Mutation:
    return Mutation(name, file, ((old, new),), tests, why)


P = "tests/test_proofs_"
MUTATIONS: list[Mutation] = [
    # -- the seven bugs of issue 19, item 8
    m(
        "watch-observer-off",
        "memcli/surfaces/daemon/watch.py",
        '                if event.event_type in ("opened", "closed_no_write"):\n'
        "                    return\n",
        "                return\n",
        f"{P}watch.py",
        "tests/test_watch.py::test_observer_follows_create_edit_delete",
        why="the watcher ignores every file event; a search would still re-index by itself",
    ),
    m(
        "faiss-path-ignores-filters",
        "memcli/services/memory.py",
        "sem_top = np.array([p for p in found if allowed[p]][:pool], dtype=np.int64)",
        "sem_top = np.array(list(found)[:pool], dtype=np.int64)",
        f"{P}search.py::test_filters_hold_on_the_faiss_path",
        why="above ann_threshold the HNSW candidates are not filtered by type/keyword/time",
    ),
    Mutation(
        "forget-removes-before-archiving",
        "memcli/services/memory.py",
        (
            (
                "        self.store.update(\n"
                "            ARCHIVE_FILE, add_to_archive([archived_copy(found, reason, "
                "replaced_by, now)])\n"
                "        )\n\n"
                "        def remove(doc: Document) -> Entry:\n"
                "            if doc.find(found.id) is None:\n"
                "                return found\n"
                "            return doc.remove_entry(found.id)\n\n"
                "        self.store.update(found.file, remove)\n",
                "        def remove(doc: Document) -> Entry:\n"
                "            if doc.find(found.id) is None:\n"
                "                return found\n"
                "            return doc.remove_entry(found.id)\n\n"
                "        self.store.update(found.file, remove)\n"
                "        self.store.update(\n"
                "            ARCHIVE_FILE, add_to_archive([archived_copy(found, reason, "
                "replaced_by, now)])\n"
                "        )\n",
            ),
        ),
        (f"{P}archive.py::test_forget_crash_between_writes_keeps_the_entry",),
        why="a crash between the two writes leaves the entry in neither file",
    ),
    Mutation(
        "compress-removes-before-archiving",
        "memcli/store/changes.py",
        (
            (
                "    if copies:\n        store.update(ARCHIVE_FILE, add_to_archive(copies))\n"
                "    files = _by_file(plan)\n",
                "    files = _by_file(plan)\n",
            ),
            (
                "    not_removed = {r.entry.id for r in plan.removals} - set(archived)\n",
                "    if copies:\n        store.update(ARCHIVE_FILE, add_to_archive(copies))\n"
                "    not_removed = {r.entry.id for r in plan.removals} - set(archived)\n",
            ),
        ),
        (f"{P}archive.py::test_applied_plan_crash_between_writes_keeps_every_entry",),
        why="compress/merge plans: entries leave their file before the archive has them",
    ),
    m(
        "mcp-limit-21-accepted",
        "memcli/surfaces/mcp_server.py",
        "Field(ge=1, le=20, description=",
        "Field(ge=1, le=21, description=",
        "tests/test_mcp.py::test_schemas_version_resources_and_prompt",
    ),
    m(
        "mcp-limit-0-accepted",
        "memcli/surfaces/mcp_server.py",
        "Field(ge=1, le=20, description=",
        "Field(ge=0, le=20, description=",
        "tests/test_mcp.py::test_schemas_version_resources_and_prompt",
    ),
    m(
        "mcp-limit-ignored",
        "memcli/surfaces/mcp_server.py",
        "            limit=limit,\n",
        "            limit=10,\n",
        "tests/test_mcp.py::test_schemas_version_resources_and_prompt",
    ),
    m(
        "llm-no-authorization",
        "memcli/adapters/llm.py",
        'headers["Authorization"] = f"Bearer {self.api_key}"',
        'headers["X-Api-Key"] = self.api_key',
        f"{P}llm.py",
    ),
    m(
        "llm-no-retries",
        "memcli/adapters/llm.py",
        "for attempt in range(self.retries + 1):",
        "for attempt in range(1):",
        f"{P}llm.py",
    ),
    m(
        "llm-retries-4xx",
        "memcli/adapters/llm.py",
        "                if exc.code < 500 and exc.code != 429:\n                    break\n",
        "",
        f"{P}llm.py",
        why="a 400 (bad request, bad key) is retried, delaying the error for nothing",
    ),
    m(
        "llm-no-fence-stripping",
        "memcli/adapters/llm.py",
        'if text.startswith("```"):',
        "if False:",
        f"{P}llm.py",
    ),
    m(
        "neighbour-boost-ignored",
        "memcli/logic/search.py",
        "if neighbours and settings.neighbour_weight > 0:",
        "if False:",
        f"{P}search.py::test_neighbour_boost_lifts_the_continuation",
    ),
    m(
        "neighbours-never-passed",
        "memcli/services/memory.py",
        "neighbours = view.arrays.near if cfg.neighbour_weight > 0 else None",
        "neighbours = None",
        f"{P}search.py::test_neighbour_boost_lifts_the_continuation",
    ),
    m(
        "guard-no-reread-before-swap",
        "memcli/store/files.py",
        "                if _read_raw(path) != on_disk:  # someone wrote meanwhile: start again\n"
        "                    _discard(tmp)\n"
        "                    continue\n",
        "",
        f"{P}guard.py",
        why="hidden by renameat2 and by putting the other writer's file back afterwards",
    ),
    # -- more, in places that matter
    m(
        "inject-over-budget",
        "memcli/logic/inject.py",
        "    while tokens > budget and chosen:\n",
        "    while tokens > budget + 40 and chosen:\n",
        "tests/test_inject.py",
        why="the exact count no longer trims a block that estimates let grow past the budget",
    ),
    m(
        "inject-leaks-secrets",
        "memcli/logic/inject.py",
        "kept = [c for c in chunk if not withheld(c.entry.text, c.entry.meta)]",
        "kept = list(chunk)",
        "tests/test_inject.py",
        "tests/test_credentials.py",
    ),
    m(
        "stale-save-not-recorded",
        "memcli/store/history.py",
        "lost = [] if previous is None else self._removed_memcli_entries(file, previous, data)",
        "lost = []",
        "tests/test_history.py",
        why="a stale editor buffer saved over memcli's entries goes unnoticed (no restore)",
    ),
    m(
        "untrusted-toml-llm-settings-apply",
        "memcli/store/config.py",
        "    if risky and not trust.is_trusted(workspace, env, digest):\n",
        "    if False:\n",
        "tests/test_trust.py",
        why="a cloned repository's memcli.toml could send memories to its own endpoint",
    ),
]


@dataclass
class Outcome:
    name: str
    status: str  # caught / missed / broken / n/a / baseline-failed
    seconds: float = 0.0
    where: str = ""
    detail: str = ""
    failed: list[str] = field(default_factory=list)


def copy_tree(target: Path) -> None:
    shutil.copytree(ROOT, target, ignore=COPY_IGNORE, symlinks=True)


def locate(tree: Path, hint: str, old: str) -> Path | None:
    """The one module that holds `old` exactly once: `hint` first, then any memcli module."""
    first = tree / hint
    if first.is_file() and first.read_text(encoding="utf-8").count(old) == 1:
        return first
    found = [
        p
        for p in sorted((tree / "memcli").rglob("*.py"))
        if p != first and p.read_text(encoding="utf-8").count(old) == 1
    ]
    return found[0] if len(found) == 1 else None


def apply_mutation(tree: Path, mutation: Mutation) -> str | None:
    """Patch the copy; the file patched (relative), or None when a snippet is missing."""
    where = ""
    for old, new in mutation.edits:
        path = locate(tree, mutation.file, old)
        if path is None:
            return None
        path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
        where = str(path.relative_to(tree))
    return where


def locate_test(tree: Path, test: str) -> str:
    """A node id as named (tests/test_x.py::name), found wherever the file lives now
    (tests/unit, tests/integration, tests/process)."""
    file, sep, rest = test.partition("::")
    if (tree / file).exists():
        return test
    found = sorted(tree.glob(f"tests/*/{Path(file).name}"))
    return f"{found[0].relative_to(tree)}{sep}{rest}" if found else test


def run_tests(tree: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env.update(PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    located = [locate_test(tree, test) for test in tests]
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *located]
    try:
        proc = subprocess.run(
            cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return 124, "timed out"
    return proc.returncode, proc.stdout + proc.stderr


def failed_tests(output: str) -> list[str]:
    return [
        line.split(" ", 2)[1]
        for line in output.splitlines()
        if line.startswith(("FAILED ", "ERROR ")) and " " in line
    ]


def run_one(mutation: Mutation, baseline: bool, timeout: float) -> Outcome:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mut-{mutation.name}-") as tmp:
        tree = Path(tmp) / "tree"
        copy_tree(tree)
        if baseline:
            code, output = run_tests(tree, mutation.tests, timeout)
            if code != 0:
                return Outcome(
                    mutation.name,
                    "baseline-failed",
                    time.monotonic() - started,
                    detail=output[-600:],
                    failed=failed_tests(output),
                )
        where = apply_mutation(tree, mutation)
        if where is None:
            return Outcome(mutation.name, "n/a", time.monotonic() - started, mutation.file)
        code, output = run_tests(tree, mutation.tests, timeout)
    status = {0: "missed", 1: "caught"}.get(code, "broken")
    return Outcome(
        mutation.name,
        status,
        time.monotonic() - started,
        where,
        detail="" if code in (0, 1) else output[-600:],
        failed=failed_tests(output),
    )


def table(outcomes: list[Outcome]) -> str:
    by_name = {mu.name: mu for mu in MUTATIONS}
    lines = [
        "| bug | file | tests run | result | first failure | s |",
        "|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        tests = ", ".join(t.removeprefix("tests/") for t in by_name[o.name].tests)
        first = o.failed[0].removeprefix("tests/") if o.failed else ""
        lines.append(f"| {o.name} | {o.where} | {tests} | {o.status} | {first} | {o.seconds:.0f} |")
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    lines.append("")
    lines.append(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="mutation names")
    parser.add_argument("--baseline", action="store_true", help="check the tests pass unpatched")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per pytest run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    chosen = [mu for mu in MUTATIONS if args.only is None or mu.name in args.only]
    if args.only and len(chosen) != len(set(args.only)):
        unknown = set(args.only) - {mu.name for mu in chosen}
        parser.error(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    if args.list:
        for mu in MUTATIONS:
            print(f"{mu.name:36} {mu.file:36} {' '.join(mu.tests)}")
        return 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda mu: run_one(mu, args.baseline, args.timeout), chosen))
    if args.json:
        print(json.dumps([o.__dict__ for o in outcomes], indent=2))
    else:
        print(table(outcomes))
        for o in outcomes:
            if o.status not in ("caught",):
                print(f"\n{o.name}: {o.status} {o.detail}".rstrip())
    return 0 if all(o.status == "caught" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
