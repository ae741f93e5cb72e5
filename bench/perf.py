"""Latency and throughput of whole memcli processes on generated workspaces.

    python bench/perf.py [--sizes 1000,10000,100000] [--runs 20] [--json]
    python bench/perf.py --sizes 10000 --workspace INDEXED [--runs 20]   # no build
    python bench/perf.py --compare OLD_CHECKOUT [--sizes 1000] [--runs 60] [--json]

For each size: full index build (entries/s, against the raw model throughput measured in
the same run), peak memory, `memcli search` wall time with the watcher running (daemon
fast path) and without it (the numpy query path, index current), `memcli inject --max-tokens
2000` with the watcher, and the time from editing one entry to seeing it in search
results. The plain path (no daemon, no ONNX: sentence-transformers loaded in the
process) is measured in the same run for comparison. `--workspace INDEXED` (one size)
measures on a copy of an already indexed workspace and skips the build.

Beside each path, the floor the machine cannot go below (issue 36 item 4), each a
process of its own: a bare interpreter start, importing numpy, one query embedding (that
import, the tokenizer, the model's weights mapped, one query through numpy alone:
memcli.index.query_engine; an ASCII query is tokenized in Python, memcli.index.wordpiece,
so `tokenizers` is not part of it) and one
vector search (that, and loading the index's vectors and searching them once: NumPy
below the ANN threshold, FAISS above), each with one BLAS thread as memcli's cold reads
start (memcli.surfaces.blas). The cold paths (no watcher) are `search`,
`inject --max-tokens 2000` and the prompt hook (`hook user-prompt-submit`).

`--compare OLD_CHECKOUT` (a tree of another commit: `git worktree add /tmp/old 2371c7a`
or `git archive 2371c7a | tar -x -C /tmp/old`) measures both codes side by side: one
watcher each on two copies of one generated workspace, then `search` and `inject` runs
served by them and the cold `search`, `inject` and prompt hook (MEMCLI_NO_DAEMON=1, on
a third copy no watcher runs in: beside a watcher a read parses the Markdown),
alternating old/new (the order flipped every round): each run's wall time (p50, p95),
the client's CPU time (user+sys) and the CPU its daemon spent meanwhile. CPU time is
less noisy than wall time on a shared machine. `--workspace INDEXED` copies an already
indexed workspace (its `.memcli/` included) instead of generating and indexing one;
`--new-workspace INDEXED` gives this checkout's side its own copy (the same entries,
indexed in this checkout's file formats when they differ from the old code's).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support.generate import contexts, generate  # noqa: E402

QUERIES = contexts(50, seed=5)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed_runs(
    cmd: list[str], runs: int, env: dict[str, str], stdin: str | None = None
) -> dict[str, float]:
    """Wall time p50 / p95 of `cmd` run `runs` times ({q}: a query; `stdin` likewise),
    and the median CPU time (user+sys) of the process."""
    import resource

    walls, cpus = [], []
    for i in range(runs):
        query = QUERIES[i % len(QUERIES)]
        args = [a.replace("{q}", query) for a in cmd]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(
            args,
            capture_output=True,
            text=True,
            env=env,
            input=None if stdin is None else stdin.replace("{q}", query),
        )
        walls.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {result.stderr}")
    return {
        "p50_ms": round(statistics.median(walls), 1),
        "p95_ms": round(pct(walls, 0.95), 1),
        "cpu_p50_ms": round(statistics.median(cpus), 1),
    }


def hook_payload(ws: Path) -> str:
    """Claude Code's UserPromptSubmit payload for `ws` ({q}: the prompt)."""
    data = {"session_id": "perf", "cwd": str(ws), "hook_event_name": "UserPromptSubmit"}
    return json.dumps({**data, "prompt": "{q}"})


