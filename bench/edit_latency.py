"""Edit -> searchable with the watcher running, at sizes where a full index build with
the real model would take minutes (100k: ≈ 7 min), plus the watcher's search latency.

    python bench/edit_latency.py [--sizes 100000] [--trials 10] [--keep DIR] [--json]

The workspace is generated (`bench/generate.py`); the embedding cache is filled with
deterministic pseudo-random unit vectors for its texts under the real model's identity,
so `memcli index` builds the index from the cache without embedding anything. The
watcher then runs as in production (real model for new texts, ONNX query path, real
watchdog observer) and `bench/perf.py`'s edit_to_searchable measures the time from an
editor-style save of one entry to a daemon-served search returning its new words. The
vectors are not meaningful, so only timings are reported, never rankings. `--keep DIR`
makes the workspaces in DIR and reuses them on later runs (making the 100k one takes
minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.perf import QUERIES, edit_to_searchable, memcli_cmd, start_watch, timed_runs  # noqa: E402
from tests.support.generate import generate  # noqa: E402


def fill_cache(ws: Path) -> int:
    """Put a vector for every entry text of `ws` in its embedding cache (no model run)."""
    import hashlib

    import numpy as np

    from memcli.index.embedder import EmbeddingCache, model_id_for, text_hash
    from memcli.store.store import Store

    entries = Store(ws).entries(include_archived=True)
    hashes = list(dict.fromkeys(text_hash(e.text) for e in entries))
    seed = int(hashlib.sha256(str(len(hashes)).encode()).hexdigest()[:8], 16)
    vectors = np.random.default_rng(seed).standard_normal((len(hashes), 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cache = EmbeddingCache(ws / ".memcli" / "cache", model_id_for(""), 384)
    cache.add(hashes, vectors)
    cache.save(hashes)
    return len(hashes)


def prepared(size: int, tmp: Path, env: dict[str, str]) -> tuple[Path, float | None]:
    """The indexed workspace of `size` entries under `tmp` and the seconds its making
    took (None: made by an earlier run, `--keep`)."""
    ws = tmp / f"ws-{size}"
    if (ws / ".memcli" / "index" / "local.json").is_file():
        return ws, None
    ws = generate(ws, size)
    started = time.perf_counter()
    fill_cache(ws)
    subprocess.run(memcli_cmd(ws, "index"), check=True, capture_output=True, env=env)
    return ws, round(time.perf_counter() - started, 1)


def measure(size: int, trials: int, runs: int, tmp: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
    env |= {"PYTHONPATH": str(ROOT), "MEMCLI_WATCH_AUTOSTART": "0", "MEMCLI_LAYERS_READ": ""}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ws, seconds = prepared(size, tmp, env)
    # a reused workspace keeps an earlier run's edit of its first entry: each trial
    # writes a word of this run's own (edit_to_searchable), found only after its edit
    result: dict[str, object] = {"size": size, "prepare_s": seconds}
    result["search_no_watcher"] = timed_runs(
        memcli_cmd(ws, "search", "{q}", "--no-touch"), max(3, runs // 2), env
    )
    proc = start_watch(ws, env)
    try:
        result["search_watcher"] = timed_runs(
            memcli_cmd(ws, "search", "{q}", "--no-touch"), runs, env
        )
        result["edit_to_searchable"] = edit_to_searchable(ws, env, trials)
        result["search_watcher_after_edits"] = timed_runs(
            memcli_cmd(ws, "search", "{q}", "--no-touch"), runs, env
        )
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="make the workspaces in DIR, reuse them there"
    )
    args = parser.parse_args(argv)
    assert QUERIES  # the same queries as bench/perf.py
    import compileall

    compileall.compile_dir(str(ROOT / "memcli"), quiet=1)  # as an installed package is
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(measure(size, args.trials, args.runs, where))
            if not args.json:
                print(json.dumps(results[-1]), file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'':34}" + "".join(f"{r['size']:>16,}" for r in results))
    for label, key, second in (
        ("edit -> searchable p50/p95 ms", "edit_to_searchable", "p95_ms"),
        ("edit -> searchable p50/max ms", "edit_to_searchable", "max_ms"),
        ("first edit / later edits p50 ms", "edit_to_searchable", "first"),
        ("search, watcher p50/p95 ms", "search_watcher", "p95_ms"),
        ("search, watcher after edits", "search_watcher_after_edits", "p95_ms"),
        ("search, no watcher p50/p95 ms", "search_no_watcher", "p95_ms"),
    ):
        print(
            f"{label:34}" + "".join(_cell(r[key], second).rjust(16) for r in results)  # type: ignore[arg-type]
        )
    return 0


def _cell(data: dict, second: str) -> str:
    if second == "first":
        return f"{data['first_ms']:.0f}/{data['later_p50_ms']:.0f}"
    return f"{data['p50_ms']:.0f}/{data[second]:.0f}"


if __name__ == "__main__":
    raise SystemExit(main())
