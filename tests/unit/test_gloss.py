"""English glosses of Chinese text (memcli.index.gloss): which sense a word gets, the
table derived from CC-CEDICT, the gloss of a text, and the table kept in the cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memcli.core.models import Entry
from memcli.index import gloss
from memcli.index.coverage import has_han
from memcli.index.gloss_table import encode
from memcli.index.sync import content_key, embed_text


@pytest.mark.parametrize(
    ("senses", "expected"),
    [
        (["database"], "database"),
        (["to migrate", "to move"], "migrate"),  # the first sense, without "to "
        (["(computing) database"], "database"),  # parentheses dropped
        (["CL:個|个[ge4]", "manager"], "manager"),  # a classifier only points elsewhere
        (["variant of 台[tai2]", "platform"], "platform"),
        (["surname Wang", "king"], "king"),
        (["see 乒乓球[ping1 pang1 qiu2]"], ""),  # nothing but pointers: no gloss
        (["abbr. for 北京大學|北京大学"], ""),
        (["(completed action marker)"], ""),  # only a parenthesis
        # a long sense keeps its first clause
        (["Beijing, capital of People's Republic of China", "Peking"], "Beijing"),
        (["Shanghai municipality, central east China, abbr. to 滬|沪[Hu4]"], "Shanghai municipality"),
        # a description gives way to the shortest of the first three senses
        (["used as a term of endearment before a name", "mother", "mom"], "mom"),
        # a word whose senses are all descriptions is left out
        (["prefix used before monosyllabic names, kinship terms etc"], ""),
    ],
)
def test_sense(senses: list[str], expected: str) -> None:
    assert gloss.sense(senses) == expected


def test_derive_prefers_a_common_word_to_a_name() -> None:
    lines = [
        "# CC-CEDICT comment",
        "和 和 [He2] /surname He/Japanese/",  # a name (capitalized pinyin), listed first
        "和 和 [he2] /and/together with/",
        "數據庫 数据库 [shu4 ju4 ku4] /(computing) database/",
        "not a dictionary line",
    ]
    table = gloss.derive(lines)
    assert table["和"] == "and"
    assert table["数据库"] == table["數據庫"] == "database"  # simplified and traditional
    assert "not" not in table


@pytest.fixture
def fresh_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No table in memory, an empty cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(gloss, "_table", None)
    gloss.embedding_text.cache_clear()
    yield tmp_path / "cache" / "memcli" / "gloss"
    gloss.embedding_text.cache_clear()


def test_a_chinese_text_reads_in_english_in_place(fresh_table: Path) -> None:
    text = gloss.embedding_text("运单搜索用的是 OpenSearch，索引每天重建")
    assert text.startswith("way bill search") and "OpenSearch" in text
    assert "index" in text and "rebuild" in text
    assert not has_han(text)
    assert gloss.embedding_text("对花生过敏") == "right peanut oversensitive"


@pytest.mark.parametrize(
    "text",
    ["Uses neovim with lazy.nvim", "", "café ümlaut — 2 °C", "데이터베이스", "ヘルムとクバネティス"],
)
def test_a_text_without_chinese_is_unchanged(text: str) -> None:
    assert gloss.embedding_text(text) == text


def test_the_table_is_kept_in_the_cache_and_read_from_it(fresh_table: Path) -> None:
    gloss.embedding_text("数据库迁移")
    kept = list(fresh_table.iterdir())
    assert len(kept) == 1 and kept[0].name.startswith(f"cedict-v{gloss.VERSION}-")
    kept[0].write_bytes(encode({"数据库": "DB-FROM-CACHE"}))
    gloss._table = None
    gloss.embedding_text.cache_clear()
    assert gloss.embedding_text("数据库") == "DB-FROM-CACHE"  # read, not derived again


def test_a_damaged_cache_is_derived_again(fresh_table: Path) -> None:
    gloss.embedding_text("数据库")
    (kept,) = fresh_table.iterdir()
    kept.write_bytes(b"\x07\x00\x00\x00 not a table")
    gloss._table = None
    gloss.embedding_text.cache_clear()
    assert gloss.embedding_text("数据库") == "database"


def test_an_unwritable_cache_still_glosses(fresh_table: Path) -> None:
    fresh_table.parent.parent.mkdir(parents=True)
    fresh_table.parent.write_text("a file where the memcli cache folder would be")
    assert gloss.embedding_text("数据库") == "database"


def test_the_content_key_follows_the_gloss(fresh_table: Path) -> None:
    """A Chinese entry's key changes with glossing (its vector is embedded again); an
    English one's does not (nothing to embed again when the setting changes)."""
    chinese = Entry("m1", "运单搜索用的是 OpenSearch", "fact", "memory.md", 1)
    english = Entry("m2", "Searches run on OpenSearch", "fact", "memory.md", 2)
    assert embed_text(chinese, True) != embed_text(chinese, False) == chinese.text
    assert content_key(chinese, True) != content_key(chinese, False)
    assert content_key(english, True) == content_key(english, False)
