"""BM25 keyword index over entry text + keywords, stored as compact arrays.

Postings are kept in CSR form (term -> documents, term frequencies), so loading is one
read of one file (a JSON header, then the arrays' bytes) and scoring a query touches
only the postings of its terms.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from memcli.core.records import record
from memcli.index.tokenize import query_terms


def idf(n: int, df: int) -> float:
    """BM25's inverse document frequency of a term `df` of `n` documents hold (0 of them:
    the rarest)."""
    return np.log(1.0 + (n - df + 0.5) / (df + 0.5))


@record
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
        scores, the keyword side's 1.0 (memcli.logic.relevance.keyword_share)."""
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
        """Write the index to `path` (through a temporary file), in the one-read form
        `load` takes: MAGIC, the length of a JSON header (the vocabulary, k1, b and each
        array's dtype and length), the header, then the arrays' bytes, each 8-aligned."""
        arrays = [np.ascontiguousarray(getattr(self, name), dtype) for name, dtype in _ARRAYS]
        head = json.dumps(
            {
                "vocab": list(self.vocab),
                "k1": self.k1,
                "b": self.b,
                "sizes": [len(a) for a in arrays],
            },
            ensure_ascii=False,
        ).encode("utf-8")
        head += b" " * (-(len(MAGIC) + 8 + len(head)) % 8)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as handle:
            handle.write(MAGIC + len(head).to_bytes(8, "little") + head)
            for array in arrays:
                data = array.tobytes()
                handle.write(data + b"\0" * (-len(data) % 8))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> KeywordIndex:
        """The index saved at `path` (ValueError when it is not one: damaged, cut short);
        an index saved as `.npz` by an earlier memcli is read too."""
        with open(path, "rb") as handle:
            data = bytearray(os.fstat(handle.fileno()).st_size)  # writable arrays, one read
            if handle.readinto(data) != len(data):
                raise ValueError(f"{path}: cut short while read")
        if not data.startswith(MAGIC):
            return cls._load_npz(path)
        size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
        start = len(MAGIC) + 8 + size
        head = json.loads(data[len(MAGIC) + 8 : start].decode("utf-8"))
        terms, sizes = head["vocab"], head["sizes"]
        if not isinstance(terms, list) or not all(type(t) is str for t in terms):
            raise ValueError(f"{path}: not a keyword index")
        if not isinstance(sizes, list) or len(sizes) != len(_ARRAYS):
            raise ValueError(f"{path}: not a keyword index")
        if sizes[0] != len(terms) + 1 or sizes[1] != sizes[2]:
            raise ValueError(f"{path}: the postings disagree")
        view = memoryview(data)
        arrays = []
        for (_, dtype), count in zip(_ARRAYS, sizes, strict=True):
            width = np.dtype(dtype).itemsize
            if type(count) is not int or count < 0 or start + count * width > len(data):
                raise ValueError(f"{path}: cut short")
            arrays.append(np.frombuffer(view[start : start + count * width], dtype=dtype))
            start += count * width + (-(count * width) % 8)
        if start != len(data):
            raise ValueError(f"{path}: not a keyword index")
        indptr = arrays[0]
        if indptr[0] != 0 or indptr[-1] != sizes[1] or np.any(indptr[1:] < indptr[:-1]):
            raise ValueError(f"{path}: the postings disagree")
        vocab = dict(zip(terms, range(len(terms)), strict=True))
        return cls(vocab, *arrays, float(head["k1"]), float(head["b"]))

    @classmethod
    def _load_npz(cls, path: Path) -> KeywordIndex:
        """The index as an earlier memcli saved it (NumPy's .npz: a zip archive, read
        without pickle)."""
        import zipfile

        try:
            with np.load(path, allow_pickle=False) as data:
                vocab = {term: i for i, term in enumerate(json.loads(str(data["vocab"])))}
                k1, b = (float(x) for x in data["params"])
                return cls(vocab, data["indptr"], data["docs"], data["tfs"], data["doc_len"], k1, b)
        except zipfile.BadZipFile as exc:
            raise ValueError(f"{path}: not a keyword index ({exc})") from exc


#: the start of a keyword index file
MAGIC = b"MKWI0001"
#: the arrays of a keyword index file, in order, with their stored dtype
_ARRAYS = (("indptr", "<i8"), ("docs", "<i4"), ("tfs", "<f4"), ("doc_len", "<f4"))


def _weighted(query: str | Sequence[str]) -> Mapping[str, float]:
    """A query's terms and their weights: query_terms of a text, a list's counts."""
    return query_terms(query) if isinstance(query, str) else Counter(query)
