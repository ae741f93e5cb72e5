"""The Python tokenizer of ASCII queries (memcli.index.wordpiece) gives the bundled
model's own tokenizer's ids (`tokenizers`, the reference) for every text it takes, and
its file beside the export is used only when it is whole and names the tokenizer file it
came from."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from memcli.index import wordpiece
from memcli.index.embedder import bundled_model_path
from tests.support.generate import contexts

SOURCE = Path(bundled_model_path()) / "tokenizer.json"

EDGES = [
    "",
    "   ",
    "How should I write Python tests?",
    "x" * 100,
    "x" * 101,
    "deploy" * 17,
    "don't can't won't it's rock'n'roll",
    "C++ / C# / F#: e-mail (foo@bar.org) #hashtag $HOME ~/x.txt 3.14 1,000,000 50%",
    "\x00\x01\x02 nul \x0b\x0c\x1b[31mred\x1b[0m \x7f",
    "tab\there\nnew\r\nline",
    "zzqqxxjj qwzx unbelievable reconfiguration antidisestablishmentarianism",
    "word " * 400,
    "[CLS] and [SEP]",
    "[mask] lower-case",
    "[UNK]",
]


@pytest.fixture(scope="module")
def reference():  # noqa: ANN201 - tokenizers.Tokenizer, as OnnxEmbedder sets it up
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(SOURCE))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    return tokenizer


@pytest.fixture
def kept(tmp_path: Path, reference) -> tuple[Path, dict, wordpiece.WordPiece]:  # noqa: ANN001
    key = wordpiece.source_key(SOURCE, 256)
    fast = wordpiece.save(tmp_path, key, reference)
    assert fast is not None
    return tmp_path, key, fast


def _fuzz(count: int, seed: int, vocab: list[str]) -> list[str]:
    """ASCII texts of vocabulary words, random characters (controls included) and
    punctuation, with and without spaces."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 25)):
            r = rng.random()
            if r < 0.5:
                parts.append(rng.choice(vocab).removeprefix("##"))
            elif r < 0.8:
                parts.append("".join(chr(rng.randrange(128)) for _ in range(rng.randint(1, 8))))
            else:
                parts.append(rng.choice(" \t\n\r.,;:!?'\"()[]{}-_/\\@#$%^&*+=<>|~`"))
        texts.append(("" if rng.random() < 0.5 else " ").join(parts))
    return texts


def test_ascii_texts_get_the_reference_ids(kept, reference) -> None:  # noqa: ANN001
    _, _, fast = kept
    vocab = sorted(t for t in reference.get_vocab() if t.isascii())
    texts = EDGES + contexts(200, seed=3) + _fuzz(3000, 7, vocab)
    taken = 0
    for text in texts:
        ids = fast.encode(text)
        if ids is None:
            continue
        taken += 1
        assert ids == reference.encode(text).ids, repr(text)
    assert taken > 0.95 * len(texts)  # all but a special token's text


@pytest.mark.parametrize(
    "text",
    [
        "café au lait",
        "喜欢用中文讨论架构设计",
        "naïve",
        "emoji 🙂",
        "[CLS] hi",
        "a [MASK] b",
        "[pad]",
    ],
)
def test_what_it_does_not_take_goes_to_the_reference(kept, text: str) -> None:  # noqa: ANN001
    _, _, fast = kept
    assert fast.encode(text) is None


def test_truncated_to_the_models_length(kept, reference) -> None:  # noqa: ANN001
    _, _, fast = kept
    ids = fast.encode("alpha beta " * 500)
    assert len(ids) == 256
    assert ids == reference.encode("alpha beta " * 500).ids


def test_the_kept_file_round_trips(kept, reference) -> None:  # noqa: ANN001
    directory, key, fast = kept
    loaded = wordpiece.load(directory, key)
    assert loaded is not None
    for text in EDGES:
        assert loaded.encode(text) == fast.encode(text)
    head = json.loads(wordpiece.path_for(directory, key).read_text().partition("\n")[0])
    assert head["count"] == len(reference.get_vocab())
    assert not list(directory.glob(".*tmp"))