#: the floors, each run as `python -c CODE WORKSPACE` (module docstring)
_EMBED = """
import sys
from memcli.index.embedder import model_id_for
from memcli.index.query_engine import make
vector = make(model_id_for(""), "").embed(["deploys postgres on friday"])[0]
"""
_SEARCH = _EMBED + """
import json, numpy as np
from pathlib import Path
index = Path(sys.argv[1]) / ".memcli" / "index"
name = json.loads((index / "local.json").read_text())["vectors"]
if name.endswith(".npy"):
    matrix = np.load(index / name)
    scores = matrix @ vector
    top = np.argpartition(-scores, 10)[:10]
else:
    import faiss
    graph = faiss.read_index(str(index / name))
    graph.search(vector.reshape(1, -1), 10)
"""
FLOORS = {
    "interpreter": "pass",
    "imports": "import numpy",
    "query_embedding": _EMBED,
    "vector_search": _SEARCH,
}


def floors(ws: Path, runs: int, env: dict[str, str]) -> dict[str, dict[str, float]]:
    """What the machine cannot go below, each a process (module docstring), with one
    BLAS thread as memcli's cold reads have (memcli.surfaces.blas) unless the
    environment sets OPENBLAS_NUM_THREADS."""
    env = {"OPENBLAS_NUM_THREADS": "1", **env}
    return {
        name: timed_runs([sys.executable, "-c", code, str(ws)], runs, env)
        for name, code in FLOORS.items()
    }


