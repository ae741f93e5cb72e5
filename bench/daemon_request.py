"""What a watcher daemon spends per served request: a `memcli watch` service started in
this process as the command starts it (memcli.surfaces.daemon.service.WatchService: index,
warm-up, socket, file watcher, access flusher), its socket's request handler called
directly with search and inject requests as a client in a pipe sends them, with a pause
between requests as a real daemon sees them (its caches go cold meanwhile). Each
request's time is split into the ONNX run that embeds the query and everything else
(the "rest": what this benchmark is for), as wall time and as the handler thread's CPU
time (less noisy on a busy machine).

    python bench/daemon_request.py [--size 1000] [--runs 200] [--pause-ms 20]
        [--command search|inject|both] [--profile N [--sort tottime]] [--json]

`--profile N` prints the N costliest functions (cProfile, cumulative) of the runs instead
of the figures. Run it from a checkout's root: it measures that checkout's code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support.generate import contexts, generate  # noqa: E402

QUERIES = contexts(400, seed=7)


def message(root: Path, command: str, query: str, env: dict[str, str]) -> dict:
    """A client's request as `memcli search|inject` in a pipe sends it."""
    if command == "search":
        request = {"kind": "SearchQuery", "query": query, "touch": False}
    else:
        request = {"kind": "InjectRequest", "context": query, "max_tokens": 2000}
    return {"request": request, "workspace": str(root), "env": env, "view": {"command": command}}


def started_service(root: Path):  # noqa: ANN201 - memcli.surfaces.daemon.service.WatchService
    """A `memcli watch` of `root`, started as the command starts it (index, warm-up,
    socket, file watcher, access flusher); requests are handed to its handler here, in
    this process, without the socket."""
    from memcli.surfaces.daemon.service import WatchService

    service = WatchService(root, log=lambda message: None)
    service.start()
    return service


def measure(
    root: Path, command: str, runs: int, pause: float, profile: int, sort: str = "cumulative"
) -> dict:
    from memcli.surfaces.protocol import settings_env

    service = started_service(root)
    handler, mem = service.server.handler, service.memory
    embedder = mem.index_manager.query_embedder
    plain_embed = embedder.embed
    spent: list[tuple[float, float]] = []  # (wall, this thread's CPU) of each embed call

    def timed_embed(texts):  # noqa: ANN001, ANN202
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return plain_embed(texts)
        finally:
            spent.append((time.perf_counter() - started, time.thread_time() - cpu))

    embedder.embed = timed_embed  # type: ignore[method-assign]
    env = settings_env(os.environ)
    for query in QUERIES[:10]:  # warm up: model buffers, memos
        _check(handler(message(root, command, query, env)))
    totals, embeds, rest_cpu = [], [], []
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    for i in range(runs):
        query = QUERIES[10 + i % (len(QUERIES) - 10)]
        msg = message(root, command, query, env)
        time.sleep(pause)
        spent.clear()
        if profiler is not None:
            profiler.enable()
        started, cpu = time.perf_counter(), time.thread_time()
        _check(handler(msg))
        total, total_cpu = time.perf_counter() - started, time.thread_time() - cpu
        service._answered()  # what the socket server calls after each reply
        if profiler is not None:
            profiler.disable()
        totals.append(total * 1000)
        embeds.append(sum(wall for wall, _ in spent) * 1000)
        rest_cpu.append((total_cpu - sum(c for _, c in spent)) * 1000)
    embedder.embed = plain_embed  # type: ignore[method-assign]
    service.stop()
    if profiler is not None:
        import pstats

        pstats.Stats(profiler).sort_stats(sort).print_stats(profile)
    rests = [t - e for t, e in zip(totals, embeds, strict=True)]
    return {
        "command": command,
        "runs": runs,
        "total_p50_ms": round(statistics.median(totals), 2),
        "embed_p50_ms": round(statistics.median(embeds), 2),
        "rest_p50_ms": round(statistics.median(rests), 2),
        "rest_mean_ms": round(statistics.mean(rests), 2),
        # the handler thread's CPU time besides the embedding (less noisy on a busy machine)
        "rest_cpu_p50_ms": round(statistics.median(rest_cpu), 2),
    }


def _check(answer: dict) -> None:
    if "refused" in answer or "error" in answer or answer.get("exit", 0) != 0:
        raise RuntimeError(f"the daemon did not answer: {answer}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--pause-ms", type=float, default=20.0)
    parser.add_argument("--command", choices=("search", "inject", "both"), default="both")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--sort", default="cumulative", help="the profile's order (tottime…)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    commands = ("search", "inject") if args.command == "both" else (args.command,)
    with tempfile.TemporaryDirectory() as tmp:
        root = generate(Path(tmp) / "ws", args.size)
        results = [
            measure(root.resolve(), c, args.runs, args.pause_ms / 1000, args.profile, args.sort)
            for c in commands
        ]
    if args.profile:
        return 0
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    heads = ("total p50", "embed p50", "rest p50", "rest mean", "rest CPU p50")
    print(f"{'(ms per request)':24}" + "".join(f"{h:>14}" for h in heads))
    for r in results:
        label = f"{args.size:,} {r['command']}"
        keys = ("total_p50_ms", "embed_p50_ms", "rest_p50_ms", "rest_mean_ms", "rest_cpu_p50_ms")
        print(f"{label:24}" + "".join(f"{r[k]:>14}" for k in keys))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
