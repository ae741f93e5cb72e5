"""EXPERIMENTAL retrieval for bench/locomo.py (issue 16) — not product code.

The candidates and signals of `Memory.search` recomputed here, from memcli's public
pieces (the tokenizer, the BM25 index, the embedder, and the ranking formula
`memcli.logic.search.rank` with the same settings), so that a change can be measured
before it exists in memcli:

- window: each turn embedded with the `window` turns just before it in the same session
  (the keyword side keeps the turn's own text); `window_mode` "replace" uses that vector
  as the semantic signal, "mean" averages the cosine of the own and the windowed vector,
  "pool" embeds nothing new: own vector + context_weight × the mean vector of the turns
  before, normalised;
- neighbours: "file" (today's product: the entries before and after in the same file and
  section), "session" (only within the same session of the conversation), "off";
- dates: the entry's `created` date added to its keyword text in three spellings
  ("2023-08-14", "14 August 2023", "August 2023");
- date_boost: a question naming a day, month or year ("on 9 November, 2022", "in August
  2023", "in 2022", "in December") adds this to the score of the entries created in that
  period (and brings them into the candidates);
- multihop: a second retrieval seeded from the first step's top `seeds` hits (their
  vectors averaged with the question's; their rarest terms added to the keyword query),
  fused as score₁ + multihop · score₂; the first step's top `keep` hits keep their places;
- session_cap: at most this many of the top hits from one session (the rest follow), so
  a question whose evidence spans sessions is not crowded out by one session's turns.

With every switch at its default the ranking is the product's: `locomo.py --engine bench`
reproduces `--engine product` (the figures are checked equal in bench/README.md).
Embeddings are cached on disk by text (`cache`), so a rerun embeds nothing.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memcli.core.models import Entry, utc_now
from memcli.index.keyword import KeywordIndex
from memcli.index.tokenize import tokenize
from memcli.logic.search import EntryArrays, Hit, Signals, rank
from memcli.store.config import Settings


@dataclass(frozen=True)
class Experiment:
    """The switches; the defaults are today's product."""

    window: int = 0
    window_mode: str = "replace"  # replace | mean | pool
    context_weight: float = 0.5  # pool: weight of the mean vector of the turns before
    neighbours: str = "file"  # file | session | off
    dates: bool = False
    date_boost: float = 0.0
    multihop: float = 0.0
    seeds: int = 3
    seed_terms: int = 8
    keep: int = 1
    session_cap: int = 0  # at most this many of the top hits from one session (0: no cap)

    def describe(self) -> str:
        default = Experiment()
        changed = [
            f"{name}={getattr(self, name)}"
            for name in self.__dataclass_fields__
            if getattr(self, name) != getattr(default, name)
        ]
        return ", ".join(changed) or "product defaults"


# ------------------------------------------------------------------ embedding cache


class VectorCache:
    """Vectors by sha256 of the text, in one .npz per model (a cache: delete at will)."""

    def __init__(self, directory: Path, embedder) -> None:  # noqa: ANN001 - memcli Embedder
        self.embedder = embedder
        directory.mkdir(parents=True, exist_ok=True)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", embedder.model_id).strip("-")
        self.path = directory / f"{slug}.npz"
        self.rows: dict[str, np.ndarray] = {}
        self.dirty = False
        if self.path.is_file():
            with np.load(self.path, allow_pickle=False) as data:
                for key, vec in zip(data["keys"].tolist(), data["vectors"], strict=True):
                    self.rows[key] = vec

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """As the index embeds them: the missing texts in chunks of 1024 (the model
        sorts a chunk by length)."""
        keys = [self.key(t) for t in texts]
        missing = list(
            dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self.rows)
        )
        for start in range(0, len(missing), 1024):
            chunk = missing[start : start + 1024]
            for text, vec in zip(chunk, self.embedder.embed(chunk), strict=True):
                self.rows[self.key(text)] = vec
            self.dirty = True
        return np.stack([self.rows[k] for k in keys]).astype(np.float32)

    def query(self, text: str) -> np.ndarray:
        """As a search embeds its query: alone."""
        key = "q:" + self.key(text)
        if key not in self.rows:
            self.rows[key] = self.embedder.embed([text])[0]
            self.dirty = True
        return self.rows[key]

    def save(self) -> None:
        if not self.dirty:
            return
        if self.path.is_file():  # another run may have added to it since we loaded it
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    for key, vec in zip(data["keys"].tolist(), data["vectors"], strict=True):
                        self.rows.setdefault(key, vec)
            except (OSError, ValueError, KeyError):
                pass
        keys = list(self.rows)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.stack([self.rows[k] for k in keys]))
        tmp.replace(self.path)
        self.dirty = False


