"""Which texts the configured embedding model reads (memcli.index.coverage): a table of
models and texts, the share of a workspace it does not read, and the notice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.index.coverage import (
    NOTICE_SHARE,
    SWITCH_COMMAND,
    has_han,
    multilingual,
    notice,
    reads,
    semantic_vote,
    unread_share,
)

MULTI = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"


@pytest.mark.parametrize(
    ("model", "text", "expected"),
    [
        ("", "Prefers pytest over unittest", True),
        ("", "数据库迁移先在预发环境跑", False),
        ("", "喜欢先看结论，再看细节", False),
        ("", "Café crème à côté", True),  # Latin with accents
        ("", "用 pytest 写测试", False),  # mostly Chinese by weight
        ("", "Uses neovim with lazy.nvim; 配置在 dotfiles", True),  # mostly Latin
        ("", "2023-08-14 12:00", True),  # no letters
        ("", "Предпочитает короткие ответы", False),  # Cyrillic
        ("", "", True),
        ("sentence-transformers/all-MiniLM-L6-v2", "数据库迁移", False),
        (MULTI, "数据库迁移先在预发环境跑", True),
        ("intfloat/multilingual-e5-small", "Предпочитает", True),
        ("BAAI/bge-m3", "数据库", True),
        ("sentence-transformers/LaBSE", "数据库", True),
        ("/models/xlm-roberta-tiny", "数据库", True),
        ("sentence-transformers/all-mpnet-base-v2", "数据库", False),
    ],
)
def test_reads(model: str, text: str, expected: bool) -> None:
    assert reads(model, text) is expected


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"model_type": "xlm-roberta", "vocab_size": 250002}, True),
        ({"model_type": "bert", "vocab_size": 119547}, True),  # multilingual BERT
        ({"model_type": "bert", "vocab_size": 30522}, False),  # English BERT
        ({"model_type": "XLM-RoBERTa", "vocab_size": 300}, True),
        ([], False),
    ],
)
def test_a_local_folder_says_by_its_config(tmp_path: Path, config: object, expected: bool) -> None:
    folder = tmp_path / f"model-{len(str(config))}-{expected}"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    assert multilingual(str(folder)) is expected


def test_a_missing_or_broken_folder_is_not_multilingual(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    assert not multilingual(str(tmp_path / "broken"))
    assert not multilingual(str(tmp_path / "absent"))


def test_unread_share_counts_texts_with_letters() -> None:
    texts = ["Prefers pytest", "数据库迁移", "喜欢先看结论", "Uses neovim", "2024-01-01"]
    assert unread_share("", texts) == pytest.approx(2 / 4)
    assert unread_share(MULTI, texts) == 0.0
    assert unread_share("", []) == 0.0
    assert unread_share("", ["123", "!!"]) == 0.0


def test_the_notice_from_a_fifth_on_with_the_command() -> None:
    english = ["Prefers pytest over unittest"] * 8
    assert notice("", english + ["数据库迁移"]) is None  # 1 in 9: under a fifth
    said = notice("", english[:4] + ["数据库迁移"])  # 1 in 5: a fifth
    assert said is not None and SWITCH_COMMAND in said and "20%" in said
    assert notice(MULTI, ["数据库迁移"] * 5) is None
    assert NOTICE_SHARE == 0.2


@pytest.mark.parametrize(
    "model, text, vote",
    [
        ("", "Uses neovim with lazy.nvim", 1.0),  # read
        ("", "12345 !!", 1.0),  # no letters: read
        ("", "喜欢先看结论，再看细节", 0.0),  # no Latin letter
        # 5 Latin letters against 4 CJK characters (×3 = 12): share 5/17, vote 10/17
        ("", "Slack 频道通知", (5 / 17) / 0.5),
        (MULTI, "喜欢先看结论，再看细节", 1.0),  # a multilingual model reads it
    ],
)
def test_semantic_vote(model: str, text: str, vote: float) -> None:
    assert semantic_vote(model, text) == pytest.approx(vote)


@pytest.mark.parametrize(
    "text, vote",
    [
        ("喜欢先看结论，再看细节", 0.75),  # Chinese: read through its gloss
        ("Slack 频道通知", 0.75),  # more than its Latin share gives (10/17)
        ("Uses neovim with lazy.nvim", 1.0),  # English: read as written
        ("ヘルムとクバネティス", 0.0),  # kana only: not glossed, not read
        ("데이터베이스 마이그레이션", 0.0),  # hangul: not glossed, not read
        ("Привет, как дела", 0.0),  # Cyrillic: not glossed, not read
        ("日本語の設定ファイル", 0.75),  # Japanese with Han characters: they are glossed
    ],
)
def test_a_glossed_vote_counts_for_chinese_only(text: str, vote: float) -> None:
    assert semantic_vote("", text, 0.75) == pytest.approx(vote)


@pytest.mark.parametrize(
    "text, han",
    [("数据库", True), ("Uses neovim", False), ("", False), ("カタカナ", False),
     ("한국어", False), ("日本語", True), ("Ω≈ç√", False), ("\uf900", True)],
)  # fmt: skip
def test_has_han(text: str, han: bool) -> None:
    assert has_han(text) is han


def test_the_cjk_count_is_the_cjk_class_without_compiling_it() -> None:
    """Every character up to U+FFFF is counted as CJK_CLASS would (its compile costs a
    cold search ≈ 5 ms: the count bisects its ranges instead), and so is a mixed text."""
    import re

    from memcli.index import coverage
    from memcli.index.tokenize import CJK_CLASS

    every = "".join(map(chr, range(0xFFFF)))
    pattern = re.compile(CJK_CLASS)
    assert coverage._cjk_count(every) == len(pattern.findall(every))
    for char in every[0x3000:]:  # each one, not only the total
        assert coverage._cjk_count(char) == len(pattern.findall(char)), hex(ord(char))
    mixed = "数据库迁移要先在预发环境验证（Kubernetes）カタカナ 한국어 豈"
    assert coverage._cjk_count(mixed) == len(pattern.findall(mixed)) == 22
