"""A query's keyword terms and their weights (memcli.index.tokenize.query_terms): a
Chinese question word counts for nothing (nor do its characters and the bigrams across
it), a lone CJK character for half a word, and both
keyword indexes (KeywordIndex, Postings) score and measure a query with the same
weights, so the keyword share stays between 0 and 1."""

from __future__ import annotations

import numpy as np
import pytest

from memcli.index.keyword import KeywordIndex
from memcli.index.postings import Postings
from memcli.index.tokenize import CJK_CHAR_WEIGHT, query_terms, tokenize

W = CJK_CHAR_WEIGHT


@pytest.mark.parametrize(
    "query, expected",
    [
        ("deploy deploy billing", {"deploy": 2.0, "bill": 1.0}),
        ("猫", {"猫": W}),
        ("数据库", {"数": W, "据": W, "库": W, "数据": 1.0, "据库": 1.0}),
        # 怎么 and 么做 are how it is asked: gone, with their characters
        ("怎么做", {}),
        ("红烧肉怎么做", {"红": W, "烧": W, "肉": W, "红烧": 1.0, "烧肉": 1.0}),
        # 移怎 straddles 怎么: no word; 库迁 is kept (no segmenter tells it apart)
        (
            "数据库迁移怎么办",
            {"数": W, "据": W, "库": W, "迁": W, "移": W,
             "数据": 1.0, "据库": 1.0, "库迁": 1.0, "迁移": 1.0},
        ),
        ("什么 Kafka 什么", {"kafka": 1.0}),
        ("我的猫和我的狗", {"我": 2 * W, "的": 2 * W, "猫": W, "和": W, "狗": W,
                        "我的": 2.0, "的猫": 1.0, "猫和": 1.0, "和我": 1.0, "的狗": 1.0}),
        ("ÄPFEL", {"äpfel": 1.0}),  # a Latin letter above ASCII is no CJK character
        ("", {}),
    ],
)
def test_query_terms(query: str, expected: dict[str, float]) -> None:
    assert query_terms(query) == pytest.approx(expected)


DOCS = ["少吃红肉，三个月后复查", "数据库迁移先在 staging 跑", "喜欢先看结论，再看细节"]


@pytest.mark.parametrize("query", ["红烧肉怎么做", "数据库迁移怎么做", "什么"])
def test_both_keyword_indexes_weigh_a_query_alike(query: str) -> None:
    """Scores and mass agree between the built index and the growing postings."""
    built = KeywordIndex.build([tokenize(d) for d in DOCS])
    grown = Postings(1.2, 0.75)
    grown.grow(len(DOCS))
    grown.add(0, DOCS)
    alive = np.ones(len(DOCS), dtype=bool)
    terms = query_terms(query)
    assert grown.scores(terms, len(DOCS), alive, len(DOCS)) == pytest.approx(
        built.scores(query), rel=1e-5
    )
    assert grown.ideal(terms, alive, len(DOCS)) == pytest.approx(built.ideal(query))


def test_a_word_outweighs_lone_characters() -> None:
    """A question whose words (数据库, 迁移) a note holds keeps nearly all of its keyword
    mass: its question words (怎么, 么做) and the bigram across them (移怎) are not
    counted against it. One that meets a note in lone characters only ("红烧肉怎么做":
    红 and 肉 of "少吃红肉") keeps under a sixth of that."""
    index = KeywordIndex.build([tokenize(d) for d in DOCS])

    def share(query: str, doc: int) -> float:
        return float(index.scores(query)[doc] / index.ideal(query))

    word = share("数据库迁移怎么做", 1)
    assert word > 0.9
    assert share("红烧肉怎么做", 0) < word / 6
    assert index.ideal("数据库迁移怎么做") == pytest.approx(index.ideal("数据库迁移"))