# ------------------------------------------------------------------ dates

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTH = r"(January|February|March|April|May|June|July|August|September|October|November|December)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_PATTERNS = [  # (regex, kind) tried in order; a match's span is not tried again
    (re.compile(rf"\b{_YEAR}-(\d\d)-(\d\d)\b"), "iso"),
    (re.compile(rf"\b{_DAY}\s+{_MONTH},?\s*{_YEAR}\b", re.I), "dmy"),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s*{_YEAR}\b", re.I), "mdy"),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.I), "my"),
    (re.compile(rf"\b{_YEAR}\b"), "y"),
    (re.compile(rf"\b(?:in|during|of|last|this)\s+{_MONTH}\b", re.I), "m"),
]


def date_spellings(moment: dt.datetime | None) -> str:
    """'2023-08-14 14 August 2023 August 2023' (empty when undated)."""
    if moment is None:
        return ""
    month = calendar.month_name[moment.month]
    return f"{moment:%Y-%m-%d} {moment.day} {month} {moment.year} {month} {moment.year}"


def named_periods(question: str) -> list[tuple[int | None, int | None, int | None]]:
    """(year, month, day) of each date or period the question names; None = any."""
    found: list[tuple[int | None, int | None, int | None]] = []
    taken: list[tuple[int, int]] = []
    for pattern, kind in _PATTERNS:
        for match in pattern.finditer(question):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            g = match.groups()
            if kind == "iso":
                period = (int(g[0]), int(g[1]), int(g[2]))
            elif kind == "dmy":
                period = (int(g[2]), MONTHS[g[1].lower()], int(g[0]))
            elif kind == "mdy":
                period = (int(g[2]), MONTHS[g[0].lower()], int(g[1]))
            elif kind == "my":
                period = (int(g[1]), MONTHS[g[0].lower()], None)
            elif kind == "y":
                period = (int(g[0]), None, None)
            else:
                period = (None, MONTHS[g[0].lower()], None)
            taken.append(match.span())
            found.append(period)
    return found


def in_period(
    moment: dt.datetime | None, period: tuple[int | None, int | None, int | None]
) -> bool:
    if moment is None:
        return False
    year, month, day = period
    return (
        (year is None or moment.year == year)
        and (month is None or moment.month == month)
        and (day is None or moment.day == day)
    )


# ------------------------------------------------------------------ retriever


