"""EXPERIMENTAL: what is embedded of an entry and of a query, measured on the personal
benchmark (../shared/bench/personal/) by halves. Not product code (issue 38, item 5).

    python bench/paraphrase_exp.py [--bench ../shared/bench/personal] [--order score|rank|both]
                                   [--only NAME ...] [--json] [--words]

Each variant replaces the semantic signal's inputs and nothing else: the texts embedded
for an entry (one or several vectors; an entry's cosine is the max over them, or their
mean) and the texts embedded for a query (one or several; max or mean over them). The
keyword side, the candidate pool (each retriever's top `candidate_pool`) and the ranking
formula (`memcli.logic.search.rank`, default settings) are the product's: the variant
`base` reproduces `Memory.search`. Vectors come from the bundled all-MiniLM-L6-v2
(sentence-transformers), embedded once per text.

Orders: `rank` is the order `Memory.search` returns; `score` sorts its hits by their
score, which is what the command line shows when the workspace reads another layer (the
per-user workspace exists: memcli.services.layers sorts the merged hits by score), and
so what `../shared/bench/personal/run.py` measures on such a machine.

Halves: `tune` = the odd query numbers (q001, q003, ...), `report` = the even ones,
fixed before any figure was seen. Figures: top-1 / top-3 / R@5 of the answerable
queries, the paraphrase kind's top-1 / top-3, and the share of off-topic queries that
come back empty; `en` restricts to the English queries (the bundled model reads no
Chinese, and issue 38 item 3 takes its vote away there).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MEMCLI_NO_DAEMON", "1")

from memcli.core.filters import expand_query  # noqa: E402
from memcli.core.models import Entry  # noqa: E402
from memcli.index.embedder import SentenceTransformerEmbedder  # noqa: E402
from memcli.logic.search import Signals  # noqa: E402
from memcli.services.memory import Memory  # noqa: E402
from memcli.services.search import SearchService  # noqa: E402

# ---------------------------------------------------------------- text transforms

_THIRD = re.compile(r"^([A-Z][a-z]+s)\b")  # "Uses", "Prefers", "Drinks"
_NOT_VERB = {"Is", "Has", "Was", "Process", "Access", "Status", "Ops", "Docs"}
_IRREGULAR = {"Has": "have", "Is": "am", "Does": "do", "Goes": "go"}
_ASKER = r"(?:what|which|how|who|whom|whose|where|when|why)"
_AUX = r"(?:do|does|did|should|shall|can|could|would|will|must|am|is|are|was|were|have|has)"
_PRONOUN = r"(?:I|we|me|my|our|us|you|your)"
_CLAUSE = re.compile(r"\s*(?:;|\s[—–-]\s|:\s|\.\s+(?=[A-Z])|；|。)\s*")
_STOP = set(
    re.findall(
        r"\w+",
        """a an the and or but if of to in on at by for with from about into over under up down
    out off is are was were be been being am do does did doing have has had having can could
    should would will shall may might must i me my mine we us our ours you your yours he him
    his she her it its they them their this that these those what which who whom whose where
    when why how there here not no so than too very just also any some all each""",
    )
)


def with_subject(text: str, subject: str) -> str:
    """A subjectless note in the third person with a subject: "Uses neovim" -> "The user
    uses neovim" (subject "The user"), "I use neovim" (subject "I"); other texts as
    they are."""
    m = _THIRD.match(text)
    word = m.group(1) if m else text.split(" ", 1)[0]
    if not m and word not in _IRREGULAR:
        return text
    if word in _NOT_VERB - set(_IRREGULAR) or word.endswith("ss"):
        return text
    if subject != "I":
        return f"{subject} {word.lower()}{text[len(word) :]}"
    if word in _IRREGULAR:
        verb = _IRREGULAR[word]
    elif word.endswith(("shes", "ches", "xes", "zes")):
        verb = word[:-2].lower()
    else:
        verb = word[:-1].lower()
    return f"I {verb}{text[len(word) :]}"


def clauses(text: str) -> list[str]:
    """The clauses of a note of several ("Uses neovim with lazy.nvim; never suggest VS Code
    settings" -> both halves), [] for a note of one; clauses under three words dropped."""
    parts = [p.strip() for p in _CLAUSE.split(text) if p and p.strip()]
    parts = [p for p in parts if len(p.split()) >= 3 or (len(p) >= 8 and not p.isascii())]
    return parts if len(parts) > 1 else []


def without_asker(query: str) -> str:
    """The question without its generic asker words: "what editor do I use" -> "editor
    use"."""
    s = re.sub(rf"^\s*{_ASKER}\b(?:\s+{_AUX})?(?:\s+{_PRONOUN})?\b", "", query, flags=re.I)
    s = re.sub(rf"\b{_AUX}\s+{_PRONOUN}\b", " ", s, flags=re.I)
    s = re.sub(rf"\b{_PRONOUN}\b", " ", s, flags=re.I)
    s = re.sub(r"\s+", " ", s).strip(" ?,")
    return s or query


def content_words(query: str) -> str:
    """The query's words that are not English function words."""
    kept = [w for w in re.findall(r"[\w'./+-]+", query) if w.lower() not in _STOP]
    return " ".join(kept) or query


# ---------------------------------------------------------------- variants


class Variant:
    """Texts embedded for an entry and for a query, and how their cosines combine
    ("max" or "mean" over the entry's texts, then over the query's); `feedback`: (k, beta)
    adds beta x the mean vector of the query's k nearest entries to the query vector, its
    cosines rescaled so that the best one is the plain query's (the floor's evidence)."""

    def __init__(
        self,
        entry: Callable[[Entry, str], list[str]] | None = None,
        query: Callable[[str], list[str]] | None = None,
        entry_combine: str = "max",
        query_combine: str = "max",
        feedback: tuple[int, float] | None = None,
    ) -> None:
        self.entry = entry or (lambda e, section: [e.text])
        self.query = query or (lambda q: [q])
        self.entry_combine = entry_combine
        self.query_combine = query_combine
        self.feedback = feedback


VARIANTS: dict[str, Variant] = {
    "base": Variant(),
    "type": Variant(entry=lambda e, s: [f"{e.type}: {e.text}"]),
    "section": Variant(entry=lambda e, s: [f"{s}: {e.text}"]),
    "max(text, section+text)": Variant(entry=lambda e, s: [e.text, f"{s}: {e.text}"]),
    "mean(text, section+text)": Variant(
        entry=lambda e, s: [e.text, f"{s}: {e.text}"], entry_combine="mean"
    ),
    "the user + text": Variant(entry=lambda e, s: [with_subject(e.text, "The user")]),
    "I + text": Variant(entry=lambda e, s: [with_subject(e.text, "I")]),
    "max(text, I + text)": Variant(entry=lambda e, s: [e.text, with_subject(e.text, "I")]),
    "max(text, clauses)": Variant(entry=lambda e, s: [e.text, *clauses(e.text)]),
    "query without asker": Variant(query=lambda q: [without_asker(q)]),
    "max(query, without asker)": Variant(query=lambda q: [q, without_asker(q)]),
    "mean(query, without asker)": Variant(
        query=lambda q: [q, without_asker(q)], query_combine="mean"
    ),
    "max(query, content words)": Variant(query=lambda q: [q, content_words(q)]),
    "mean(query, content words)": Variant(
        query=lambda q: [q, content_words(q)], query_combine="mean"
    ),
    "feedback k3 0.3": Variant(feedback=(3, 0.3)),
}


#: (a question's word, a word of the note that answers it) and unrelated pairs: does the
#: model tell a synonym from noise word by word? (`--words`)
WORD_PAIRS = [
    ("editor", "neovim"),
    ("editor", "vim"),
    ("tongue", "German"),
    ("tongue", "language"),
    ("infrastructure", "terraform"),
    ("time off", "vacation"),
    ("hallucinated", "invented"),
    ("sockets", "PgBouncer"),
    ("editor", "coffee"),
    ("tongue", "coffee"),
]


class Vectors:
    """The bundled model's vectors, each text embedded once."""

    def __init__(self) -> None:
        self.model = SentenceTransformerEmbedder()
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        if missing:
            self.known.update(zip(missing, self.model.embed(missing), strict=True))
        return np.stack([self.known[t] for t in texts])


def _combine(scores: np.ndarray, how: str, axis: int) -> np.ndarray:
    return np.nanmax(scores, axis=axis) if how == "max" else np.nanmean(scores, axis=axis)


class VariantSearch(SearchService):
    """SearchService whose semantic signal is the variant's; everything else as is."""

    def use(self, variant: Variant, vectors: Vectors, sections: dict[str, str]) -> None:
        entries = self.store.entries(include_archived=True)
        texts = [variant.entry(e, sections.get(e.id, "")) for e in entries]
        width = max(len(t) for t in texts)
        cube = np.full((len(entries), width, vectors.model.dim), np.nan, dtype=np.float32)
        for row, own in enumerate(texts):
            cube[row, : len(own)] = vectors(own)
        self.row_of = {e.id: row for row, e in enumerate(entries)}
        self.cube, self.variant, self.vectors = cube, variant, vectors

    def cosines(self, query: str) -> np.ndarray:
        """Each entry's semantic score for `query` (by entry row)."""
        variant = self.variant
        qv = self.vectors(variant.query(query))
        per_text = np.einsum("nvd,md->nvm", self.cube, qv)  # NaN where no text
        scores = _combine(_combine(per_text, variant.entry_combine, 1), variant.query_combine, 1)
        if variant.feedback:
            k, beta = variant.feedback
            top = np.argsort(-np.nan_to_num(scores, nan=-1.0))[:k]
            moved = qv[0] + beta * self.cube[top, 0].mean(0)
            moved /= np.linalg.norm(moved)
            fed = _combine(self.cube @ moved, variant.entry_combine, 1)
            scores = fed * (np.nanmax(scores) / np.nanmax(fed))
        return scores

    def signals(self, query, mode, view, allowed, allowed_ids, neighbours, periods=None):  # noqa: ANN001, ANN201, ARG002 - SearchService.signals's
        pool = self.settings.search.candidate_pool
        keyword_query = expand_query(query, self.settings.synonyms)
        found = self.indexer.backend.keyword_search(keyword_query, pool, allowed_ids)
        kw_top = view.positions(found.ids)
        by_row = self.cosines(query)
        semantic = by_row[[self.row_of[i] for i in view.ids]].astype(np.float32)
        ranked = np.argsort(-np.where(allowed, semantic, -np.inf), kind="stable")[:pool]
        chosen = np.zeros(len(allowed), dtype=bool)
        chosen[ranked[allowed[ranked]]] = True
        chosen[kw_top] = True
        positions = np.flatnonzero(chosen)
        ids = [view.ids[p] for p in positions.tolist()]
        keyword = self.indexer.backend.keyword_scores(keyword_query, ids)
        return Signals(positions, semantic[positions], keyword)


# ---------------------------------------------------------------- scoring


def sections_of(ws: Path) -> dict[str, str]:
    """Entry id -> the `## ` section it is under."""
    found: dict[str, str] = {}
    for name in ("memory.md", "learnings.md"):
        section = ""
        for line in (ws / name).read_text(encoding="utf-8").splitlines():
            if line.startswith("## "):
                section = line[3:].strip()
            m = re.match(r"- .*<!-- id=(\w+)", line)
            if m:
                found[m.group(1)] = section
    return found


def score(query: dict, ids: list[str]) -> dict[str, float]:
    relevant = query["relevant"]
    if not relevant:
        return {"empty": float(not ids)}
    return {
        "top1": float(ids[:1] == [query["primary"]]),
        "top3": float(any(i in relevant for i in ids[:3])),
        "r5": len(set(relevant) & set(ids[:5])) / len(set(relevant)),
    }


def summary(rows: list[dict]) -> dict[str, float | None]:
    def mean(values: list[float]) -> float | None:
        return round(100 * sum(values) / len(values), 1) if values else None

    on = [r for r in rows if "top1" in r]
    para = [r for r in on if r["kind"] == "paraphrase"]
    return {
        "top1": mean([r["top1"] for r in on]),
        "top3": mean([r["top3"] for r in on]),
        "r5": mean([r["r5"] for r in on]),
        "para_top1": mean([r["top1"] for r in para]),
        "para_top3": mean([r["top3"] for r in para]),
        "offtopic_empty": mean([r["empty"] for r in rows if "empty" in r]),
    }


def measure(mem: Memory, queries: list[dict], orders: Sequence[str]) -> dict[str, dict]:
    """order -> half ("tune", "report", "tune en", "report en") -> figures."""
    rows: dict[str, list[dict]] = {order: [] for order in orders}
    for q in queries:
        hits = mem.search(q["query"], limit=10, touch=False)
        for order in orders:
            ranked = sorted(hits, key=lambda h: -h.score) if order == "score" else hits
            found = score(q, [h.entry.id for h in ranked])
            rows[order].append({**found, "kind": q["kind"], "q": q})
    result: dict[str, dict] = {}
    for order in orders:
        result[order] = {}
        for half, parity in (("tune", 1), ("report", 0)):
            mine = [r for r in rows[order] if int(r["q"]["id"][1:]) % 2 == parity]
            result[order][half] = summary(mine)
            result[order][f"{half} en"] = summary([r for r in mine if r["q"]["lang"] == "en"])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default=str(ROOT.parent / "shared" / "bench" / "personal"))
    ap.add_argument("--order", choices=("score", "rank", "both"), default="both")
    ap.add_argument("--only", nargs="*", metavar="NAME", help=f"of: {', '.join(VARIANTS)}")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--words", action="store_true", help="only the WORD_PAIRS cosines")
    args = ap.parse_args(argv)
    if args.words:
        vectors = Vectors()
        left, right = zip(*WORD_PAIRS, strict=True)
        cosines = (vectors(left) * vectors(right)).sum(axis=1)
        for (a, b), cosine in zip(WORD_PAIRS, cosines.tolist(), strict=True):
            print(f"{cosine:.3f}  {a} / {b}")
        return 0
    bench = Path(args.bench)
    queries = [json.loads(line) for line in (bench / "queries.jsonl").open() if line.strip()]
    names = args.only or list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s): {', '.join(unknown)}")
    orders = ("score", "rank") if args.order == "both" else (args.order,)
    tmp = Path(tempfile.mkdtemp(prefix="paraphrase-exp-"))
    try:
        ws = tmp / "ws"
        shutil.copytree(bench / "ws", ws)
        mem = Memory(ws)
        mem.index()
        search = VariantSearch(mem.store, mem.index_manager, mem.settings)
        mem._searcher = search  # noqa: SLF001 - the experiment's signals, the product's rest
        vectors, sections = Vectors(), sections_of(ws)
        results: dict[str, dict] = {}
        for name in names:
            search.use(VARIANTS[name], vectors, sections)
            for order, got in measure(mem, queries, orders).items():
                results[f"{name} [{order}]"] = got
                if not args.json:
                    print(_line(f"{name} [{order}]", got), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


def _line(name: str, got: dict[str, dict]) -> str:
    cells = [f"{name:36}"]
    for half in ("tune", "report"):
        a, en = got[half], got[f"{half} en"]
        cells.append(
            f"{half}: top-3 {a['top3']:5.1f} para top-1/3 {a['para_top1']:5.1f}/"
            f"{a['para_top3']:5.1f} en top-3 {en['top3']:5.1f} off {a['offtopic_empty']:5.1f}"
        )
    return " | ".join(cells)


if __name__ == "__main__":
    sys.exit(main())
