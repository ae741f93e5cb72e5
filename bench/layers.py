"""What reading a second layer costs a warm process (the watcher, MCP, the API).

    python bench/layers.py [--entries 2000] [--runs 40]

Two generated workspaces, a project and the per-user one (in a temporary XDG data
home), indexed with the bundled model; then, in one process, search and inject through
memcli.surfaces.operations (what every surface calls) with the user layer read
(`[layers] read = "user"`, the default) and without it (`read = ""`), each query new.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_DATA_HOME"] = f"{tmp}/data"
        from memcli.core.requests import InjectRequest, SearchQuery
        from memcli.services.memory import Memory
        from memcli.surfaces import operations

        user, project = Path(tmp) / "data" / "memcli", Path(tmp) / "project"
        for seed, root in enumerate((user, project)):
            generate(root, args.entries, seed=seed)
            Memory(root, notify=lambda m: None).index()
        queries = contexts(args.runs + 1)
        for label, read in (("one layer", ""), ("two layers", "user")):
            mem = Memory(project, env={**os.environ, "MEMCLI_LAYERS_READ": read})
            for kind, call in (
                ("search", lambda q, m=mem: operations.search(m, SearchQuery(q, touch=False))),
                ("inject", lambda q, m=mem: operations.inject(m, InjectRequest(q, touch=False))),
            ):
                call(queries[-1])  # warm
                took = []
                for q in queries[:-1]:
                    start = time.perf_counter()
                    call(q)
                    took.append(time.perf_counter() - start)
                print(f"{label:>10} {kind}: median {statistics.median(took) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