class Retriever:
    """One conversation's entries, searchable with the experiment's switches."""

    def __init__(
        self,
        entries: Sequence[Entry],
        sessions: dict[str, int],
        settings: Settings,
        experiment: Experiment,
        cache: VectorCache,
    ) -> None:
        self.entries = list(entries)
        self.settings = settings
        self.exp = experiment
        self.cache = cache
        cfg = settings.search
        n = len(self.entries)
        session = np.array([sessions.get(e.id, -1) for e in self.entries], dtype=np.int64)
        self.session = session
        self.created = [_created(e) for e in self.entries]
        # keyword side: the entry's own text (+ keywords, as the index does) (+ dates)
        kw_texts = []
        for e, moment in zip(self.entries, self.created, strict=True):
            words = [k.strip() for k in e.meta.get("kw", "").split(",") if k.strip()]
            text = e.text + ("\n" + " ".join(words) if words else "")
            if experiment.dates and moment is not None:
                text += "\n" + date_spellings(moment)
            kw_texts.append(text)
        self.keywords = KeywordIndex.build([tokenize(t) for t in kw_texts], cfg.bm25_k1, cfg.bm25_b)
        self.own = cache.passages([e.text for e in self.entries])
        if experiment.window > 0 and experiment.window_mode == "pool":
            # no new embedding: the own vector plus context_weight × the mean of the
            # vectors of the turns before it, normalised
            pooled = self.own.copy()
            for i in range(n):
                before = [
                    j
                    for j in range(i - 1, max(-1, i - 1 - experiment.window), -1)
                    if session[j] == session[i] and session[i] >= 0
                ]
                if before:
                    pooled[i] += experiment.context_weight * self.own[before].mean(axis=0)
            self.windowed = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        elif experiment.window > 0:
            windowed = []
            for i, e in enumerate(self.entries):
                before = [
                    self.entries[j].text
                    for j in range(i - 1, max(-1, i - 1 - experiment.window), -1)
                    if session[j] == session[i] and session[i] >= 0
                ]
                windowed.append("\n".join([e.text, *before]))
            self.windowed = cache.passages(windowed)
        else:
            self.windowed = None
        self.arrays = EntryArrays(self.entries)
        # the product borrows only in ordered logs; this engine's workspaces are one
        # memory.md written in conversation order, so adjacency is set here as it was
        same = np.array(
            [
                a.file == b.file and a.type == b.type
                for a, b in zip(self.entries, self.entries[1:], strict=False)
            ],
            dtype=bool,
        )
        self.arrays.near[:] = -1
        if n > 1:
            self.arrays.near[1:, 0] = np.where(same, np.arange(n - 1), -1)
            self.arrays.near[:-1, 1] = np.where(same, np.arange(1, n), -1)
        if experiment.neighbours == "session":
            near = self.arrays.near
            for side in (0, 1):
                other = near[:, side]
                cut = (other >= 0) & (session[np.maximum(other, 0)] != session)
                other[cut] = -1
        self.use_neighbours = experiment.neighbours != "off" and cfg.neighbour_weight > 0
        self.size = n

    # -- signals

    def _semantic_all(self, qvec: np.ndarray) -> np.ndarray:
        own = self.own @ qvec
        if self.windowed is None:
            return own
        win = self.windowed @ qvec
        return win if self.exp.window_mode == "replace" else (own + win) / 2.0

    def _signals(self, qvec: np.ndarray, kw_query: str | list[str], extra: np.ndarray) -> Signals:
        pool = self.settings.search.candidate_pool
        kw_all = self.keywords.scores(kw_query)
        sem_all = self._semantic_all(qvec)
        chosen = np.zeros(self.size, dtype=bool)
        chosen[_top(kw_all, pool, kw_all > 0)] = True
        chosen[_top(sem_all, pool, np.ones(self.size, dtype=bool))] = True
        chosen[extra] = True
        if self.use_neighbours:
            near = self.arrays.near[np.flatnonzero(chosen)].ravel()
            chosen[near[near >= 0]] = True
        positions = np.flatnonzero(chosen)
        return Signals(positions, sem_all[positions], kw_all[positions])

    def _rank(self, signals: Signals, now: dt.datetime) -> list[Hit]:
        return rank(
            self.entries,
            signals,
            settings=self.settings.search,
            mode="hybrid",
            now=now,
            neighbours=self.use_neighbours,
            limit=len(signals.positions),
            arrays=self.arrays,
        )

    # -- search

    def search(self, question: str, limit: int = 10) -> list[str]:
        """Entry ids of the top `limit` hits."""
        now = utc_now().replace(second=0)
        qvec = self.cache.query(question)
        periods = named_periods(question) if self.exp.date_boost else []
        dated = np.array(
            [i for i, m in enumerate(self.created) if any(in_period(m, p) for p in periods)],
            dtype=np.int64,
        )
        hits = self._rank(self._signals(qvec, question, dated), now)
        scores = {h.entry.id: h.score for h in hits}
        order = [h.entry.id for h in hits]
        if len(dated):
            in_time = {self.entries[i].id for i in dated}
            for entry_id in in_time & scores.keys():
                scores[entry_id] += self.exp.date_boost
        if self.exp.multihop > 0 and hits:
            scores = self._second_step(question, qvec, order, scores, now)
        # ties: the first step's order, then the entries only the second step found
        position = {entry_id: i for i, entry_id in enumerate(order)}
        ranked = sorted(scores, key=lambda e: (-scores[e], position.get(e, len(order)), e))
        if self.exp.session_cap > 0:
            ranked = self._diversified(ranked, limit)
        return ranked[:limit]

    def _diversified(self, ranked: list[str], limit: int) -> list[str]:
        """At most session_cap of the top `limit` from one session (the rest follow)."""
        index = {e.id: i for i, e in enumerate(self.entries)}
        taken: Counter[int] = Counter()
        first, rest = [], []
        for entry_id in ranked:
            session = int(self.session[index[entry_id]])
            if len(first) < limit and (session < 0 or taken[session] < self.exp.session_cap):
                first.append(entry_id)
                taken[session] += 1
            else:
                rest.append(entry_id)
        return first + rest

    def _second_step(
        self,
        question: str,
        qvec: np.ndarray,
        order: list[str],
        scores: dict[str, float],
        now: dt.datetime,
    ) -> dict[str, float]:
        first = sorted(order, key=lambda e: -scores[e])
        seeds = first[: self.exp.seeds]
        index = {e.id: i for i, e in enumerate(self.entries)}
        seed_pos = [index[s] for s in seeds]
        # dense: the question moved towards its first hits
        q2 = qvec + self.own[seed_pos].mean(axis=0)
        q2 = q2 / (np.linalg.norm(q2) or 1.0)
        # keyword: the question's terms plus the seeds' rarest terms
        asked = tokenize(question)
        counts: Counter[str] = Counter()
        for p in seed_pos:
            counts.update(set(tokenize(self.entries[p].text)) - set(asked))
        vocab, n = self.keywords.vocab, self.keywords.size
        idf = {}
        for term in counts:
            t = vocab.get(term)
            if t is None:
                continue
            df = int(self.keywords.indptr[t + 1] - self.keywords.indptr[t])
            idf[term] = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        extra = sorted(idf, key=lambda t: (-counts[t] * idf[t], t))[: self.exp.seed_terms]
        hits2 = self._rank(self._signals(q2, [*asked, *extra], np.zeros(0, np.int64)), now)
        second = {h.entry.id: h.score for h in hits2}
        floor = min(second.values()) if second else 0.0
        fused = {e: s + self.exp.multihop * second.get(e, floor) for e, s in scores.items()}
        for e, s in second.items():
            fused.setdefault(e, min(scores.values()) + self.exp.multihop * s)
        if self.exp.keep:
            top = max(fused.values()) + 1.0
            for rank_i, e in enumerate(first[: self.exp.keep]):
                fused[e] = top + (self.exp.keep - rank_i)
        return fused


def _created(entry: Entry) -> dt.datetime | None:
    try:
        return entry.created
    except ValueError:
        return None


def _top(scores: np.ndarray, k: int, mask: np.ndarray) -> np.ndarray:
    """Positions of the k highest scores where mask is true (as Memory.search takes them)."""
    candidates = np.flatnonzero(mask)
    if len(candidates) > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        candidates = candidates[part]
    return np.sort(candidates)
