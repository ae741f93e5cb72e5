"""Where a cold read's CPU time goes: one `memcli search`, `inject` or prompt hook with no
watcher, run in a fresh process with a timer around each phase (issue 36 item 1).

    python bench/coldpath.py WORKSPACE [--runs 7] [--command search|inject|hook] [--json]

Each run is a process of its own (`bench/coldpath.py --child`) that imports the
libraries, then memcli's modules, then runs the command through the real entry point
(memcli.surfaces.cli.fastpath.run, as `python -m memcli` does) with a CPU timer
(time.process_time: user + sys of the process) around the functions of each phase.
A phase's time is exclusive: time spent inside a nested phase counts for that one. The
table shows each phase's median over the runs; "interpreter" is a bare `python -c pass`
and "the rest" is what no phase covers (argument parsing, the access counts, output).
CPU time rather than wall time: on a shared machine it moves far less with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUERY = "how do we deploy the billing service on friday"

#: (what is timed, its phase): "module:Qualified.name" of a function, a method or a
#: property; a phase named twice adds both
PHASES = [
    ("memcli.surfaces.cli.env:Env.memory", "open the workspace, settings"),
    ("memcli.services.indexing:IndexManager.ensure", "index: open, check current"),
    ("memcli.index.local:LocalBackend._load", "index: load its files"),
    ("memcli.services.indexstate:IndexState.snapshot_entries", "entries: snapshot"),
    ("memcli.services.runtime:_fast_query", "query engine: tokenizer + weights/session"),
    ("memcli.index.bert_numpy:NumpyEmbedder._run", "query embedding"),
    ("memcli.index.onnx_embedder:OnnxEmbedder._run", "query embedding"),
    ("memcli.index.local:LocalBackend.dense_search", "vector search"),
    ("memcli.index.local:LocalBackend.dense_scores", "vector search"),
    ("memcli.index.local:LocalBackend.keyword_search", "keyword search"),
    ("memcli.index.local:LocalBackend.keyword_scores", "keyword search"),
    ("memcli.logic.search:EntryArrays.__init__", "ranking"),
    ("memcli.logic.search:rank", "ranking"),
    ("memcli.services.inject:counter_for", "inject: token counter"),
    ("memcli.logic.inject:pack", "inject: packing"),
    ("memcli.surfaces.cli.served:show", "rendering"),
]
#: modules imported up front, each group a phase of its own
IMPORTS = [
    ("imports: the command line", ["memcli.surfaces.cli.fastpath", "memcli.surfaces.cli.quick"]),
    ("imports: numpy", ["numpy"]),
    (
        "imports: memcli's read path",
        [
            "memcli.surfaces.cli.served",
            "memcli.services.memory",
            "memcli.services.search",
            "memcli.logic.search",
            "memcli.index.local",
            "memcli.index.onnx_embedder",
            "memcli.index.query_engine",
            "memcli.index.bert_numpy",
        ],
    ),
]
INJECT_IMPORTS = ["memcli.services.inject", "memcli.logic.inject", "memcli.adapters.tokens"]
HOOK_IMPORTS = ["memcli.surfaces.hooks"]


def command_args(ws: Path, command: str) -> tuple[list[str], str | None]:
    """(memcli arguments, stdin) of one cold `command`."""
    if command == "search":
        return ["-w", str(ws), "search", QUERY, "--no-touch"], None
    if command == "inject":
        return ["-w", str(ws), "inject", "-q", QUERY, "--max-tokens", "2000", "--no-touch"], None
    payload = {"session_id": "cold", "cwd": str(ws), "hook_event_name": "UserPromptSubmit"}
    return ["-w", str(ws), "hook", "user-prompt-submit"], json.dumps({**payload, "prompt": QUERY})


class Clock:
    """Exclusive CPU time per phase (a stack of the phases entered)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.stack: list[str] = []
        self.mark = time.process_time()

    def enter(self, phase: str) -> None:
        self._charge()
        self.stack.append(phase)

    def leave(self) -> None:
        self._charge()
        self.stack.pop()

    def _charge(self) -> None:
        now = time.process_time()
        if self.stack:
            top = self.stack[-1]
            self.spent[top] = self.spent.get(top, 0.0) + now - self.mark
        self.mark = now


