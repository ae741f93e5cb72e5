"""Retrieval benchmark on LoCoMo-format conversations, through memcli's own search path.

One workspace per conversation, written as memory.md like a user's, indexed and searched
with `memcli.Memory` (the API the CLI uses). Track A: every dialogue turn is an entry;
Track B: every observation is an entry. Adversarial questions (category 5) are excluded.
Metric and data quirks: ../shared/bench/README.md.

Every figure comes with a bootstrap 95% interval (questions resampled with replacement,
`--bootstrap` resamples, `--seed`), overall and per category. `--half tune|test` keeps
one of two fixed halves of the conversations (see `halves`): tune on one, report the
other. `--save` keeps the per-question figures; `--compare` gives the paired difference
to a saved run, with its interval. The experiment switches (`--window`, `--neighbours`,
`--dates`, `--date-boost`, `--multihop`, ...) run the experimental engine of
bench/locomo_exp.py; without them, the search is `memcli.Memory.search` itself.

    python bench/locomo.py [FILE] [--track a|b|both] [--half all|tune|test] [--json]
        [--set search.key=value ...] [--save RUN.json] [--compare BASE.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from bench.locomo_exp import Experiment, Retriever, VectorCache  # noqa: E402
from memcli.services.memory import Memory  # noqa: E402
from memcli.store.config import Settings, load_settings  # noqa: E402
from memcli.store.markdown import format_meta  # noqa: E402

DEFAULT_FILE = next(
    (
        p
        for p in (
            ROOT.parent / "shared" / "bench" / "locomo" / "locomo_public.json",
            ROOT.parent.parent / "shared" / "bench" / "locomo" / "locomo_public.json",
        )
        if p.is_file()
    ),
    ROOT.parent / "shared" / "bench" / "locomo" / "locomo_public.json",
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
METRICS = ("R@1", "R@5", "R@10", "hit@1", "hit@5", "hit@10", "MRR@10")
BUCKETS = ("overall", "single-hop", "multi-hop", "temporal", "open-domain")


# ------------------------------------------------------------------ data


def session_keys(conversation: dict) -> list[str]:
    keys = [k for k in conversation if re.fullmatch(r"session_\d+", k)]
    return sorted(keys, key=lambda k: int(k.split("_")[1]))


def parse_session_date(text: str) -> str | None:
    """'1:56 pm on 8 May, 2023' -> ISO time, or None."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return dt.datetime.strptime(text.strip(), fmt).strftime("%Y-%m-%dT%H:%M:00Z")
        except ValueError:
            continue
    return None


def turns_of(sample: dict) -> list[dict]:
    """Every dialogue turn with its session date, in conversation order."""
    conversation = sample["conversation"]
    turns = []
    for key in session_keys(conversation):
        date = conversation.get(f"{key}_date_time", "")
        for turn in conversation[key] or []:
            turns.append({**turn, "date": date})
    return turns


def normalise_id(raw: str) -> str | None:
    raw = raw.strip().strip(",.;")
    match = re.fullmatch(r"D:?(\d+):0*(\d+)", raw)
    return f"D{int(match.group(1))}:{int(match.group(2))}" if match else None


def evidence_of(question: dict, known: set[str]) -> list[str]:
    ids = []
    for item in question.get("evidence") or []:
        for part in re.split(r"[;\s]+", str(item)):
            norm = normalise_id(part) if part else None
            if norm and norm in known and norm not in ids:
                ids.append(norm)
    return ids


def halves(data: list[dict]) -> dict[str, list[str]]:
    """Two fixed halves of the conversations: in sample-id order, conversations go to
    "tune" until it holds half of the (non-adversarial) questions, the rest to "test".
    Conversations, not questions, are the unit: the questions of one conversation share
    its people, topics and wording, so a setting tuned on some of them is not tested by
    the others. Public file: tune = conv-26, conv-30, conv-41 (383 questions with evidence, 1,451
    turns), test = conv-42, conv-43 (377 questions, 1,309 turns)."""
    counted = [
        (str(s.get("sample_id", i)), sum(1 for q in s.get("qa", []) if q.get("category") != 5))
        for i, s in enumerate(data)
    ]
    total = sum(n for _, n in counted)
    tune: list[str] = []
    held = 0
    for sample_id, n in sorted(counted):
        if held < total / 2:
            tune.append(sample_id)
            held += n
    return {"tune": tune, "test": [sid for sid, _ in sorted(counted) if sid not in tune]}


