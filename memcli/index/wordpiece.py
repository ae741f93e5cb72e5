"""A BERT WordPiece tokenizer for ASCII queries, in Python, so that a one-off search need
not import `tokenizers` and parse the model's tokenizer.json (≈ 40 ms of CPU per process
on the loaded 2-core machine).

It does exactly what the `tokenizers` pipeline of a BERT model does to ASCII text:
BertNormalizer (control characters dropped, whitespace made spaces, lower-cased; accents
and CJK padding leave ASCII unchanged), BertPreTokenizer (split at whitespace, each ASCII
punctuation character a word of its own), WordPiece (greedy longest match, `##` for a
continuation, [UNK] for a word with no split or longer than max_input_chars_per_word),
[CLS] … [SEP] around it, truncated to the model's length. Anything else (a character
outside ASCII, a special token's text in the query) returns None and the caller uses
`tokenizers`, which stays the reference.

What it needs of the model is kept in a plain-text file beside the ONNX export
(`wordpiece-<the source's path hashed>.txt`: a JSON line, then the vocabulary one token
a line, rank = line; one file per tokenizer file, so two installs of memcli sharing the
user cache, each with its own copy of the model, do not write it over each other's on
every search). It is
written by `save` only from a `tokenizers` tokenizer whose pipeline is the one above and
only when both agree on CHECK_TEXTS; it names the tokenizer file it came from (path,
size, mtime) and the CRC-32 of its vocabulary, and `load` returns None for a file that
does not match (stale, damaged, another format): the caller then uses `tokenizers` and
writes it anew. No code-capable format.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zlib
from collections.abc import Sequence
from pathlib import Path

#: the kept file's name: this prefix, a hash of the tokenizer file's path, ".txt"
PREFIX = "wordpiece-"
_MAGIC = "memcli-wordpiece-1"
#: ASCII punctuation (Python's string.punctuation), each a word of its own
_PUNCT = "!-/:-@\\[-`{-~"
_WORDS = re.compile(f"[{_PUNCT}]|[^ {_PUNCT}]+")
#: BertNormalizer's clean_text on ASCII: \t \n \r become spaces, other controls go
_CLEAN = {c: None for c in (*range(32), 127)} | {9: 32, 10: 32, 13: 32}
#: what save() checks the two tokenizers agree on, before writing the file
CHECK_TEXTS = (
    "How should I write Python tests?",
    "Don't deploy on Fridays; use the staging-2 cluster (see OPS-1234) at 10:30am!",
    "email bob@example.com, path /usr/local/bin, url https://x.io/a?b=c&d=e#f",
    "antidisestablishmentarianism " * 3 + "x" * 101 + " zzqqxxj",
    "tabs\tand\nnew lines\r\n\x00nul \x07bell \x0bvt \x0cff \x7fdel ~`^_|\\{}[]<>\"'",
    "word " * 300,
)


class WordPiece:
    """The ASCII fast path of one BERT tokenizer (module docstring)."""

    def __init__(self, vocab: dict[str, int], head: dict) -> None:
        self.vocab = vocab
        self.unk = vocab[head["unk"]]
        self.cls = vocab[head["cls"]]
        self.sep = vocab[head["sep"]]
        self.prefix = head["prefix"]
        self.max_chars = int(head["max_chars"])
        self.max_length = int(head["max_length"])
        self.lowercase = bool(head["lowercase"])
        self.specials = tuple(s.lower() for s in head["specials"])

    def encode(self, text: str) -> list[int] | None:
        """Token ids of `text` with [CLS] and [SEP], or None when `text` is not for this
        path (not ASCII, or it holds a special token's text)."""
        if not text.isascii():
            return None
        text = text.translate(_CLEAN)
        if self.lowercase:
            text = text.lower()
        folded = text if self.lowercase else text.lower()
        if any(s in folded for s in self.specials):
            return None
        ids: list[int] = []
        vocab, prefix, unk = self.vocab, self.prefix, self.unk
        for word in _WORDS.findall(text):
            if len(word) > self.max_chars:
                ids.append(unk)
                continue
            pieces, start, size = [], 0, len(word)
            while start < size:
                end = size
                while start < end:
                    found = vocab.get(word[start:end] if start == 0 else prefix + word[start:end])
                    if found is not None:
                        break
                    end -= 1
                else:
                    pieces = [unk]  # no split of this word: the whole word is [UNK]
                    break
                pieces.append(found)
                start = end
            ids.extend(pieces)
        return [self.cls, *ids[: max(0, self.max_length - 2)], self.sep]


def source_key(source: Path, max_length: int) -> dict:
    """What a kept file must name to be used for tokenizer file `source`."""
    st = os.stat(source)
    return {
        "source": str(source),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "max_length": max_length,
    }


def path_for(directory: Path, key: dict) -> Path:
    """Where the file for `key` (source_key) is kept in `directory`: named after the
    tokenizer file's path (an install of its own: a file of its own)."""
    digest = hashlib.sha256(str(key["source"]).encode("utf-8")).hexdigest()[:16]
    return directory / f"{PREFIX}{digest}.txt"


def load(directory: Path, key: dict) -> WordPiece | None:
    """The tokenizer kept in `directory` for `key` (source_key), or None."""
    try:
        raw = path_for(directory, key).read_text(encoding="utf-8")
        line, _, body = raw.partition("\n")
        head = json.loads(line)
        if not isinstance(head, dict) or head.get("magic") != _MAGIC:
            return None
        if any(head.get(k) != v for k, v in key.items()):
            return None  # another tokenizer file, or it changed since
        if zlib.crc32(body.encode("utf-8")) != head["crc32"]:
            return None
        tokens = body.split("\n")
        if len(tokens) != head["count"]:
            return None
        vocab = {token: rank for rank, token in enumerate(tokens)}
        if len(vocab) != len(tokens) or not isinstance(head["specials"], list):
            return None
        return WordPiece(vocab, head)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save(directory: Path, key: dict, tokenizer) -> WordPiece | None:  # noqa: ANN001 - tokenizers.Tokenizer
    """Keep what `tokenizer` (the `tokenizers` one, truncation set) needs for the fast
    path in `directory`, when its pipeline is BERT's and the two agree on CHECK_TEXTS;
    the fast path, or None (nothing written)."""
    try:
        head = _bert_pipeline(json.loads(tokenizer.to_str()))
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):
        head = None  # a pipeline of another shape
    if head is None or head["max_length"] != key["max_length"]:
        return None
    vocab = tokenizer.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    if [vocab[t] for t in tokens] != list(range(len(tokens))) or any(
        "\n" in t or "\r" in t or not t for t in tokens
    ):
        return None
    head |= {"magic": _MAGIC, **key, "count": len(tokens)}
    try:
        fast = WordPiece(vocab, head)
    except KeyError:
        return None
    if not agrees(fast, tokenizer, CHECK_TEXTS):
        return None
    body = "\n".join(tokens)
    head["crc32"] = zlib.crc32(body.encode("utf-8"))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        kept = path_for(directory, key)
        tmp = directory / f".{kept.name}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(head) + "\n" + body, encoding="utf-8")
        os.replace(tmp, kept)
    except OSError:
        pass  # only a speed-up
    return fast


