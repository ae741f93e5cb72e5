"""BM25 keyword index over entry text + keywords, stored as compact arrays.

Postings are kept in CSR form (term -> documents, term frequencies), so loading is one
`np.load` and scoring a query touches only the postings of its terms.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memcli.index.tokenize import tokenize


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
        postings: dict[str, list[tuple[int, int]]] = {}
        doc_len = np.zeros(len(token_lists), dtype=np.float32)
        for position, tokens in enumerate(token_lists):
            doc_len[position] = len(tokens)
            for term, count in Counter(tokens).items():
                postings.setdefault(term, []).append((position, count))
        vocab = {term: i for i, term in enumerate(postings)}
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        total = sum(len(p) for p in postings.values())
        docs = np.empty(total, dtype=np.int32)
        tfs = np.empty(total, dtype=np.float32)
        cursor = 0
        for i, plist in enumerate(postings.values()):
            for position, count in plist:
                docs[cursor] = position
                tfs[cursor] = count
                cursor += 1
            indptr[i + 1] = cursor
        return cls(vocab, indptr, docs, tfs, doc_len, k1, b)

    @property
    def size(self) -> int:
        return len(self.doc_len)

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the query (0 where no term matches)."""
        terms = tokenize(query) if isinstance(query, str) else list(query)
        n = self.size
        result = np.zeros(n, dtype=np.float32)
        if n == 0:
            return result
        avgdl = float(self.doc_len.mean()) or 1.0
        norm = self.k1 * (1.0 - self.b + self.b * self.doc_len / avgdl)
        for term, qtf in Counter(terms).items():
            t = self.vocab.get(term)
            if t is None:
                continue
            lo, hi = self.indptr[t], self.indptr[t + 1]
            docs, tfs = self.docs[lo:hi], self.tfs[lo:hi]
            df = hi - lo
            idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
            result[docs] += qtf * idf * tfs * (self.k1 + 1.0) / (tfs + norm[docs])
        return result

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
