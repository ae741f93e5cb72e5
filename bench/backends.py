"""The index backends side by side, at the protocol (memcli.index.backend.IndexBackend).

    python bench/backends.py [--backends local,milvus] [--sizes 10000,100000] [--queries 200]
        [--milvus-uri URI | --milvus-server] [--clients 4] [--json]

For each backend and size, on the same generated entries (tests/support/generate.py
sentences) and the same unit vectors: build throughput (upserts in batches of 1,000,
entries/s), warm search latency p50/p95 of what one search asks the backend (dense top
POOL, BM25 top POOL, and hybrid: both, then the fill-in scores of their union, as
memcli.services.search does with the default candidate pool), edit → searchable (one
changed entry written as a command writes it, inside the writer lease, then the dense
search that finds it), delete of one id, and the process's peak memory growth. With
`--clients N` (Milvus only), N client processes then search and edit the same
workspace at once; their latencies are pooled.

The vectors are random, not embeddings: embedding costs the same for every backend
(bench/perf.py measures it), and a dense search costs the same for any vectors of that
size. Milvus runs as Milvus Lite (embedded, a file) unless `--milvus-uri` names a
server, or `--milvus-server` starts a `milvus-lite server` process (127.0.0.1, a free
port) for the run: the same gRPC client path as a Milvus standalone. Each backend runs
in its own process, so peak memory is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DIM = 384
POOL = 200  # SearchSettings.candidate_pool: what one search asks of each retriever
EDITS = 10

from bench.perf import pct  # noqa: E402 - after the sys.path line, as perf.py does


def open_named(name: str, directory: Path, milvus_uri: str | None, collection: str):  # noqa: ANN201
    from memcli.index.backend import open_backend
    from memcli.store.config import IndexSettings

    if name == "milvus":
        from memcli.index.milvus import MilvusBackend

        return MilvusBackend(
            milvus_uri or str(directory / "milvus.db"), "bench", collection=collection
        )
    return open_backend(IndexSettings(backend=name), directory, bm25=(1.2, 0.75))


def corpus(size: int):  # noqa: ANN201 - (texts, ids, vectors)
    import numpy as np

    from tests.support.generate import sentence

    rng = random.Random(size)
    texts = [sentence(rng) for _ in range(size)]
    ids = [f"m{n:011x}" for n in range(size)]
    vectors = np.random.default_rng(size).standard_normal((size, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, ids, vectors


def searches(backend, queries: int, seed: int) -> dict[str, list[float]]:  # noqa: ANN001
    """Dense, keyword and hybrid latencies (s) of `queries` random searches."""
    import numpy as np

    from tests.support.generate import sentence

    qrng = random.Random(seed)
    vrng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {"dense": [], "keyword": [], "hybrid": []}
    for _ in range(queries):
        words = " ".join(sentence(qrng).split()[:4])
        query = vrng.standard_normal(DIM).astype(np.float32)
        query /= np.linalg.norm(query)
        t = time.perf_counter()
        backend.dense_search(query, POOL)
        out["dense"].append(time.perf_counter() - t)
        t = time.perf_counter()
        backend.keyword_search(words, POOL)
        out["keyword"].append(time.perf_counter() - t)
        words = " ".join(sentence(qrng).split()[:4])  # another query: no memo helps
        query = vrng.standard_normal(DIM).astype(np.float32)
        query /= np.linalg.norm(query)
        t = time.perf_counter()
        dense = backend.dense_search(query, POOL)
        keyword = backend.keyword_search(words, POOL)
        union = list(dict.fromkeys(dense.ids + keyword.ids))
        backend.dense_scores(query, union)
        backend.keyword_scores(words, union)
        out["hybrid"].append(time.perf_counter() - t)
    return out


def edits(
    backend, texts: list[str], ids: list[str], count: int, seed: int, part: tuple[int, int] = (0, 1)
) -> list[float]:  # noqa: ANN001
    """Edit → searchable (s): one entry re-written inside the writer lease (as a sync
    writes), then the dense search that finds it. `part` (n, of): only ids whose
    position is n modulo `of` (concurrent clients never edit the same entry)."""
    import contextlib

    import numpy as np

    rng = random.Random(seed)
    vrng = np.random.default_rng([seed, 1])  # not the corpus's stream
    out = []
    for n in range(count):
        target = rng.randrange(part[0], len(ids), part[1])
        changed = vrng.standard_normal(DIM).astype(np.float32)
        changed /= np.linalg.norm(changed)
        writing = getattr(backend, "writing", None)
        t = time.perf_counter()
        with writing(wait=120) if writing else contextlib.nullcontext():
            backend.upsert(
                [ids[target]], changed[None, :], [texts[target] + f" edit {n}"], [f"e{seed}-{n}"]
            )
        found = backend.dense_search(changed, 1)
        out.append(time.perf_counter() - t)
        assert found.ids[:1] == [ids[target]], found.ids
    return out


def run_one(name: str, size: int, queries: int, milvus_uri: str | None, clients: int) -> dict:
    texts, ids, vectors = corpus(size)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    collection = f"bench_{size}_{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        backend = open_named(name, Path(tmp) / "index", milvus_uri, collection)
        started = time.perf_counter()
        backend.reset("bench/random", DIM)
        for start in range(0, size, 1000):
            chunk = slice(start, start + 1000)
            backend.upsert(ids[chunk], vectors[chunk], texts[chunk], ids[chunk])
        backend.flush()
        build = time.perf_counter() - started
        if hasattr(backend, "lease"):
            backend.lease.release()  # built; edits below take it as commands do
        one = searches(backend, queries, seed=7)
        edited = edits(backend, texts, ids, EDITS, seed=size)
        t = time.perf_counter()
        backend.delete([ids[0]])
        deleted = time.perf_counter() - t
        assert backend.count() == size - 1
        together: dict[str, list[float]] = {}
        if clients and name == "milvus" and milvus_uri:
            together = at_once(clients, size, queries, milvus_uri, collection)
        backend.close()
    peak_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    row = {
        "backend": name if name != "milvus" else ("milvus-server" if milvus_uri else "milvus-lite"),
        "size": size,
        "build_entries_per_s": round(size / build),
        **figures(one, edited, ""),
        "delete_one_ms": round(deleted * 1000, 1),
        "peak_memory_growth_mb": round(peak_mb),
    }
    if together:
        row.update(figures(together, together["edit"], f"{clients}_clients_"))
    return row


def figures(times: dict[str, list[float]], edited: list[float], prefix: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for kind in ("dense", "keyword", "hybrid"):
        out[f"{prefix}{kind}_p50_ms"] = round(statistics.median(times[kind]) * 1000, 1)
        out[f"{prefix}{kind}_p95_ms"] = round(pct(times[kind], 0.95) * 1000, 1)
    out[f"{prefix}edit_to_searchable_p50_ms"] = round(statistics.median(edited) * 1000, 1)
    out[f"{prefix}edit_to_searchable_p95_ms"] = round(pct(edited, 0.95) * 1000, 1)
    return out


def at_once(
    clients: int, size: int, queries: int, uri: str, collection: str
) -> dict[str, list[float]]:
    """`clients` processes searching and editing the workspace at the same time."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--client",
                f"{size}:{n}:{clients}:{collection}",
                "--queries",
                str(queries),
                "--milvus-uri",
                uri,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(clients)
    ]
    pooled: dict[str, list[float]] = {"dense": [], "keyword": [], "hybrid": [], "edit": []}
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"a client failed ({proc.returncode})")
        for kind, values in json.loads(out.strip().splitlines()[-1]).items():
            pooled[kind] += values
    return pooled


