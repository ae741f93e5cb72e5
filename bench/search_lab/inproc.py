"""The personal benchmark's runner in one process: each query through `Memory.search`
(what `memcli search --json --limit 10 --no-touch` calls), scored by the runner's own
functions. Seconds instead of minutes, so an idea in memcli's code is measured on every
persona before it is kept; the figures equal the runner's (checked on persona 1).

    python bench/search_lab/inproc.py PERSONA_DIR [PERSONA_DIR ...] [--json OUT]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT.parent / "shared" / "bench" / "personal"))
_HOME = tempfile.mkdtemp()
os.environ.update(
    XDG_DATA_HOME=f"{_HOME}/d", XDG_CONFIG_HOME=f"{_HOME}/c", MEMCLI_NO_DAEMON="1"
)
import run as R  # noqa: E402  (the personal benchmark's runner: its scoring)

from memcli.services.memory import Memory  # noqa: E402

KINDS = ("lexical", "paraphrase", "zh", "cross", "temporal", "agent")


def evaluate(folder: Path) -> dict:
    """The runner's figures for one persona folder (ws/ and queries.jsonl)."""
    ws = Path(tempfile.mkdtemp()) / "ws"
    shutil.copytree(folder / "ws", ws)
    mem = Memory(ws, notify=lambda m: None)
    mem.index()
    rows = []
    for q in R.load_queries(folder / "queries.jsonl"):
        hits = mem.search(q["query"], limit=R.LIMIT, touch=False)
        row = R.score_query(q, [h.entry.id for h in hits])
        rows.append(dict(row, kind=q["kind"], lang=q["lang"]))
    shutil.rmtree(ws.parent)
    by_kind = {k: R.aggregate([r for r in rows if r["kind"] == k]) for k in KINDS}
    off = [r for r in rows if "empty" in r]
    by_lang = {
        lang: R.aggregate([r for r in off if r["lang"] == lang]) for lang in ("en", "zh")
    }
    return dict(overall=R.aggregate(rows), by_kind=by_kind, by_lang=by_lang)


def line(name: str, d: dict) -> str:
    o, k = d["overall"], d["by_kind"]
    zh_empty = d["by_lang"]["zh"]["empty"]
    return (
        f"{name:10} top1 {o['top1']:5.1f} top3 {o['top3']:5.1f} para {k['paraphrase']['top3']:5.1f}"
        f" zh {k['zh']['top3']:5.1f} cross {k['cross']['top3']:5.1f}"
        f" temp {k['temporal']['top3']:5.1f} agent {k['agent']['top3']:5.1f}"
        f" lost {o['lost']:4.1f} empty {o['empty']:5.1f} zh-empty {zh_empty}"
    )


def main() -> None:
    args = sys.argv[1:]
    out = None
    if "--json" in args:
        i = args.index("--json")
        out, args = Path(args[i + 1]), args[:i] + args[i + 2 :]
    results = {}
    for folder in map(Path, args):
        results[folder.name] = evaluate(folder)
        print(line(folder.name, results[folder.name]), flush=True)
    if out:
        out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