def agrees(fast: WordPiece, tokenizer, texts: Sequence[str]) -> bool:  # noqa: ANN001
    """Whether the fast path gives `tokenizer`'s ids for each of `texts` it takes."""
    for text in texts:
        ids = fast.encode(text)
        if ids is not None and ids != tokenizer.encode(text).ids:
            return False
    return True


def _bert_pipeline(config: dict) -> dict | None:
    """The fast path's settings when `config` (a tokenizer.json) is a BERT WordPiece
    pipeline it reproduces, else None."""
    normalizer, model = config.get("normalizer") or {}, config.get("model") or {}
    post = config.get("post_processor") or {}
    if (
        normalizer.get("type") != "BertNormalizer"
        or not normalizer.get("clean_text")
        or (config.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer"
        or model.get("type") != "WordPiece"
        or not isinstance(model.get("continuing_subword_prefix"), str)
    ):
        return None
    if post.get("type") == "BertProcessing":
        cls, sep = post["cls"][0], post["sep"][0]
    elif post.get("type") == "TemplateProcessing":
        single = post.get("single")
        if not (
            isinstance(single, list)
            and len(single) == 3
            and "SpecialToken" in single[0]
            and single[1] == {"Sequence": {"id": "A", "type_id": 0}}
            and "SpecialToken" in single[2]
            and single[0]["SpecialToken"]["type_id"] == 0
            and single[2]["SpecialToken"]["type_id"] == 0
        ):
            return None
        cls, sep = single[0]["SpecialToken"]["id"], single[2]["SpecialToken"]["id"]
        for name in (cls, sep):
            if post["special_tokens"][name]["tokens"] != [name]:
                return None
    else:
        return None
    truncation = config.get("truncation") or {}
    max_length = truncation.get("max_length")
    if not isinstance(max_length, int) or truncation.get("direction", "Right") != "Right":
        return None
    return {
        "unk": model["unk_token"],
        "cls": cls,
        "sep": sep,
        "prefix": model["continuing_subword_prefix"],
        "max_chars": model.get("max_input_chars_per_word", 100),
        "max_length": max_length,
        "lowercase": bool(normalizer.get("lowercase")),
        "specials": [t["content"] for t in config.get("added_tokens") or []],
    }