def client(spec: str, queries: int, uri: str) -> dict[str, list[float]]:
    """One of the concurrent clients: a backend of its own on the same workspace."""
    size, n, clients, collection = spec.split(":")
    texts, ids, _ = corpus(int(size))
    backend = open_named("milvus", Path("."), uri, collection)
    times = searches(backend, queries, seed=100 + int(n))
    times["edit"] = edits(
        backend, texts, ids, EDITS, seed=1000 + int(n), part=(int(n), int(clients))
    )
    backend.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="local,milvus")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--milvus-uri", default=None, help="a Milvus server (default: Milvus Lite)")
    parser.add_argument(
        "--milvus-server",
        action="store_true",
        help="start a `milvus-lite server` process for the run",
    )
    parser.add_argument("--clients", type=int, default=0, help="then N clients at once (a server)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child: "backend:size"
    parser.add_argument("--client", help=argparse.SUPPRESS)  # child: "size:n:of:collection"
    args = parser.parse_args()
    if args.client:
        print(json.dumps(client(args.client, args.queries, args.milvus_uri)))
        return
    if args.one:
        name, size = args.one.split(":")
        print(json.dumps(run_one(name, int(size), args.queries, args.milvus_uri, args.clients)))
        return
    server = None
    if args.milvus_server:
        from tests.support.milvus_server import MilvusServer

        server = MilvusServer(Path(tempfile.mkdtemp(prefix="memcli-bench-")) / "milvus").start()
        args.milvus_uri = server.uri
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            for name in args.backends.split(","):
                cmd = [
                    sys.executable,
                    __file__,
                    "--one",
                    f"{name}:{size}",
                    "--queries",
                    str(args.queries),
                ]
                if args.milvus_uri:
                    cmd += ["--milvus-uri", args.milvus_uri, "--clients", str(args.clients)]
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"{name} at {size}: failed\n{done.stderr[-2000:]}")
                rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
                if not args.json:
                    print(" | ".join(f"{k} {v}" for k, v in rows[-1].items()), flush=True)
    finally:
        if server is not None:
            server.stop()
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
