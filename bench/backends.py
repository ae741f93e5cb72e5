"""The index backends side by side, at the protocol (memcli.index.backend.IndexBackend).

    python bench/backends.py [--backends local,milvus] [--sizes 10000,100000] [--queries 200]

For each backend and size, on the same generated entries (tests/support/generate.py sentences)
and the same unit vectors: build throughput (upserts in batches of 1,000, entries/s),
warm search latency p50/p95 (dense top 50, BM25 top 50, and the fill-in scores of 100
ids), edit → searchable (upsert one changed entry, then the dense search that finds it),
delete of one id, and the process's peak memory growth. The vectors are random, not
embeddings: embedding costs the same for every backend (bench/perf.py measures it), and
a dense search costs the same for any vectors of that size. Milvus runs as Milvus Lite
(embedded, a file) unless --milvus-uri names a server. Each backend runs in its own
process, so peak memory is its own.
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

from bench.perf import pct  # noqa: E402 - after the sys.path line, as perf.py does


def open_named(name: str, directory: Path, milvus_uri: str | None):  # noqa: ANN201
    from memcli.index.backend import open_backend
    from memcli.store.config import IndexSettings

    if name == "milvus":
        from memcli.index.milvus import MilvusBackend

        return MilvusBackend(
            milvus_uri or str(directory / "milvus.db"), "bench", collection="bench"
        )
    return open_backend(IndexSettings(backend=name), directory, bm25=(1.2, 0.75))


def run_one(name: str, size: int, queries: int, milvus_uri: str | None) -> dict:
    import numpy as np

    from tests.support.generate import sentence

    rng = random.Random(size)
    texts = [sentence(rng) for _ in range(size)]
    ids = [f"m{n:011x}" for n in range(size)]
    vrng = np.random.default_rng(size)
    vectors = vrng.standard_normal((size, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as tmp:
        backend = open_named(name, Path(tmp) / "index", milvus_uri)
        started = time.perf_counter()
        backend.reset("bench/random", DIM)
        for start in range(0, size, 1000):
            chunk = slice(start, start + 1000)
            backend.upsert(ids[chunk], vectors[chunk], texts[chunk], ids[chunk])
        backend.flush()
        build = time.perf_counter() - started

        qrng = random.Random(7)
        words = [sentence(qrng).split()[:4] for _ in range(queries)]
        dense, keyword, fill = [], [], []
        for n in range(queries):
            query = vrng.standard_normal(DIM).astype(np.float32)
            query /= np.linalg.norm(query)
            t = time.perf_counter()
            backend.dense_search(query, 50)
            dense.append(time.perf_counter() - t)
            t = time.perf_counter()
            backend.keyword_search(" ".join(words[n]), 50)
            keyword.append(time.perf_counter() - t)
            sample = [ids[rng.randrange(size)] for _ in range(100)]
            t = time.perf_counter()
            backend.dense_scores(query, sample)
            backend.keyword_scores(" ".join(words[n]), sample)
            fill.append(time.perf_counter() - t)

        edits = []
        for n in range(10):
            target = rng.randrange(size)
            changed = vrng.standard_normal(DIM).astype(np.float32)
            changed /= np.linalg.norm(changed)
            t = time.perf_counter()
            backend.upsert(
                [ids[target]], changed[None, :], [texts[target] + f" edit {n}"], [f"e{n}"]
            )
            found = backend.dense_search(changed, 1)
            edits.append(time.perf_counter() - t)
            assert found.ids[:1] == [ids[target]], (name, found.ids)
        t = time.perf_counter()
        backend.delete([ids[0]])
        deleted = time.perf_counter() - t
        assert backend.count() == size - 1
        backend.close()
    peak_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    ms = 1000.0
    return {
        "backend": name,
        "size": size,
        "build_entries_per_s": round(size / build),
        "dense_p50_ms": round(statistics.median(dense) * ms, 1),
        "dense_p95_ms": round(pct(dense, 0.95) * ms, 1),
        "bm25_p50_ms": round(statistics.median(keyword) * ms, 1),
        "bm25_p95_ms": round(pct(keyword, 0.95) * ms, 1),
        "fill_in_100_p50_ms": round(statistics.median(fill) * ms, 1),
        "edit_to_searchable_p50_ms": round(statistics.median(edits) * ms, 1),
        "edit_to_searchable_max_ms": round(max(edits) * ms, 1),
        "delete_one_ms": round(deleted * ms, 1),
        "peak_memory_growth_mb": round(peak_mb),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="local,milvus")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--milvus-uri", default=None, help="a Milvus server (default: Milvus Lite)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child: "backend:size"
    args = parser.parse_args()
    if args.one:
        name, size = args.one.split(":")
        print(json.dumps(run_one(name, int(size), args.queries, args.milvus_uri)))
        return
    rows = []
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
                cmd += ["--milvus-uri", args.milvus_uri]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{name} at {size}: failed\n{done.stderr[-2000:]}")
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            if not args.json:
                print(" | ".join(f"{k} {v}" for k, v in rows[-1].items()), flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
