"""How long the code path of one command is: the memcli modules a `memcli search` and a
`memcli add` pass through, and the calls between them.

    python bench/callpath.py [--json]

Runs the real entry point (memcli.surfaces.cli.fastpath.main, as the console script
does; no watcher, so the in-process path) in this process on a copy of the sample
workspace. Each command runs once to warm up (imports, model, index), then once more
under sys.setprofile with the process's caches of workspaces dropped, as a new command
in a warm interpreter. Counted: memcli modules whose code ran, calls from one memcli
module into another, and how often the command line was read (memcli's argv reader and
Typer's parser), the workspace resolved (store.workspace.find_root, but for a root
already resolved and passed down as `Resolved`) and memory.md parsed
(store.markdown.parse_file).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMMANDS = {
    "search": ["search", "testing preferences", "--no-pager"],
    "add": ["add", "The staging host is called zebra-7", "--type", "fact"],
}
#: (module, function) pairs counted by name: what reads argv, resolves, parses
WATCHED = {
    "argv reads": {
        ("memcli.surfaces.cli.argv", "split_global"),  # (before the Env read it once)
        ("memcli.surfaces.cli.env", "read_globals"),
        ("typer.core", "_main"),  # Typer's (Click's) parse of the whole command line
    },
    "workspace resolutions": {("memcli.store.workspace", "find_root")},
    "memory.md parses": {("memcli.store.markdown", "parse_file")},
}


def _module(frame: Any) -> str:
    return frame.f_globals.get("__name__", "") or ""


def profile(argv: list[str]) -> dict[str, Any]:
    """Run `memcli ARGV` once under the profiler; what it counted."""
    modules: set[str] = set()
    calls: Counter[tuple[str, str]] = Counter()
    watched: Counter[str] = Counter()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = _module(frame)
        name = frame.f_code.co_name
        for label, pairs in WATCHED.items():
            if (callee, name) in pairs:
                if label == "memory.md parses" and frame.f_locals.get("filename") != "memory.md":
                    continue
                if type(frame.f_locals.get("flag")).__name__ == "Resolved":
                    continue  # the command's resolution passed down, taken as is
                watched[label] += 1
        if not callee.startswith("memcli"):
            return
        modules.add(callee)
        caller = _module(frame.f_back) if frame.f_back is not None else ""
        if caller.startswith("memcli") and caller != callee:
            calls[(caller, callee)] += 1

    code = run(argv, hook)
    return {
        "exit": code,
        "modules": len(modules),
        "cross_module_calls": sum(calls.values()),
        **{label: watched[label] for label in WATCHED},
    }


def run(argv: list[str], hook: Any = None) -> int:
    """`memcli ARGV` through the console script's entry point; its exit code."""
    from memcli.services import memory
    from memcli.surfaces.cli import fastpath

    memory._SHARED.clear()  # a new command: no Memory kept from the last one
    saved_argv, saved_exit = sys.argv, os._exit

    def leave(code: int) -> None:
        raise SystemExit(code)

    sys.argv = ["memcli", *argv]
    os._exit = leave  # type: ignore[assignment]
    try:
        if hook is not None:
            sys.setprofile(hook)
        try:
            fastpath.main()
        except SystemExit as exc:
            return int(exc.code or 0)
        return 0
    finally:
        sys.setprofile(None)
        sys.argv, os._exit = saved_argv, saved_exit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="callpath-"))
    ws = base / "ws"
    shutil.copytree(ROOT / "workspace", ws, ignore=shutil.ignore_patterns(".memcli"))
    for key in list(os.environ):
        if key.startswith("MEMCLI_"):
            del os.environ[key]
    os.environ.update(
        HF_HUB_OFFLINE="1",
        XDG_DATA_HOME=str(base / "data"),
        XDG_CONFIG_HOME=str(base / "config"),
    )
    results: dict[str, Any] = {}
    real_stdout = sys.stdout
    try:
        for name, args in COMMANDS.items():
            full = ["-w", str(ws), *args]
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the command's output
            try:
                run(full)
                if name == "add":  # the warm-up added it: add another text
                    full[-3] = full[-3] + " (again)"
                results[name] = profile(full)
            finally:
                sys.stdout.close()
                sys.stdout = real_stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if options.json:
        print(json.dumps(results, indent=2))
        return
    for name, counts in results.items():
        shown = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
        print(f"{name}: {shown}")


if __name__ == "__main__":
    main()
