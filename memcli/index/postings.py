"""The keyword side of the local index (memcli.index.local): BM25 postings of its rows,
a base KeywordIndex for the rows of the generation on disk and a tail for the rows
appended since, with each row's length. Dead rows (tombstones: the row numbering is the
local index's) are left out of the scores and of the statistics (document count,
average length, document frequencies), so a score is that of an index holding only the
live entries.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from memcli.index.keyword import KeywordIndex, idf
from memcli.index.tokenize import tokenize


class Postings:
    """BM25 (k1, b) over rows [0, n): `base` (a generation's postings) then the tail."""

    def __init__(self, k1: float, b: float, base: KeywordIndex | None = None) -> None:
        self.k1, self.b = k1, b
        self.base = base
        self.nbase = 0 if base is None else base.size  # rows [0, nbase) are in `base`
        self.vocab: dict[str, int] = {} if base is None else dict(base.vocab)
        self.doc_len = (
            np.zeros(0, dtype=np.float32)
            if base is None
            else base.doc_len.astype(np.float32, copy=True)
        )
        self.tail: list[np.ndarray] = []  # term ids of rows [nbase, n)
        self._tail_kw: KeywordIndex | None = None
        self._encoded: dict[str, np.ndarray] = {}  # keyword text -> term ids (memo)
        self._norm_memo: tuple[tuple, np.ndarray] | None = None  # ((state, n, live), norm)

    def grow(self, size: int) -> None:
        """Room for `size` rows."""
        self.doc_len = np.resize(self.doc_len, size)

    def add(self, start: int, texts: list[str]) -> None:
        """The keyword texts of rows start, start+1, ... (appended to the tail)."""
        encoded = [self._term_ids(text) for text in texts]
        self.doc_len[start : start + len(encoded)] = [len(e) for e in encoded]
        self.tail.extend(encoded)
        self._tail_kw = None

    def scores(
        self, terms: Mapping[str, float], n: int, alive: np.ndarray, live: int, state: object = None
    ) -> np.ndarray:
        """BM25 of every row for the query's terms and their weights
        (memcli.index.tokenize.query_terms), 0 for dead rows; `alive`: the live
        rows (the first `n`), `live` of them. `state`: what changes whenever the rows do
        (the local index's version): the length normalization of every row, which
        depends on the rows alone, is then computed once per state, not per query."""
        result = np.zeros(n, dtype=np.float32)
        if live == 0:
            return result
        dead = live != n
        norm = self._norm(n, alive, live, state)
        for term, qtf in terms.items():
            found = self._postings(term, alive, dead)
            if found is None:
                continue
            docs, tfs = found
            df = np.int64(len(docs))
            result[docs] += qtf * idf(live, df) * tfs * (self.k1 + 1.0) / (tfs + norm[docs])
        return result

    def ideal(self, terms: Mapping[str, float], alive: np.ndarray, live: int) -> float:
        """The query's keyword mass: the BM25 score of a row of average length holding
        each of its terms once, Σ qtf · idf (a term no live row holds at the rarest
        idf): the keyword side's 1.0 (memcli.logic.relevance.keyword_share)."""
        if live == 0:
            return 0.0
        dead = live != len(alive)
        total = 0.0
        for term, qtf in terms.items():
            found = self._postings(term, alive, dead)
            df = 0 if found is None else len(found[0])
            total += qtf * float(idf(live, df))
        return total

    def _postings(
        self, term: str, alive: np.ndarray, dead: bool
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The live rows holding `term` and its frequency in each (None: none)."""
        t = self.vocab.get(term)
        if t is None:
            return None
        parts = []
        for index, offset in ((self.base, 0), (self._tail_index(), self.nbase)):
            if index is not None and t < len(index.indptr) - 1:
                lo, hi = index.indptr[t], index.indptr[t + 1]
                if hi > lo:
                    docs = index.docs[lo:hi]
                    parts.append((docs + offset if offset else docs, index.tfs[lo:hi]))
        if not parts:
            return None
        if len(parts) == 1:
            docs, tfs = parts[0]
        else:
            docs = np.concatenate([p[0] for p in parts])
            tfs = np.concatenate([p[1] for p in parts])
        if dead:
            keep = alive[docs]
            docs, tfs = docs[keep], tfs[keep]
        return (docs, tfs) if len(docs) else None

    def _norm(self, n: int, alive: np.ndarray, live: int, state: object) -> np.ndarray:
        """k1 · (1 - b + b · length / average length) of rows [0, n), the average over
        the live rows."""
        key = (state, n, live)
        if state is not None and self._norm_memo is not None and self._norm_memo[0] == key:
            return self._norm_memo[1]
        doc_len = self.doc_len[:n]
        avgdl = float((doc_len[alive[:n]] if live != n else doc_len).mean()) or 1.0
        norm = self.k1 * (1.0 - self.b + self.b * doc_len / avgdl)
        self._norm_memo = (key, norm)
        return norm

    def compacted(
        self, new_row: np.ndarray, count: int, n: int, alive: np.ndarray, live: int
    ) -> KeywordIndex:
        """One CSR over the base and tail postings of the rows kept (`new_row`: row ->
        its new number, -1 when dropped; `count` rows kept), terms no live row uses
        dropped."""
        terms, docs, tfs = [], [], []
        for index, offset in ((self.base, 0), (self._tail_index(), self.nbase)):
            if index is None or not len(index.docs):
                continue
            lengths = np.diff(index.indptr)
            terms.append(np.repeat(np.arange(len(lengths), dtype=np.int64), lengths))
            docs.append(index.docs.astype(np.int64) + offset)
            tfs.append(index.tfs)
        if terms:
            term = np.concatenate(terms)
            doc = new_row[np.concatenate(docs)]
            tf = np.concatenate(tfs)
            keep = doc >= 0
            if n != live:
                keep &= alive[:n][np.concatenate(docs)]
            term, doc, tf = term[keep], doc[keep], tf[keep]
        else:
            term = np.zeros(0, dtype=np.int64)
            doc = np.zeros(0, dtype=np.int64)
            tf = np.zeros(0, dtype=np.float32)
        words = list(self.vocab)
        used = np.zeros(len(words), dtype=bool)
        used[term] = True
        renumber = np.cumsum(used) - 1
        vocab = {w: int(renumber[t]) for t, w in enumerate(words) if used[t]}
        term = renumber[term]
        order = np.lexsort((doc, term))
        term, doc, tf = term[order], doc[order], tf[order]
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=len(vocab)), out=indptr[1:])
        doc_len = np.zeros(count, dtype=np.float32)
        rows = np.flatnonzero(new_row >= 0)
        doc_len[new_row[rows]] = np.where(alive[rows], self.doc_len[rows], 0)
        return KeywordIndex(
            vocab, indptr, doc.astype(np.int32), tf.astype(np.float32), doc_len, self.k1, self.b
        )

    def _tail_index(self) -> KeywordIndex | None:
        if not self.tail:
            return None
        if self._tail_kw is None or self._tail_kw.size != len(self.tail):
            self._tail_kw = KeywordIndex.from_encoded(self.tail, self.vocab)
        return self._tail_kw

    def _term_ids(self, text: str) -> np.ndarray:
        found = self._encoded.get(text)
        if found is None:
            if len(self._encoded) > 500_000:
                self._encoded = {}
            vocab = self.vocab
            terms = [vocab.setdefault(term, len(vocab)) for term in tokenize(text)]
            found = self._encoded[text] = np.array(terms, dtype=np.int64)
        return found
