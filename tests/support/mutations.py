"""Deliberate bugs, and whether the tests meant to catch them do (issues 19 and 25).

For each mutation of tests/support/mutation_list.py the runner copies the tree to a
temporary directory (never touching the working tree), applies the patch there, runs the
mutation's tests with PYTHONPATH pointing at the copy (the subprocesses tests start
import the copy too) and reports:

    caught     a listed test failed (pytest exit code 1)
    survived   the tests passed with the bug in
    broken     the patched tree did not run the tests (exit code >= 2: an import error...)
    n/a        a snippet is not exactly once in its file, or a test id does not exist:
               the code moved or a test was renamed; update the row

    python bench/mutations.py [--only NAME ...] [--check] [--baseline] [--jobs N] [--json]

--check only checks that every mutation still applies and every test id exists (what
tests/unit/test_mutations.py asserts in the fast tier). --baseline first runs each
mutation's tests on the unpatched copy (they must pass, or a "caught" means nothing).
Exit status 0 only when every mutation run was caught.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.mutation_list import MUTATIONS, Mutation

ROOT = Path(__file__).resolve().parents[2]
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", ".memcli", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"
)


@dataclass
class Outcome:
    name: str
    status: str  # caught / survived / broken / n/a / baseline-failed
    seconds: float = 0.0
    detail: str = ""
    failed: list[str] = field(default_factory=list)


def node_exists(root: Path, node: str) -> bool:
    """`tests/x/test_y.py` or `tests/x/test_y.py::test_name` names a file that exists
    and, with a name, a test function defined in it."""
    file, _, name = node.partition("::")
    path = root / file
    if not path.is_file() or not file.startswith("tests/"):
        return False
    if not name:
        return True
    function = name.split("[", 1)[0]
    pattern = rf"^(?:async )?def {re.escape(function)}\("
    return re.search(pattern, path.read_text(encoding="utf-8"), re.M) is not None


def problems(root: Path, mutation: Mutation) -> list[str]:
    """Why `mutation` cannot be run on the tree at `root` (empty when it can): each
    snippet must be found exactly once in its file (after the edits before it), the
    patch must change the file, and each test id must exist."""
    found: list[str] = []
    path = root / mutation.file
    if not path.is_file():
        return [f"{mutation.file}: no such file"]
    text = original = path.read_text(encoding="utf-8")
    for n, (old, new) in enumerate(mutation.edits, 1):
        count = text.count(old)
        if count != 1:
            found.append(f"{mutation.file}: snippet {n} found {count} times, not once")
            continue
        text = text.replace(old, new, 1)
    if not found and text == original:
        found.append(f"{mutation.file}: the patch changes nothing")
    if not mutation.tests:
        found.append("no test listed")
    found += [f"{node}: no such test" for node in mutation.tests if not node_exists(root, node)]
    return found


def apply_mutation(tree: Path, mutation: Mutation) -> None:
    path = tree / mutation.file
    text = path.read_text(encoding="utf-8")
    for old, new in mutation.edits:
        text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, ignore=COPY_IGNORE, symlinks=True)


def run_tests(tree: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCLI_", "PYTEST_"))}
    env.update(PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    # -n 0: a few tests, in one process (no xdist workers to start for them)
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", *tests]
    try:
        proc = subprocess.run(
            cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return 124, "timed out"
    return proc.returncode, proc.stdout + proc.stderr


def failed_tests(output: str) -> list[str]:
    return [
        line.split(" ", 1)[1].split(" - ", 1)[0]
        for line in output.splitlines()
        if line.startswith(("FAILED ", "ERROR "))
    ]


def run_one(
    mutation: Mutation, baseline: bool = False, timeout: float = 900.0, source: Path = ROOT
) -> Outcome:
    """Plant `mutation` in a copy of `source` and run its tests there."""
    started = time.monotonic()
    wrong = problems(source, mutation)
    if wrong:
        return Outcome(mutation.name, "n/a", 0.0, "; ".join(wrong))
    with tempfile.TemporaryDirectory(prefix=f"mut-{mutation.name}-") as tmp:
        tree = Path(tmp) / "tree"
        copy_tree(source, tree)
        if baseline:
            code, output = run_tests(tree, mutation.tests, timeout)
            if code != 0:
                seconds = time.monotonic() - started
                return Outcome(
                    mutation.name, "baseline-failed", seconds, output[-600:], failed_tests(output)
                )
        apply_mutation(tree, mutation)
        code, output = run_tests(tree, mutation.tests, timeout)
    status = {0: "survived", 1: "caught"}.get(code, "broken")
    detail = "" if code in (0, 1) else output[-600:]
    return Outcome(mutation.name, status, time.monotonic() - started, detail, failed_tests(output))


def table(outcomes: list[Outcome]) -> str:
    by_name = {mu.name: mu for mu in MUTATIONS}
    lines = ["| bug | file | result | first failure | s |", "|---|---|---|---|---|"]
    for o in outcomes:
        first = o.failed[0].removeprefix("tests/") if o.failed else ""
        where = by_name[o.name].file.removeprefix("memcli/")
        lines.append(f"| {o.name} | {where} | {o.status} | {first} | {o.seconds:.0f} |")
    caught = sum(o.status == "caught" for o in outcomes)
    lines += ["", f"caught {caught} of {len(outcomes)}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="mutation names")
    parser.add_argument("--check", action="store_true", help="only check the list applies")
    parser.add_argument("--baseline", action="store_true", help="check the tests pass unpatched")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per pytest run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    chosen = [mu for mu in MUTATIONS if args.only is None or mu.name in args.only]
    unknown = set(args.only or ()) - {mu.name for mu in chosen}
    if unknown:
        parser.error(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    if args.list:
        for mu in chosen:
            print(f"{mu.name:36} {mu.file:36} {' '.join(mu.tests)}")
        return 0
    if args.check:
        wrong = [(mu.name, p) for mu in chosen for p in problems(ROOT, mu)]
        for name, problem in wrong:
            print(f"{name}: {problem}")
        print(f"{len(chosen) - len({n for n, _ in wrong})} of {len(chosen)} mutations apply")
        return 1 if wrong else 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda mu: run_one(mu, args.baseline, args.timeout), chosen))
    if args.json:
        print(json.dumps([o.__dict__ for o in outcomes], indent=2))
    else:
        print(table(outcomes))
        for o in outcomes:
            if o.status != "caught":
                print(f"\n{o.name}: {o.status} {o.detail}".rstrip())
    return 0 if all(o.status == "caught" for o in outcomes) else 1
