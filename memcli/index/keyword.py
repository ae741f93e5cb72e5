"""BM25 keyword index over entry text + keywords, stored as compact arrays.

Postings are kept in CSR form (term -> documents, term frequencies), so loading is one
`np.load` and scoring a query touches only the postings of its terms.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memcli.index.tokenize import query_terms


def idf(n: int, df: int) -> float:
    """BM25's inverse document frequency of a term `df` of `n` documents hold (0 of them:
    the rarest)."""
    return np.log(1.0 + (n - df + 0.5) / (df + 0.5))


@dataclass
class KeywordIndex:
    """BM25 (Okapi) over a fixed list of documents (positions 0..n-1)."""

    vocab: dict[str, int]
    indptr: np.ndarray  # int64, len(vocab)+1
    docs: np.ndarray  # int32 document positions
    tfs: np.ndarray  # float32 term frequencies
    doc_len: np.ndarray  # float32
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def build(
        cls, token_lists: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75
    ) -> KeywordIndex:
        vocab: dict[str, int] = {}
        encoded = [
            np.array([vocab.setdefault(term, len(vocab)) for term in tokens], dtype=np.int64)
            for tokens in token_lists
        ]
        return cls.from_encoded(encoded, vocab, k1, b)

    @classmethod
    def from_encoded(
        cls, encoded: Sequence[np.ndarray], vocab: dict[str, int], k1: float = 1.2, b: float = 0.75
    ) -> KeywordIndex:
        """From documents already turned into term ids of `vocab` (which may hold terms no
        document uses: they get empty postings and score nothing)."""
        n = len(encoded)
        doc_len = np.fromiter((len(t) for t in encoded), dtype=np.float32, count=n)
        terms = np.concatenate(encoded) if n else np.zeros(0, dtype=np.int64)
        docs_of_tokens = np.repeat(np.arange(n, dtype=np.int64), doc_len.astype(np.int64))
        # One (term, doc) pair per posting with its count, sorted by term then document.
        pairs, tfs = np.unique(terms * (n + 1) + docs_of_tokens, return_counts=True)
        posting_terms = pairs // (n + 1)
        docs = (pairs % (n + 1)).astype(np.int32)
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(posting_terms, minlength=len(vocab)), out=indptr[1:])
        return cls(vocab, indptr, docs, tfs.astype(np.float32), doc_len, k1, b)

    @property
    def size(self) -> int:
        return len(self.doc_len)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the query (0 where no term matches): a text
        weighs its terms as memcli.index.tokenize.query_terms says, a list of terms
        counts each occurrence once."""
        terms = _weighted(query)
        n = self.size
        result = np.zeros(n, dtype=np.float32)
        if n == 0:
            return result
        avgdl = float(self.doc_len.mean()) or 1.0
        norm = self.k1 * (1.0 - self.b + self.b * self.doc_len / avgdl)
        for term, qtf in terms.items():
            t = self.vocab.get(term)
            if t is None:
                continue
            lo, hi = self.indptr[t], self.indptr[t + 1]
            docs, tfs = self.docs[lo:hi], self.tfs[lo:hi]
            df = hi - lo
            result[docs] += qtf * idf(n, df) * tfs * (self.k1 + 1.0) / (tfs + norm[docs])
        return result

    def ideal(self, query: str | Sequence[str]) -> float:
        """The query's keyword mass, Σ qtf · idf over its terms (a term no document holds
        at the rarest idf): what a document of average length holding each term once
        scores, the keyword side's 1.0 (memcli.logic.search.keyword_share)."""
        terms = _weighted(query)
        n = self.size
        if n == 0:
            return 0.0
        total = 0.0
        for term, qtf in terms.items():
            t = self.vocab.get(term)
            df = 0 if t is None else int(self.indptr[t + 1] - self.indptr[t])
            total += qtf * float(idf(n, df))
        return total

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            vocab=np.array(json.dumps(list(self.vocab), ensure_ascii=False)),
            indptr=self.indptr,
            docs=self.docs,
            tfs=self.tfs,
            doc_len=self.doc_len,
            params=np.array([self.k1, self.b], dtype=np.float64),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> KeywordIndex:
        with np.load(path, allow_pickle=False) as data:
            vocab = {term: i for i, term in enumerate(json.loads(str(data["vocab"])))}
            k1, b = (float(x) for x in data["params"])
            return cls(vocab, data["indptr"], data["docs"], data["tfs"], data["doc_len"], k1, b)


def _weighted(query: str | Sequence[str]) -> Mapping[str, float]:
    """A query's terms and their weights: query_terms of a text, a list's counts."""
    return query_terms(query) if isinstance(query, str) else Counter(query)
