"""Off-topic benchmark: does `search` say "nothing fits" when nothing does, and still
find what is there?

    python bench/offtopic.py [--sizes 200,2000] [--floor F] [--json]

On the sample workspace and on generated ones (tests/support/generate.py, each size),
through `memcli.Memory.search` with the floor off: for every off-topic query
(bench/data/offtopic.json: subjects no workspace mentions) the best relevance of its
hits; for every on-topic query (sample: hand-written, with a piece of the text of the
entry that answers it; generated: "How should I set up <subject> ...?" for each subject
the generator writes about, answered by any entry naming it) the hits in order with
their relevance. A floor f then keeps the hits with relevance ≥ f: an off-topic query
returns nothing when its best relevance is below f; an on-topic one keeps its answer
when the answer is among the first 10 hits at or above f.

The floor is chosen on the tune half (even positions of each list) as the one with the
highest share of off-topic queries returning nothing + share of on-topic queries keeping
their answer (the lowest such floor on ties) and reported on the test half (odd
positions); `--floor` reports a given floor instead.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memcli.services.memory import Memory  # noqa: E402
from memcli.store.config import Settings, load_settings  # noqa: E402
from tests.support.generate import DETAILS, SUBJECTS, generate  # noqa: E402

DATA = ROOT / "bench" / "data" / "offtopic.json"
LIMIT = 10
RAW: list[dict] | None = None  # --dump: every hit's signals
FLOORS = [round(0.05 * i, 2) for i in range(0, 13)]


@dataclasses.dataclass
class Query:
    workspace: str
    text: str
    half: str  # tune / test
    kind: str  # offtopic / ontopic
    #: (relevance, answers the query) of the hits, in rank order, with the floor off
    hits: list[tuple[float, bool]]

    def empty_at(self, floor: float) -> bool:
        return all(relevance < floor for relevance, _ in self.hits)

    def kept_at(self, floor: float) -> bool:
        above = [answers for relevance, answers in self.hits if relevance >= floor]
        return any(above[:LIMIT])


def on_topic_generated(count: int) -> list[tuple[str, str]]:
    """(query, subject) for every subject the generator writes about."""
    return [
        (f"How should I set up {subject} {DETAILS[i % len(DETAILS)]}?", subject)
        for i, subject in enumerate(SUBJECTS)
    ][:count]


def run_workspace(
    name: str, ws: Path, data: dict, settings: Settings, embedder: object, ontopic: list
) -> list[Query]:
    mem = Memory(ws, settings=settings, embedder_factory=lambda: embedder, notify=lambda m: None)
    mem.index()
    queries: list[Query] = []

    def hits(text: str, needle: str | None) -> list[tuple[float, bool]]:
        found = mem.search(text, limit=100, touch=False)
        if RAW is not None:
            RAW.append(
                {
                    "workspace": name,
                    "query": text,
                    "hits": [
                        [
                            h.components["semantic"],
                            h.components["keyword"],
                            h.components["relevance"],
                            needle is not None and needle in h.entry.text,
                        ]
                        for h in found
                    ],
                }
            )
        return [
            (h.components["relevance"], needle is not None and needle in h.entry.text)
            for h in found
        ]

    for i, text in enumerate(data["offtopic"]):
        half = "tune" if i % 2 == 0 else "test"
        queries.append(Query(name, text, half, "offtopic", hits(text, None)))
    for i, (text, needle) in enumerate(ontopic):
        half = "tune" if i % 2 == 0 else "test"
        queries.append(Query(name, text, half, "ontopic", hits(text, needle)))
    return queries


def shares(queries: list[Query], floor: float) -> dict[str, float]:
    off = [q for q in queries if q.kind == "offtopic"]
    on = [q for q in queries if q.kind == "ontopic"]
    return {
        "offtopic_empty": 100.0 * sum(q.empty_at(floor) for q in off) / max(len(off), 1),
        "ontopic_kept": 100.0 * sum(q.kept_at(floor) for q in on) / max(len(on), 1),
        "offtopic_n": len(off),
        "ontopic_n": len(on),
    }


def choose(queries: list[Query]) -> float:
    def merit(floor: float) -> float:
        s = shares(queries, floor)
        return s["offtopic_empty"] + s["ontopic_kept"]

    return max(FLOORS, key=lambda f: (merit(f), -f))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200,2000", help="generated workspace sizes")
    parser.add_argument("--floor", type=float, help="report this floor (default: chosen)")
    parser.add_argument("--json", action="store_true", help="print only a JSON object")
    parser.add_argument("--set", action="append", default=[], metavar="search.KEY=VALUE")
    parser.add_argument("--dump", help="write every hit's raw signals to this JSON file")
    args = parser.parse_args(argv)
    global RAW
    RAW = [] if args.dump else None
    data = json.loads(DATA.read_text(encoding="utf-8"))
    base = load_settings(Path(tempfile.gettempdir()), env={})
    search = dataclasses.replace(base.search, relevance_floor=0.0)
    for pair in args.set:
        key, _, value = pair.partition("=")
        key = key.removeprefix("search.")
        search = dataclasses.replace(search, **{key: type(getattr(search, key))(value)})
    settings = dataclasses.replace(base, search=search)

    from memcli.index.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(settings.index.model, settings.index.batch_size)
    queries: list[Query] = []
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample"
        shutil.copytree(ROOT / "workspace", sample)
        queries += run_workspace("sample", sample, data, settings, embedder, data["ontopic_sample"])
        for size in (int(s) for s in args.sizes.split(",") if s.strip()):
            ws = generate(Path(tmp) / f"gen{size}", size)
            queries += run_workspace(
                f"generated-{size}", ws, data, settings, embedder, on_topic_generated(size)
            )
    if args.dump:
        Path(args.dump).write_text(json.dumps(RAW, ensure_ascii=False))
    tune = [q for q in queries if q.half == "tune"]
    test = [q for q in queries if q.half == "test"]
    floor = choose(tune) if args.floor is None else args.floor
    workspaces = list(dict.fromkeys(q.workspace for q in queries))
    report = {
        "floor": floor,
        "chosen_on": "tune" if args.floor is None else "given",
        "settings": {"keyword_saturation": search.keyword_saturation},
        "sweep": {str(f): {"tune": shares(tune, f), "test": shares(test, f)} for f in FLOORS},
        "at_floor": {
            half: {
                ws: shares(
                    [q for q in queries if half in ("all", q.half) and ws in ("all", q.workspace)],
                    floor,
                )
                for ws in [*workspaces, "all"]
            }
            for half in ("tune", "test", "all")
        },
        "offtopic_returning_hits": sorted(
            {q.text for q in test if q.kind == "offtopic" and not q.empty_at(floor)}
        ),
        "ontopic_lost": sorted(
            {
                f"{q.workspace}: {q.text}"
                for q in test
                if q.kind == "ontopic"
                and q.hits
                and any(a for _, a in q.hits[:LIMIT])
                and not q.kept_at(floor)
            }
        ),
    }
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print("floor   tune: off-topic empty / on-topic kept   test: off-topic empty / on-topic kept")
    for f in FLOORS:
        t, s = report["sweep"][str(f)]["tune"], report["sweep"][str(f)]["test"]
        mark = "  <- chosen on tune" if f == floor else ""
        print(
            f"{f:5.2f}   {t['offtopic_empty']:5.1f} / {t['ontopic_kept']:5.1f}"
            f"                         {s['offtopic_empty']:5.1f} / {s['ontopic_kept']:5.1f}{mark}"
        )
    print(f"\nat floor {floor} ({report['chosen_on']}), test half, by workspace:")
    for ws, s in report["at_floor"]["test"].items():
        print(
            f"  {ws:16} off-topic empty {s['offtopic_empty']:5.1f}% of {s['offtopic_n']}, "
            f"on-topic kept {s['ontopic_kept']:5.1f}% of {s['ontopic_n']}"
        )
    if report["offtopic_returning_hits"]:
        print("off-topic queries with hits (test):", "; ".join(report["offtopic_returning_hits"]))
    if report["ontopic_lost"]:
        print("on-topic queries that lost their answer (test):", "; ".join(report["ontopic_lost"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
