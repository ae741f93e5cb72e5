"""A keyword index as an earlier memcli saved it (NumPy's .npz), for the tests that
check such an index is still read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from memcli.index.keyword import KeywordIndex


def save_npz(index: KeywordIndex, path: Path) -> None:
    """`index` written to `path` in the .npz form memcli wrote before the .kw file."""
    np.savez(
        path,
        vocab=np.array(json.dumps(list(index.vocab), ensure_ascii=False)),
        indptr=index.indptr,
        docs=index.docs,
        tfs=index.tfs,
        doc_len=index.doc_len,
        params=np.array([index.k1, index.b]),
    )