def _wrap(clock: Clock, target: str, phase: str) -> None:
    import importlib

    module, _, qualified = target.partition(":")
    owner: object = importlib.import_module(module)
    *path, name = qualified.split(".")
    for part in path:
        owner = getattr(owner, part)
    raw = vars(owner)[name]
    function = raw.fget if isinstance(raw, property) else raw

    def timed(*args: object, **kwargs: object) -> object:
        clock.enter(phase)
        try:
            return function(*args, **kwargs)
        finally:
            clock.leave()

    setattr(owner, name, property(timed) if isinstance(raw, property) else timed)


def child(ws: Path, command: str) -> dict[str, float]:
    """The phases of one run in this process (CPU ms)."""
    import contextlib
    import importlib
    import io

    from memcli.surfaces.blas import one_thread_for

    one_thread_for(command)  # as the entry point does, before numpy loads
    started = time.process_time()
    clock = Clock()
    groups = list(IMPORTS)
    if command != "search":
        groups[-1] = (groups[-1][0], groups[-1][1] + INJECT_IMPORTS)
    if command == "hook":
        groups[-1] = (groups[-1][0], groups[-1][1] + HOOK_IMPORTS)
    for phase, modules in groups:
        clock.enter(phase)
        for module in modules:
            importlib.import_module(module)
        clock.leave()
    for target, phase in PHASES:
        _wrap(clock, target, phase)
    from memcli.surfaces.cli.fastpath import run

    args, stdin = command_args(ws, command)
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    if command != "hook":
        import gc

        gc.disable()  # as the entry point does for a read answered without Typer
    clock.enter("the rest")
    with contextlib.redirect_stdout(io.StringIO()):
        code = run(args)
    clock.leave()
    if code != 0:
        raise SystemExit(f"memcli {' '.join(args)} exited {code}")
    spent = {phase: round(1000 * s, 2) for phase, s in clock.spent.items()}
    spent["total in process"] = round(1000 * (time.process_time() - started), 2)
    return spent


def _cpu_of(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), out


def measure(ws: Path, command: str, runs: int) -> dict[str, float]:
    """Median CPU ms of each phase over `runs` fresh processes, and of the whole process
    and a bare interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env |= {"MEMCLI_NO_DAEMON": "1", "MEMCLI_WATCH_AUTOSTART": "0", "MEMCLI_LAYERS_READ": ""}
    env |= {"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    import compileall

    compileall.compile_dir(str(ROOT / "memcli"), quiet=1)  # as an installed package is
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        bare, _ = _cpu_of([sys.executable, "-c", "pass"], env)
        whole, out = _cpu_of([sys.executable, __file__, "--child", command, str(ws)], env)
        row = json.loads(out.strip().splitlines()[-1])
        row["interpreter"] = bare
        row["whole process"] = whole
        for phase, value in row.items():
            samples.setdefault(phase, []).append(value)
    return {phase: round(statistics.median(v), 1) for phase, v in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--command", choices=("search", "inject", "hook"), default="search")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        spent = child(args.workspace, args.child)
        spent["tokenizers imported"] = float("tokenizers" in sys.modules)
        spent["onnxruntime imported"] = float("onnxruntime" in sys.modules)
        print(json.dumps(spent), flush=True)
        os._exit(0)  # as memcli's entry point ends a read: no interpreter teardown
    load = os.getloadavg()[0]
    result = measure(args.workspace.resolve(), args.command, args.runs)
    if args.json:
        print(json.dumps({"command": args.command, "load": load, "cpu_ms": result}, indent=2))
        return 0
    print(f"cold {args.command}, CPU ms (median of {args.runs}; load average {load:.1f})")
    for phase, value in result.items():
        print(f"  {phase:42}{value:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