def _damage(path: Path, how: str) -> None:
    raw = path.read_bytes()
    line_end = raw.index(b"\n")
    if how == "a vocabulary byte":
        at = line_end + 5000
        path.write_bytes(raw[:at] + (b"q" if raw[at : at + 1] != b"q" else b"z") + raw[at + 1 :])
    elif how == "two tokens swapped":
        head, body = raw[:line_end], raw[line_end + 1 :].split(b"\n")
        body[2000], body[2001] = body[2001], body[2000]
        path.write_bytes(head + b"\n" + b"\n".join(body))
    elif how == "cut short":
        path.write_bytes(raw[: len(raw) // 2])
    elif how == "no header":
        path.write_bytes(raw[line_end + 1 :])
    elif how == "another format":
        path.write_bytes(b'{"magic": "memcli-wordpiece-0"}\n' + raw[line_end + 1 :])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "not UTF-8":
        path.write_bytes(raw[:line_end] + b"\n\xff\xfe" + raw[line_end + 1 :])
    else:
        path.unlink()


DAMAGES = [
    "a vocabulary byte",
    "two tokens swapped",
    "cut short",
    "no header",
    "another format",
    "empty",
    "not UTF-8",
    "missing",
]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_file_is_never_used(kept, how: str) -> None:  # noqa: ANN001
    directory, key, _ = kept
    _damage(wordpiece.path_for(directory, key), how)
    assert wordpiece.load(directory, key) is None  # the caller uses `tokenizers`


def test_a_file_for_another_tokenizer_file_or_length_is_not_used(kept) -> None:  # noqa: ANN001
    directory, key, _ = kept
    assert wordpiece.load(directory, {**key, "mtime_ns": key["mtime_ns"] + 1}) is None
    assert wordpiece.load(directory, {**key, "size": key["size"] + 1}) is None
    assert wordpiece.load(directory, {**key, "source": "/elsewhere/tokenizer.json"}) is None
    assert wordpiece.load(directory, {**key, "max_length": 128}) is None


def test_each_tokenizer_file_has_a_kept_file_of_its_own(
    kept, reference, tmp_path_factory: pytest.TempPathFactory
) -> None:  # noqa: ANN001
    """Two installs sharing the user cache (each its own copy of the model's tokenizer
    file) keep a file each: one's save does not replace the other's, which would send
    every cold search of the other through `tokenizers` (≈ 40 ms) and a save again."""
    import shutil

    directory, key, _ = kept
    other_copy = tmp_path_factory.mktemp("other-install") / "tokenizer.json"
    shutil.copy2(SOURCE, other_copy)
    other = wordpiece.source_key(other_copy, 256)
    assert wordpiece.path_for(directory, other) != wordpiece.path_for(directory, key)
    assert wordpiece.save(directory, other, reference) is not None
    assert wordpiece.load(directory, key) is not None  # the first install's still there
    assert wordpiece.load(directory, other) is not None


def test_a_tokenizer_of_another_pipeline_is_not_kept(tmp_path: Path, reference) -> None:  # noqa: ANN001
    from tokenizers import Tokenizer, pre_tokenizers

    other = Tokenizer.from_str(reference.to_str())
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    key = wordpiece.source_key(SOURCE, 256)
    assert wordpiece.save(tmp_path, key, other) is None
    assert not wordpiece.path_for(tmp_path, key).exists()
    cased = json.loads(reference.to_str())
    cased["post_processor"] = None
    assert wordpiece.save(tmp_path, key, Tokenizer.from_str(json.dumps(cased))) is None
    # a truncation length other than the one the file is for
    assert wordpiece.save(tmp_path, wordpiece.source_key(SOURCE, 128), reference) is None
    assert not os.listdir(tmp_path)


def test_a_tokenizer_that_disagrees_is_not_kept(tmp_path: Path, reference, monkeypatch) -> None:  # noqa: ANN001
    # a fast path that would differ from the reference (here: no lower-casing) on the
    # check texts is refused before anything is written
    real = wordpiece.WordPiece.__init__

    def cased(self, vocab, head) -> None:  # noqa: ANN001
        real(self, vocab, {**head, "lowercase": False})

    monkeypatch.setattr(wordpiece.WordPiece, "__init__", cased)
    assert wordpiece.save(tmp_path, wordpiece.source_key(SOURCE, 256), reference) is None
    assert not os.listdir(tmp_path)