def turn_text(turn: dict, with_date: bool = True) -> str:
    head = f"({turn['date']}) " if with_date else ""
    text = f"{head}{turn['speaker']}: {turn.get('text', '')}".strip()
    if turn.get("blip_caption"):
        text += f" [shared a photo: {turn['blip_caption']}]"
    return " ".join(text.split())


Item = tuple[str, str, str | None, str | None]  # (id, text, created, src)


def write_workspace(path: Path, items: list[Item]) -> None:
    """items: (id, text, created, src) -> memory.md with one Facts section."""
    path.mkdir(parents=True, exist_ok=True)
    lines = ["# Memory", "", "## Facts"]
    for entry_id, text, created, src in items:
        meta = {"id": entry_id}
        if created:
            meta["created"] = created
        if src:
            meta["src"] = src
        lines.append(f"- {text} <!-- {format_meta(meta)} -->")
    (path / "memory.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def track_items(sample: dict, track: str, with_date: bool = True) -> list[Item]:
    turns = turns_of(sample)
    if track == "a":
        return [
            (
                normalise_id(t["dia_id"]) or t["dia_id"],
                turn_text(t, with_date),
                parse_session_date(t["date"]),
                None,
            )
            for t in turns
            if normalise_id(t["dia_id"])
        ]
    dates = {normalise_id(t["dia_id"]): t["date"] for t in turns}
    items = []
    observation = sample.get("observation") or {}
    for key in sorted(observation, key=lambda k: int(re.sub(r"\D", "", k) or 0)):
        session = re.search(r"session_(\d+)", key)
        date = (
            sample["conversation"].get(f"session_{session.group(1)}_date_time", "")
            if session
            else ""
        )
        for speaker, facts in (observation[key] or {}).items():
            for fact in facts:
                text, cites = fact[0], fact[1] if len(fact) > 1 else []
                cites = [cites] if isinstance(cites, str) else cites
                ids = [
                    n for c in cites for p in re.split(r"[;\s,]+", str(c)) if (n := normalise_id(p))
                ]
                if not ids:
                    continue
                entry_date = dates.get(ids[0]) or date
                head = f"({entry_date}) " if entry_date and with_date else ""
                body = f"{head}{speaker}: {text}"
                items.append(
                    (
                        f"O{len(items) + 1}",
                        " ".join(body.split()),
                        parse_session_date(entry_date),
                        ",".join(ids),
                    )
                )
    return items


def session_of(item: Item) -> int:
    """The session number of an entry (from its dialogue id, or the first it cites)."""
    first = (item[3] or item[0]).split(",")[0]
    match = re.fullmatch(r"D(\d+):\d+", first)
    return int(match.group(1)) if match else -1


# ------------------------------------------------------------------ evaluation


@dataclass
class Options:
    """How a run builds and searches the workspaces."""

    engine: str = "product"  # product: Memory.search; bench: bench/locomo_exp.Retriever
    experiment: Experiment = field(default_factory=Experiment)
    with_date: bool = True  # the session date in the entry text (the task's format)
    #: Track A, product engine: "conversation" imports each conversation as
    #: `memcli import --conversation` does (conversations/<id>.md, an ordered log, the
    #: time only in created=); "memory" writes the turns into memory.md, date in the text
    layout: str = "conversation"
    shuffle: bool = False  # entries in a seeded random order: adjacency means nothing
    cache: Path | None = None  # embedding cache of the bench engine


def evaluate(
    data: list[dict],
    track: str,
    settings: Settings,
    workdir: Path,
    embedder_factory: Callable[[], object],
    options: Options | None = None,
) -> dict:
    """Per-question figures of one track: {"questions": [...], "skipped_no_evidence"}."""
    options = options or Options()
    cache = None
    if options.engine == "bench":
        cache = VectorCache(options.cache or default_cache(), embedder_factory())
    records: list[dict] = []
    skipped = 0
    for sample in data:
        sample_id = str(sample.get("sample_id", "conv"))
        known = {normalise_id(t["dia_id"]) for t in turns_of(sample)}
        items = track_items(sample, track, options.with_date)
        if options.shuffle:
            random.Random(f"{sample_id}-{track}").shuffle(items)
        ws = workdir / f"{sample_id}-{track}"
        imported = track == "a" and options.layout == "conversation" and cache is None
        write_workspace(ws, [] if imported else items)
        shutil.rmtree(ws / "conversations", ignore_errors=True)  # a kept --workdir
        mem = Memory(
            ws, settings=settings, embedder_factory=embedder_factory, notify=lambda m: None
        )
        if imported:  # the product's import path; entries map back by their turn= id
            mem.import_conversation(json.dumps(sample), f"{sample_id}.json")
            items = [
                (e.id, e.text, e.meta.get("created"), normalise_id(e.meta.get("turn", "")))
                for e in mem.entries()
                if normalise_id(e.meta.get("turn", ""))
            ]
        if cache is not None:
            sessions = {item[0]: session_of(item) for item in items}
            retriever = Retriever(mem.entries(), sessions, settings, options.experiment, cache)

            def search(question: str, retriever: Retriever = retriever) -> list[str]:
                return retriever.search(question, limit=10)
        else:
            mem.index()

            def search(question: str, mem: Memory = mem) -> list[str]:
                return [h.entry.id for h in mem.search(question, limit=10, touch=False)]

        to_dia = {
            entry_id: (src.split(",") if src else [entry_id]) for entry_id, _, _, src in items
        }
        for number, question in enumerate(sample.get("qa", [])):
            category = int(question.get("category", 0))
            if category == 5:
                continue
            evidence = evidence_of(question, known)
            if not evidence:
                skipped += 1
                continue
            entry_ids = search(str(question["question"]))
            metrics = score(entry_ids, to_dia, set(evidence))
            records.append(
                {
                    "sample": sample_id,
                    "q": number,
                    "category": CATEGORIES.get(category, str(category)),
                    # imported turns get fresh ids each run: record their turn ids
                    "top10": [to_dia[e][0] if imported else e for e in entry_ids[:10]],
                }
                | {name: round(value, 6) for name, value in metrics.items()}
            )
        if cache is not None:
            cache.save()
    return {"questions": records, "skipped_no_evidence": skipped}


def default_cache() -> Path:
    return Path(tempfile.gettempdir()) / "memcli-locomo-cache"


def score(entry_ids: list[str], to_dia: dict, evidence: set[str]) -> dict[str, float]:
    """R@k over the dialogue ids covered by the top-k entries; hit@k (any evidence in the
    top k); MRR@10 (1 / rank of the first entry covering evidence)."""
    metrics = {}
    for k in KS:
        covered = {d for entry_id in entry_ids[:k] for d in to_dia.get(entry_id, [entry_id])}
        metrics[f"R@{k}"] = len(covered & evidence) / len(evidence)
    first = next(
        (rank for rank, e in enumerate(entry_ids[:10], 1) if set(to_dia.get(e, [e])) & evidence),
        None,
    )
    for k in KS:
        metrics[f"hit@{k}"] = 1.0 if first is not None and first <= k else 0.0
    metrics["MRR@10"] = 1.0 / first if first else 0.0
    return metrics


# ------------------------------------------------------------------ statistics


def bucket_rows(records: list[dict]) -> dict[str, list[int]]:
    """Question indices per bucket: overall and each category present."""
    rows: dict[str, list[int]] = {"overall": list(range(len(records)))}
    for i, r in enumerate(records):
        rows.setdefault(r["category"], []).append(i)
    return {b: rows[b] for b in (*BUCKETS, *sorted(rows)) if b in rows}


def summarize(records: list[dict], resamples: int, seed: int) -> dict[str, dict]:
    """Per bucket: the mean of each metric (×100), its bootstrap 95% interval
    (percentile, `resamples` resamples of the bucket's questions with replacement, a
    generator seeded with `seed` and the bucket's name) and n."""
    out = {}
    for bucket, rows in bucket_rows(records).items():
        values = np.array([[records[i][m] for m in METRICS] for i in rows], dtype=np.float64)
        means = 100 * values.mean(axis=0)
        rng = np.random.default_rng([seed, *bucket.encode()])
        draws = rng.integers(0, len(rows), size=(resamples, len(rows)))
        boot = 100 * values[draws].mean(axis=1)
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        out[bucket] = {m: round(float(means[j]), 2) for j, m in enumerate(METRICS)} | {
            "n": len(rows),
            "ci95": {
                m: [round(float(lo[j]), 2), round(float(hi[j]), 2)] for j, m in enumerate(METRICS)
            },
        }
    return out


def paired(base: list[dict], run: list[dict], resamples: int, seed: int) -> dict[str, dict]:
    """Per bucket: run − base of each metric (×100) over the questions both answered, with
    a paired bootstrap 95% interval (the same resampled questions for both)."""
    keyed = {(r["sample"], r["q"]): r for r in base}
    pairs = [(keyed[(r["sample"], r["q"])], r) for r in run if (r["sample"], r["q"]) in keyed]
    diffs = [{"category": r["category"]} | {m: r[m] - b[m] for m in METRICS} for b, r in pairs]
    return summarize(diffs, resamples, seed) if diffs else {}


def overlap(base: list[dict], run: list[dict]) -> dict[str, float]:
    """How far two runs' top 10 agree, question by question (e.g. the local index against
    Milvus): the mean share of ids in common, and the share of questions whose top 10 is
    identical, and whose first hit is the same."""
    keyed = {(r["sample"], r["q"]): r.get("top10") for r in base}
    pairs = [(keyed.get((r["sample"], r["q"])), r.get("top10")) for r in run]
    pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not pairs:
        return {}
    shared = [len(set(a) & set(b)) / max(len(a), len(b), 1) for a, b in pairs]
    return {
        "n": len(pairs),
        "mean": 100 * sum(shared) / len(pairs),
        "identical": 100 * sum(a == b for a, b in pairs) / len(pairs),
        "same_first": 100 * sum(a[:1] == b[:1] for a, b in pairs) / len(pairs),
    }


# ------------------------------------------------------------------ main


def parse_overrides(pairs: list[str]) -> dict[str, dict[str, object]]:
    overrides: dict[str, dict[str, object]] = defaultdict(dict)
    for pair in pairs:
        key, _, value = pair.partition("=")
        section, _, name = key.partition(".")
        if not name or not value:
            raise SystemExit(f"--set {pair!r}: use section.key=value")
        overrides[section][name] = float(value) if re.fullmatch(r"-?[\d.]+", value) else value
    return overrides


def table(summary: dict[str, dict], title: str) -> str:
    """Metrics as rows, buckets as columns, each cell `mean [lo, hi]`."""
    buckets = list(summary)
    lines = [title, f"{'':8}" + "".join(f"{b:>20}" for b in buckets)]
    lines.append(f"{'n':8}" + "".join(f"{summary[b]['n']:>20}" for b in buckets))
    for m in METRICS:
        cells = []
        for b in buckets:
            lo, hi = summary[b]["ci95"][m]
            cells.append(f"{summary[b][m]:>6.1f} [{lo:5.1f},{hi:5.1f}]")
        lines.append(f"{m:8}" + "".join(f"{c:>20}" for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT_FILE))
    parser.add_argument("--track", choices=["a", "b", "both"], default="both")
    parser.add_argument("--half", choices=["all", "tune", "test"], default="all")
    parser.add_argument("--json", action="store_true", help="print only a JSON object")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--workdir", help="keep workspaces (and their embedding caches) here")
    parser.add_argument("--bootstrap", type=int, default=2000, help="resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=16, help="bootstrap seed (default 16)")
    parser.add_argument("--save", help="write the per-question figures to this JSON file")
    parser.add_argument("--compare", help="paired difference to a run saved with --save")
    parser.add_argument(
        "--layout",
        choices=["conversation", "memory"],
        default="conversation",
        help="Track A: import each conversation as `memcli import --conversation` does "
        "(default), or write its turns into memory.md with the date in the text (the old "
        "layout; the bench engine always uses it)",
    )
    exp = parser.add_argument_group("experiments (bench/locomo_exp.py)")
    exp.add_argument(
        "--engine",
        choices=["product", "bench"],
        help="default: product unless an experiment switch is given",
    )
    exp.add_argument("--window", type=int, default=0, help="embed a turn with N turns before")
    exp.add_argument("--window-mode", choices=["replace", "mean", "pool"], default="replace")
    exp.add_argument("--context-weight", type=float, default=0.5, help="pool mode")
    exp.add_argument("--neighbours", choices=["file", "session", "off"], default="file")
    exp.add_argument("--dates", action="store_true", help="date spellings on the keyword side")
    exp.add_argument("--date-boost", type=float, default=0.0, metavar="X")
    exp.add_argument("--multihop", type=float, default=0.0, metavar="WEIGHT")
    exp.add_argument("--seeds", type=int, default=3)
    exp.add_argument("--seed-terms", type=int, default=8)
    exp.add_argument("--keep", type=int, default=1)
    exp.add_argument("--session-cap", type=int, default=0, metavar="N")
    exp.add_argument(
        "--no-date-text",
        action="store_true",
        help="entry text without the session date (it stays the created date)",
    )
    exp.add_argument(
        "--shuffle",
        action="store_true",
        help="entries in a seeded random order (a curated file: no sequence)",
    )
    exp.add_argument("--cache", help="embedding cache directory of the bench engine")
    exp.add_argument(
        "--no-date-spellings",
        action="store_true",
        help="ablation: the keyword side without the entry's date (product engine)",
    )
    args = parser.parse_args(argv)

    if args.no_date_spellings:  # ablation only: keyword text as before issue 16
        import memcli.index.sync as sync

        sync._created_day = lambda entry: ""  # type: ignore[assignment]
    data = json.loads(Path(args.file).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = [data]
    if args.half != "all":
        keep = set(halves(data)[args.half])
        data = [s for i, s in enumerate(data) if str(s.get("sample_id", i)) in keep]
    base = load_settings(Path(tempfile.gettempdir()), env={})
    overrides = parse_overrides(args.set)
    settings = base
    for section, values in overrides.items():
        current = getattr(settings, section)
        typed = {k: type(getattr(current, k))(v) for k, v in values.items()}
        settings = replace(settings, **{section: replace(current, **typed)})
    experiment = Experiment(
        window=args.window,
        window_mode=args.window_mode,
        context_weight=args.context_weight,
        neighbours=args.neighbours,
        dates=args.dates,
        date_boost=args.date_boost,
        multihop=args.multihop,
        seeds=args.seeds,
        seed_terms=args.seed_terms,
        keep=args.keep,
        session_cap=args.session_cap,
    )
    engine = args.engine or ("product" if experiment == Experiment() else "bench")
    if engine == "product" and experiment != Experiment():
        raise SystemExit("the experiment switches need --engine bench")
    if args.layout == "conversation" and engine == "product" and (
        args.shuffle or args.no_date_text
    ):
        raise SystemExit("--shuffle and --no-date-text need --layout memory")
    options = Options(
        engine=engine,
        experiment=experiment,
        with_date=not args.no_date_text,
        shuffle=args.shuffle,
        layout=args.layout,
        cache=Path(args.cache) if args.cache else None,
    )

    from memcli.index.embedder import SentenceTransformerEmbedder

    shared = SentenceTransformerEmbedder(settings.index.model, settings.index.batch_size)
    started = time.perf_counter()
    tracks = ["a", "b"] if args.track == "both" else [args.track]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(args.workdir) if args.workdir else Path(tmp)
        runs = {
            f"track_{t}": evaluate(data, t, settings, workdir, lambda: shared, options)
            for t in tracks
        }
    compared = json.loads(Path(args.compare).read_text()) if args.compare else None
    report: dict = {}
    for name, run in runs.items():
        summary = summarize(run["questions"], args.bootstrap, args.seed)
        report[name] = {
            "overall": summary.get("overall", {}),
            "by_category": {k: v for k, v in summary.items() if k != "overall"},
            "skipped_no_evidence": run["skipped_no_evidence"],
        }
        if compared and name in compared:
            report[name]["delta"] = paired(
                compared[name]["questions"], run["questions"], args.bootstrap, args.seed
            )
            report[name]["top10_overlap"] = overlap(compared[name]["questions"], run["questions"])
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["conversations"] = [str(s.get("sample_id", i)) for i, s in enumerate(data)]
    report["half"] = args.half
    report["engine"] = engine
    report["experiment"] = experiment.describe()
    report["settings"] = {k: v for k, v in overrides.items()}
    report["options"] = {
        "with_date": options.with_date,
        "shuffle": options.shuffle,
        "layout": options.layout,
        "date_spellings": not args.no_date_spellings,
    }
    report["bootstrap"] = {"resamples": args.bootstrap, "seed": args.seed}
    if args.save:
        Path(args.save).write_text(json.dumps(report | {n: report[n] | runs[n] for n in runs}))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name in runs:
        summary = {"overall": report[name]["overall"], **report[name]["by_category"]}
        print()
        print(table(summary, f"{name.replace('_', ' ').title()}  (95% intervals)"))
        if "delta" in report[name]:
            print()
            print(table(report[name]["delta"], f"difference to {args.compare} (paired)"))
            agree = report[name]["top10_overlap"]
            if agree:
                print(
                    f"top-10 agreement with {args.compare}: {agree['mean']:.1f}% of ids shared"
                    f" on average, identical top 10 for {agree['identical']:.1f}% of"
                    f" {agree['n']} questions, same first hit for {agree['same_first']:.1f}%"
                )
    print(
        f"\n{', '.join(report['conversations'])} ({args.half}); engine {engine}: "
        f"{report['experiment']}; bootstrap {args.bootstrap} resamples, seed {args.seed}; "
        f"{report['seconds']} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
