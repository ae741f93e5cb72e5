"""An agent's task prompt split into the things it names (memcli.logic.prompts): a table
of prompts in English and Chinese, the merge of the searches for each part, and the
relevance rule where the model does not read a text (memcli.logic.inject_choice)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from memcli.core.models import Entry
from memcli.logic.inject_choice import relevant_hit, shared_word
from memcli.logic.prompts import SPLIT_CHARS, merge_hits, noun_phrases, prompt_parts
from memcli.store.config import InjectSettings

PROMPTS = [
    # the things named: noun phrases (from the determiner on; the verb's piece only with
    # one), then the clauses; at most inject.prompt_parts (3)
    (
        "Add an index to the invoices table and write a migration for it",
        ["an index", "the invoices table", "a migration"],
    ),
    (
        "Increase the memory limit on the Harbor deployment",
        ["the memory limit", "the Harbor deployment"],
    ),
    (
        "Add a consumer for the shipments.events exchange that updates ETAs",
        ["a consumer", "the shipments.events exchange", "updates ETAs"],
    ),
    ("Deploy the app. Then rotate the keys!", ["the app", "the keys", "Deploy the app"]),
    (
        "Fix the login bug, then update the changelog",
        ["the login bug", "the changelog", "Fix the login bug"],
    ),
    (
        "Clean up my working tree and reset the repo to origin",
        ["my working tree", "the repo", "origin"],
    ),
    # Chinese: no noun phrases found, the clauses (at ， and 顺便 / 然后)
    (
        "帮我给 shipments 表加一个 index，顺便写好 migration",
        ["帮我给 shipments 表加一个 index", "写好 migration"],
    ),
    ("先跑测试，然后部署到预发环境", ["先跑测试", "部署到预发环境"]),
    # one thing named: the whole prompt is its search
    ("hi", []),
    ("what editor do I use", []),
    ("Refactor the old billing module", []),
    ("Delete shipment events older than three years from Postgres", []),
    ("We are having trouble with Next.js. What did we learn last time?", []),
    ("数据库迁移", []),
    ("数据库迁移怎么做", []),
    # function words only are no thing: "this morning", "find out why", "it"
    ("Investigate why quoter latency spiked this morning", []),
    ("The Go service is throttled, find out why", []),
    ("Do it and then do that", []),
    # a dotted name or a version is no sentence end
    ("Update lazy.nvim to v3.12.1 and restart it", []),
    (
        "Move lazy.nvim to the dotfiles repo and the plugins to lua",
        ["the dotfiles repo", "the plugins", "lua"],
    ),
]


@pytest.mark.parametrize(("prompt", "parts"), PROMPTS)
def test_prompt_parts(prompt: str, parts: list[str]) -> None:
    assert prompt_parts(prompt, InjectSettings().prompt_parts) == parts


def test_parts_are_few_unique_and_from_the_start() -> None:
    many = ", ".join(f"update the {w} service" for w in ["alpha", "beta", "gamma", "delta"])
    assert prompt_parts(many, 3) == ["the alpha service", "the beta service", "the gamma service"]
    assert len(prompt_parts(many, 9)) == 8 and prompt_parts(many, 0) == []
    assert prompt_parts("Fix the bug in the parser. " * 3, 3) == ["the bug", "the parser"]
    tail = "x" * SPLIT_CHARS + " and deploy the billing service to the staging cluster"
    assert prompt_parts(tail, 3) == []  # only the start of a long context is split


def test_noun_phrases() -> None:
    assert noun_phrases("Write Go tests for the retry logic in the quote client") == [
        "the retry logic",
        "the quote client",
    ]
    assert noun_phrases("the invoices table") == []  # the clause itself


def _entry(entry_id: str, text: str) -> Entry:
    return Entry(entry_id, text, "lesson", "learnings.md", 0, {"id": entry_id})


def _hit(entry: Entry, score: float, semantic: float, keyword: float = 0.0, **extra: object):
    return SimpleNamespace(
        entry=entry, score=score, components={"semantic": semantic, "keyword": keyword}, **extra
    )


def test_merge_keeps_each_entrys_best_relevant_hit() -> None:
    a, b, c = _entry("a", "A"), _entry("b", "B"), _entry("c", "C")
    whole = [_hit(a, 0.5, 0.5), _hit(b, 0.3, 0.1), _hit(c, 0.2, 0.1)]
    part = [_hit(b, 0.4, 0.6), _hit(a, 0.9, 0.1), _hit(c, 0.8, 0.1)]

    def keep(hit, query: str) -> bool:
        return hit.components["semantic"] >= 0.35

    hits, relevant = merge_hits([("whole", whole), ("part", part)], keep)
    assert relevant == {"a", "b"}
    # a keeps its relevant hit (0.5), not the higher unrelated one; b takes the part's;
    # c, relevant nowhere, keeps its hit for the whole prompt
    assert [(h.entry.id, h.score) for h in hits] == [("a", 0.5), ("b", 0.4), ("c", 0.2)]


def _reads_latin(text: str) -> bool:
    from memcli.index.coverage import reads

    return reads("", text)


#: (query, entry text, cosine, BM25) -> relevant, when the model reads Latin script only
COVERAGE_RULE = [
    ("write a migration", "Run database migrations on staging first", 0.46, 2.0, True),
    ("write a migration", "Has a cat named Miso", 0.10, 0.0, False),
    # the model does not read the entry: its cosine (high among Chinese texts) is no vote
    ("红烧肉怎么做", "更正：分区迁移推迟到 2026 年 3 月底", 0.80, 1.0, False),
    (
        "怎么配置 Kafka 的消息保留时间",
        "更正：Loki 日志保留期已经从 14 天改成 30 天",
        0.85,
        3.0,
        True,
    ),
    # a function bigram (一次) is no shared word
    ("狗狗疫苗多久打一次", "大学同学群每年 11 月聚一次", 0.75, 2.0, False),
    # an English word in a Chinese entry carries it across
    (
        "write a migration for it",
        "大表迁移一定先在 staging 用生产规模的数据演练 migration",
        0.1,
        1.5,
        True,
    ),
    ("write a migration for it", "大表迁移一定先在 staging 用生产规模的数据演练", 0.9, 0.0, False),
]


@pytest.mark.parametrize(("query", "text", "semantic", "keyword", "relevant"), COVERAGE_RULE)
def test_relevance_where_the_model_does_not_read(
    query: str, text: str, semantic: float, keyword: float, relevant: bool
) -> None:
    hit = _hit(_entry("e", text), 0.5, semantic, keyword)
    assert relevant_hit(hit, query, "hybrid", InjectSettings(), _reads_latin) is relevant


def test_a_weak_hit_is_never_relevant() -> None:
    hit = _hit(_entry("e", "Run database migrations on staging first"), 0.2, 0.9, 5.0, weak=True)
    assert not relevant_hit(hit, "migrations", "hybrid", InjectSettings(), _reads_latin)


def test_shared_word_skips_single_characters_and_function_words() -> None:
    assert shared_word("数据库迁移", "迁移脚本")
    assert not shared_word("数据库", "库存")  # one character in common
    assert not shared_word("怎么做", "怎么写")
    assert shared_word("deploy the billing service", "Billing is owned by Priya")


def test_a_hit_neither_side_can_make_relevant_reads_no_script() -> None:
    """No keyword score and a cosine under the floor: irrelevant whatever the model reads,
    decided without `reads` (a cold inject asked it of each of 10k hits: ≈ 15 ms)."""

    def unread(text: str) -> bool:
        raise AssertionError(f"reads asked of {text!r}")

    cfg = InjectSettings()
    low = _hit(_entry("e", "Has a cat named Miso"), 0.3, cfg.relevance_floor - 0.01, 0.0)
    assert not relevant_hit(low, "write a migration", "hybrid", cfg, unread)
    assert not relevant_hit(low, "write a migration", "keyword", cfg, unread)
    high = _hit(_entry("e", "Has a cat named Miso"), 0.3, cfg.relevance_floor, 0.0)
    assert relevant_hit(high, "write a migration", "hybrid", cfg, _reads_latin)
