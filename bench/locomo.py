"""Retrieval benchmark on LoCoMo-format conversations, through memcli's own search path.

One workspace per conversation, written as memory.md like a user's, indexed and searched
with `memcli.Memory` (the API the CLI uses). Track A: every dialogue turn is an entry;
Track B: every observation is an entry. Adversarial questions (category 5) are excluded.
Metric and data quirks: ../shared/bench/README.md.

    python bench/locomo.py [FILE] [--track a|b|both] [--json] [--set search.key=value ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memcli.services.memory import Memory  # noqa: E402
from memcli.store.config import Settings, load_settings  # noqa: E402
from memcli.store.markdown import format_meta  # noqa: E402

DEFAULT_FILE = ROOT.parent / "shared" / "bench" / "locomo" / "locomo_public.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)


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


def turn_text(turn: dict) -> str:
    text = f"({turn['date']}) {turn['speaker']}: {turn.get('text', '')}".strip()
    if turn.get("blip_caption"):
        text += f" [shared a photo: {turn['blip_caption']}]"
    return " ".join(text.split())


def write_workspace(path: Path, items: list[tuple[str, str, str | None, str | None]]) -> None:
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


def track_items(sample: dict, track: str) -> list[tuple[str, str, str | None, str | None]]:
    turns = turns_of(sample)
    if track == "a":
        return [
            (
                normalise_id(t["dia_id"]) or t["dia_id"],
                turn_text(t),
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
                body = f"({entry_date}) {speaker}: {text}" if entry_date else f"{speaker}: {text}"
                items.append(
                    (
                        f"O{len(items) + 1}",
                        " ".join(body.split()),
                        parse_session_date(entry_date),
                        ",".join(ids),
                    )
                )
    return items


# ------------------------------------------------------------------ evaluation


def evaluate(
    data: list[dict], track: str, settings: Settings, workdir: Path, embedder_factory
) -> dict:
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    skipped = 0
    for sample in data:
        known = {normalise_id(t["dia_id"]) for t in turns_of(sample)}
        items = track_items(sample, track)
        ws = workdir / f"{sample.get('sample_id', 'conv')}-{track}"
        write_workspace(ws, items)
        mem = Memory(
            ws, settings=settings, embedder_factory=embedder_factory, notify=lambda m: None
        )
        mem.index()
        to_dia = {
            entry_id: (src.split(",") if src else [entry_id]) for entry_id, _, _, src in items
        }
        for question in sample.get("qa", []):
            category = int(question.get("category", 0))
            if category == 5:
                continue
            evidence = evidence_of(question, known)
            if not evidence:
                skipped += 1
                continue
            hits = mem.search(str(question["question"]), limit=10, touch=False)
            ranked: list[str] = []
            for hit in hits:
                for dia in to_dia.get(hit.entry.id, [hit.entry.id]):
                    if dia not in ranked:
                        ranked.append(dia)
            entry_ids = [hit.entry.id for hit in hits]
            metrics = score(ranked, entry_ids, to_dia, set(evidence))
            for bucket in ("overall", CATEGORIES.get(category, str(category))):
                counts[bucket] += 1
                for name, value in metrics.items():
                    sums[bucket][name] += value
    result = {
        bucket: {name: round(100 * total / counts[bucket], 2) for name, total in values.items()}
        | {"n": counts[bucket]}
        for bucket, values in sums.items()
    }
    return {
        "overall": result.get("overall", {}),
        "by_category": {k: v for k, v in result.items() if k != "overall"},
        "skipped_no_evidence": skipped,
    }


def score(ranked_dia: list[str], entry_ids: list[str], to_dia: dict, evidence: set[str]) -> dict:
    """R@k over the dialogue ids covered by the top-k entries; hit@10; MRR@10."""
    metrics = {}
    for k in KS:
        covered = {d for entry_id in entry_ids[:k] for d in to_dia.get(entry_id, [entry_id])}
        metrics[f"R@{k}"] = len(covered & evidence) / len(evidence)
    top10 = entry_ids[:10]
    first = next(
        (rank for rank, e in enumerate(top10, 1) if set(to_dia.get(e, [e])) & evidence), None
    )
    metrics["hit@10"] = 1.0 if first else 0.0
    metrics["MRR@10"] = 1.0 / first if first else 0.0
    return metrics


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", default=str(DEFAULT_FILE))
    parser.add_argument("--track", choices=["a", "b", "both"], default="both")
    parser.add_argument("--json", action="store_true", help="print only a JSON object")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--workdir", help="keep workspaces (and their embedding caches) here")
    args = parser.parse_args(argv)

    data = json.loads(Path(args.file).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = [data]
    base = load_settings(Path(tempfile.gettempdir()), env={})
    overrides = parse_overrides(args.set)
    settings = base
    for section, values in overrides.items():
        current = getattr(settings, section)
        typed = {k: type(getattr(current, k))(v) for k, v in values.items()}
        settings = replace(settings, **{section: replace(current, **typed)})

    from memcli.index.embedder import SentenceTransformerEmbedder

    shared = SentenceTransformerEmbedder(settings.index.model, settings.index.batch_size)
    started = time.perf_counter()
    tracks = ["a", "b"] if args.track == "both" else [args.track]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(args.workdir) if args.workdir else Path(tmp)
        report = {
            f"track_{t}": evaluate(data, t, settings, workdir, lambda: shared) for t in tracks
        }
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["conversations"] = len(data)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name in (f"track_{t}" for t in tracks):
        print(
            f"\n{name.replace('_', ' ').title()}  ({report[name]['overall'].get('n', 0)} questions)"
        )
        print(f"{'':14}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'hit@10':>8}{'MRR@10':>8}{'n':>6}")
        rows = {"overall": report[name]["overall"], **report[name]["by_category"]}
        for bucket, m in rows.items():
            print(
                f"{bucket:14}{m['R@1']:>7.1f}{m['R@5']:>7.1f}{m['R@10']:>7.1f}"
                f"{m['hit@10']:>8.1f}{m['MRR@10']:>8.1f}{m['n']:>6}"
            )
    print(f"\n{report['conversations']} conversations, {report['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
