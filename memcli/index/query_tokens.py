"""A query's model inputs, as both query engines take them (the numpy forward pass,
memcli.index.bert_numpy, and the ONNX session, memcli.index.onnx_embedder): a BERT
model's ASCII text tokenized in Python (memcli.index.wordpiece, its file kept in the
export folder), anything else by the model's own `tokenizers` tokenizer, loaded only
then; and a padded batch of several texts (pad 0, attention mask 0 there). `Prefetching` is
what both engines do with batches: an inject's prompt parts embedded at once, each
vector taken once."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

#: the inputs a model may take, in the order the ONNX graph declares them
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class QueryTokens:
    """The tokenizer of one model (`source`, its tokenizer.json), truncating to
    `max_length`; the wordpiece file for `source` is kept in `directory`."""

    def __init__(self, directory: Path, source: Path, max_length: int) -> None:
        from memcli.index import wordpiece

        self.source = source
        self.max_length = max_length
        self._hub_tokenizer = None  # `tokenizers`, loaded when the fast path declines
        # a BERT model's ASCII queries are tokenized in Python (memcli.index.wordpiece);
        # its file is written from `tokenizers` the first time
        key = wordpiece.source_key(source, max_length)
        self._fast = wordpiece.load(directory, key)
        if self._fast is None:
            self._fast = wordpiece.save(directory, key, self.tokenizer)

    @property
    def tokenizer(self):  # noqa: ANN201 - a tokenizers.Tokenizer
        """The model's own tokenizer (`tokenizers`), loaded on first use."""
        if self._hub_tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.source))
            tokenizer.no_padding()
            tokenizer.enable_truncation(self.max_length)
            self._hub_tokenizer = tokenizer
        return self._hub_tokenizer

    def encode(self, text: str) -> dict[str, list[int]]:
        """The model's inputs for `text` (input_ids, attention_mask, token_type_ids)."""
        ids = self._fast.encode(text) if self._fast is not None else None
        if ids is not None:
            return {"input_ids": ids, "attention_mask": [1] * len(ids),
                    "token_type_ids": [0] * len(ids)}
        encoding = self.tokenizer.encode(text)
        return {
            "input_ids": encoding.ids,
            "attention_mask": encoding.attention_mask,
            "token_type_ids": encoding.type_ids,
        }

    def batch(self, texts: Sequence[str], names: Sequence[str] = INPUTS) -> dict[str, np.ndarray]:
        """The inputs `names` of `texts` as int64 arrays (texts × the longest), padded
        with 0 (attention mask 0 on the padding)."""
        encodings = [self.encode(t) for t in texts]
        width = max((len(e["input_ids"]) for e in encodings), default=0)
        out = {name: np.zeros((len(texts), width), dtype=np.int64) for name in names}
        for row, values in enumerate(encodings):
            size = len(values["input_ids"])
            for name in names:
                out[name][row, :size] = values[name]
        return out


class Prefetching:
    """Embeddings made together (an inject's prompt and its parts) and kept until each
    is asked for once: a query engine supplies `dim` and `_run(texts)`, the vectors of
    `texts` in one call."""

    dim: int

    def __init__(self) -> None:
        self._fetched: dict[str, np.ndarray] = {}  # prefetch's vectors, each taken once

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed `texts` now, in one call (an inject's prompt and its parts), for the
        next embed of each to take once."""
        texts = [t for t in dict.fromkeys(texts) if t not in self._fetched]
        if not texts:
            return
        vectors = self._run(texts)
        if len(self._fetched) > 256:  # never taken (a search that failed): forget them
            self._fetched.clear()
        self._fetched.update(zip(texts, vectors, strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            fetched = self._fetched.pop(text, None)
            out[row] = fetched if fetched is not None else self._run([text])[0]
        return out