def memcli_cmd(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memcli", "-w", str(ws), *args]


def build(ws: Path) -> dict[str, float]:
    """Index from scratch in a child process; raw model throughput in the same process."""
    code = f"""
import json, resource, sys, time
sys.path.insert(0, {str(ROOT)!r})
from memcli.services.memory import Memory
from memcli.index.embedder import SentenceTransformerEmbedder
mem = Memory({str(ws)!r}, notify=lambda m: None)
entries = mem.entries(include_archived=True)
embedder = mem.index_manager.embedder
from memcli.index import query_engine
query_engine.export("", embedder)  # one-time, not part of the build figure
sample = [e.text for e in entries[:3000]]
embedder.embed(sample[:64])
t = time.perf_counter(); embedder.embed(sample); raw = len(sample) / (time.perf_counter() - t)
t = time.perf_counter(); report = mem.index(rebuild=True); seconds = time.perf_counter() - t
print(json.dumps({{"entries": report.total, "build_s": round(seconds, 1),
                  "entries_per_s": round(report.total / seconds, 1),
                  "raw_model_per_s": round(raw, 1),
                  "peak_rss_mb": round(
                      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    data["build_vs_raw_pct"] = round(100 * data["entries_per_s"] / data["raw_model_per_s"], 1)
    return data


def start_watch(ws: Path, env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(
        memcli_cmd(ws, "watch"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    deadline = time.time() + 600
    while time.time() < deadline:
        if (
            subprocess.run(
                memcli_cmd(ws, "watch", "--status"), capture_output=True, env=env, cwd=cwd
            ).returncode
            == 0
        ):
            return proc
        time.sleep(0.5)
    proc.kill()
    raise RuntimeError("watch did not start")


def edit_to_searchable(ws: Path, env: dict[str, str], trials: int = 5) -> dict[str, float]:
    """Rewrite one entry (editor-style temp file + rename) and poll the daemon until a
    search for its new words returns it; the first edit after the watcher started is
    also reported on its own (`first_ms`, against `later_p50_ms`)."""
    from memcli.surfaces.cli.fastpath import try_daemon

    memory = ws / "memory.md"
    delays = []
    for trial in range(trials):
        text = memory.read_text()
        start = text.index("\n- ") + 1
        end = text.index("\n", start)
        token = f"zebracorn{os.getpid()}t{trial}x"  # never in a workspace reused (--keep)
        line = text[start:end]
        new_line = f"- {token} quartz migration note" + line[line.index(" <!--") :]
        tmp = ws / ".memory.md.tmp"
        tmp.write_text(text[:start] + new_line + text[end:])
        started = time.perf_counter()
        os.replace(tmp, memory)
        while True:
            import io

            buffer = io.StringIO()
            argv = ["-w", str(ws), "search", token, "--mode", "keyword", "-n", "1", "--no-touch"]
            with contextlib.redirect_stdout(buffer), _environment(env):
                code = try_daemon(argv)
            if code == 0 and token in buffer.getvalue():
                break
            if time.perf_counter() - started > 30:
                raise RuntimeError("edit never became searchable")
            time.sleep(0.005)
        delays.append((time.perf_counter() - started) * 1000)
    later = delays[1:] or delays
    return {
        "p50_ms": round(statistics.median(delays), 1),
        "p95_ms": round(pct(delays, 0.95), 1),
        "max_ms": round(max(delays), 1),
        "first_ms": round(delays[0], 1),  # the first edit after the watcher started
        "later_p50_ms": round(statistics.median(later), 1),
    }


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """This process's environment is `env` meanwhile: a watcher answers only clients
    whose settings environment (MEMCLI_LAYERS_READ, …) equals its own."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def measure(size: int, runs: int, tmp: Path, indexed: Path | None = None) -> dict[str, object]:
    """The figures of one size; with `indexed` (an indexed workspace of that size) on a
    copy of it, without building (no build figures)."""
    env = _bench_env()
    if indexed is None:
        ws = generate(tmp / f"ws-{size}", size)
        result: dict[str, object] = {"size": size, "build": build(ws)}
    else:
        import shutil

        ws = tmp / f"ws-{size}"
        shutil.copytree(indexed, ws, ignore=shutil.ignore_patterns("*.sock", "locks", "watch*"))
        result = {"size": size}
    result["search_no_watcher"] = timed_runs(
        memcli_cmd(ws, "search", "{q}", "--no-touch"), runs, env
    )
    result["inject_no_watcher"] = timed_runs(
        memcli_cmd(ws, "inject", "-q", "{q}", "--max-tokens", "2000", "--no-touch"), runs, env
    )
    result["hook_no_watcher"] = timed_runs(
        memcli_cmd(ws, "hook", "user-prompt-submit"), runs, env, stdin=hook_payload(ws)
    )
    result["floors"] = floors(ws, runs, dict(env, PYTHONPATH=str(ROOT)))
    plain = dict(env, MEMCLI_NO_DAEMON="1", MEMCLI_INDEX_ONNX="0")
    result["search_plain_path"] = timed_runs(
        memcli_cmd(ws, "search", "{q}", "--no-touch"), max(3, runs // 4), plain
    )
    result["inject_plain_path"] = timed_runs(
        memcli_cmd(ws, "inject", "-q", "{q}", "--max-tokens", "2000"), max(3, runs // 4), plain
    )
    proc = start_watch(ws, env)
    try:
        result["search_watcher"] = timed_runs(
            memcli_cmd(ws, "search", "{q}", "--no-touch"), runs, env
        )
        result["inject_watcher"] = timed_runs(
            memcli_cmd(ws, "inject", "-q", "{q}", "--max-tokens", "2000"), runs, env
        )
        result["edit_to_searchable"] = edit_to_searchable(ws, env)
        status = subprocess.run(
            memcli_cmd(ws, "watch", "--status", "--json"), capture_output=True, text=True, env=env
        )
        pid = json.loads(status.stdout)["data"]["pid"]
        with open(f"/proc/{pid}/status") as handle:
            rss = next(line for line in handle if line.startswith("VmHWM"))
        result["watcher_peak_rss_mb"] = round(int(rss.split()[1]) / 1024)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    for name in ("search", "inject"):
        plain_ms = result[f"{name}_plain_path"]["p50_ms"]  # type: ignore[index]
        fast_ms = result[f"{name}_watcher"]["p50_ms"]  # type: ignore[index]
        result[f"{name}_plain_over_watcher"] = round(plain_ms / fast_ms, 1)
    return result


def _bench_env() -> dict[str, str]:
    """This environment without MEMCLI_* settings, no watcher started by the hooks
    measured without one (memcli.surfaces.daemon.autostart), and no user layer (the
    machine's own per-user workspace is not part of the figures)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    return env | {"MEMCLI_WATCH_AUTOSTART": "0", "MEMCLI_LAYERS_READ": ""}


def _cpu_ms(pid: int) -> float:
    """User+sys CPU time of a running process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


#: what --compare runs: (arguments, cold: without the watcher, stdin)
COMPARED = {
    "search": (["search", "{q}", "--no-touch"], False),
    "inject": (["inject", "-q", "{q}", "--max-tokens", "2000"], False),
    "cold_search": (["search", "{q}", "--no-touch"], True),
    "cold_inject": (["inject", "-q", "{q}", "--max-tokens", "2000", "--no-touch"], True),
    "cold_hook": (["hook", "user-prompt-submit"], True),
}


def compare(
    old: Path,
    size: int,
    runs: int,
    tmp: Path,
    indexed: Path | None = None,
    new_indexed: Path | None = None,
) -> dict[str, object]:
    """This checkout and `old`, side by side (module docstring); `new_indexed`: the copy
    this checkout's side starts from instead of `indexed` (the same entries, indexed in
    this checkout's file formats)."""
    import resource
    import shutil

    base = indexed or generate(tmp / f"ws-{size}", size)
    env = _bench_env()
    sides = {}
    for name, code in (("new", ROOT), ("old", old)):
        ws = tmp / f"{name}-{size}"
        source = new_indexed if name == "new" and new_indexed is not None else base
        shutil.copytree(source, ws, ignore=shutil.ignore_patterns("*.sock", "locks", "watch*"))
        # the cold commands read a copy no watcher runs in: a watcher's start-up sync keeps
        # the entries snapshot in memory until it leaves, so a read beside it parses the
        # Markdown, which a cold read of a workspace without a watcher does not
        ignored = shutil.ignore_patterns("*.sock", "locks", "watch*")
        shutil.copytree(source, ws.with_name(ws.name + "-cold"), ignore=ignored)
        side_env = dict(env, PYTHONPATH=str(code))
        sides[name] = (code, ws, side_env, start_watch(ws, side_env, cwd=code))
    samples: dict[str, dict[str, list[float]]] = {}
    try:
        for i in range(runs):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for command, (args, cold) in COMPARED.items():
                for name in order:
                    code, ws, side_env, proc = sides[name]
                    ws = ws.with_name(ws.name + "-cold") if cold else ws
                    query = QUERIES[i % len(QUERIES)]
                    argv = [a.replace("{q}", query) for a in args]
                    stdin = hook_payload(ws).replace("{q}", query) if args[0] == "hook" else ""
                    run_env = dict(side_env, MEMCLI_NO_DAEMON="1") if cold else side_env
                    before, daemon = resource.getrusage(resource.RUSAGE_CHILDREN), _cpu_ms(proc.pid)
                    started = time.perf_counter()
                    result = subprocess.run(
                        memcli_cmd(ws, *argv),
                        capture_output=True,
                        env=run_env,
                        cwd=code,
                        input=stdin.encode(),
                    )
                    wall = (time.perf_counter() - started) * 1000
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    if result.returncode != 0:
                        raise RuntimeError(f"{name} {argv} failed: {result.stderr!r}")
                    client = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                    row = samples.setdefault(f"{command}_{name}", {})
                    row.setdefault("wall", []).append(wall)
                    row.setdefault("client_cpu", []).append(client * 1000)
                    row.setdefault("daemon_cpu", []).append(_cpu_ms(proc.pid) - daemon)
    finally:
        for _, _, _, proc in sides.values():
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    result: dict[str, object] = {"size": size, "runs": runs, "old": str(old)}
    for key, row in samples.items():
        result[key] = {
            "wall_p50_ms": round(statistics.median(row["wall"]), 1),
            "wall_p95_ms": round(pct(row["wall"], 0.95), 1),
            "client_cpu_p50_ms": round(statistics.median(row["client_cpu"]), 1),
            "client_cpu_p95_ms": round(pct(row["client_cpu"], 0.95), 1),
            # the daemon's CPU clock ticks in 10 ms steps: its mean, not its median
            "daemon_cpu_mean_ms": round(statistics.mean(row["daemon_cpu"]), 1),
        }
    return result


def print_compare(results: list[dict]) -> None:
    print(f"{'(daemon: mean)':44}{'old':>12}{'new':>12}")
    for r in results:
        for command in COMPARED:
            figures = ["wall_p50_ms", "wall_p95_ms", "client_cpu_p50_ms", "client_cpu_p95_ms"]
            if not COMPARED[command][1]:
                figures.append("daemon_cpu_mean_ms")
            for figure in figures:
                label = f"{r['size']:,} {command} {figure}"
                old, new = r[f"{command}_old"][figure], r[f"{command}_new"][figure]
                print(f"{label:44}{old:>12}{new:>12}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--compare", type=Path, metavar="OLD_CHECKOUT")
    parser.add_argument(
        "--workspace", type=Path, metavar="INDEXED", help="on a copy of it (one size; no build)"
    )
    parser.add_argument(
        "--new-workspace",
        type=Path,
        metavar="INDEXED",
        help="with --compare: this checkout's side copies it (the same entries as "
        "--workspace, indexed in this checkout's formats)",
    )
    args = parser.parse_args(argv)
    import compileall

    # byte-compile memcli once, as an installed package is: otherwise every measured
    # process (PYTHONDONTWRITEBYTECODE is set on this machine) compiles its modules anew
    compileall.compile_dir(str(ROOT / "memcli"), quiet=1)
    if args.compare:
        compileall.compile_dir(str(args.compare / "memcli"), quiet=1)
        with tempfile.TemporaryDirectory() as tmp:
            compared = [
                compare(
                    args.compare.resolve(),
                    int(size),
                    args.runs,
                    Path(tmp),
                    args.workspace,
                    args.new_workspace,
                )
                for size in args.sizes.split(",")
            ]
        if args.json:
            print(json.dumps(compared, indent=2))
        else:
            print_compare(compared)
        return 0
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(measure(size, args.runs, Path(tmp), args.workspace))
            if not args.json:
                print(json.dumps(results[-1]), file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    rows = [
        ("index build entries/s", lambda r: r["build"]["entries_per_s"]),
        ("raw model entries/s", lambda r: r["build"]["raw_model_per_s"]),
        ("build vs raw model %", lambda r: r["build"]["build_vs_raw_pct"]),
        ("index build s", lambda r: r["build"]["build_s"]),
        ("build peak RSS MB", lambda r: r["build"]["peak_rss_mb"]),
        ("watcher peak RSS MB", lambda r: r["watcher_peak_rss_mb"]),
        ("search, watcher p50/p95 ms", lambda r: _pair(r["search_watcher"])),
        ("search, no watcher p50/p95 ms", lambda r: _pair(r["search_no_watcher"])),
        ("inject 2000, no watcher p50/p95", lambda r: _pair(r["inject_no_watcher"])),
        ("prompt hook, no watcher p50/p95", lambda r: _pair(r["hook_no_watcher"])),
        ("floor: interpreter p50/p95", lambda r: _pair(r["floors"]["interpreter"])),
        ("floor: numpy+onnxruntime", lambda r: _pair(r["floors"]["imports"])),
        ("floor: one query embedding", lambda r: _pair(r["floors"]["query_embedding"])),
        ("floor: one vector search", lambda r: _pair(r["floors"]["vector_search"])),
        ("search, plain path p50/p95 ms", lambda r: _pair(r["search_plain_path"])),
        ("inject 2000, watcher p50/p95 ms", lambda r: _pair(r["inject_watcher"])),
        ("inject 2000, plain path p50/p95", lambda r: _pair(r["inject_plain_path"])),
        ("plain / watcher (search)", lambda r: r["search_plain_over_watcher"]),
        ("plain / watcher (inject)", lambda r: r["inject_plain_over_watcher"]),
        ("edit -> searchable p50/max ms", lambda r: _pair(r["edit_to_searchable"], "max_ms")),
    ]
    print(f"{'':34}" + "".join(f"{r['size']:>16,}" for r in results))
    for label, get in rows:
        print(f"{label:34}" + "".join(f"{_cell(get, r):>16}" for r in results))
    return 0


def _cell(get: Any, result: dict) -> str:
    """One figure of the table ("-" where it was not measured: no build with --workspace)."""
    try:
        return str(get(result))
    except KeyError:
        return "-"


def _pair(data: dict, second: str = "p95_ms") -> str:
    return f"{data['p50_ms']:.0f}/{data[second]:.0f}"


if __name__ == "__main__":
    raise SystemExit(main())
