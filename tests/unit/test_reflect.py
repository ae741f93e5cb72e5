"""reflect, its pure parts: the trigger of DESIGN §6, cohesive clusters over given
vectors and the statement of a pattern. End to end with the real model and a loopback
LLM: tests/integration/test_reflect.py."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from memcli.core.models import Entry, format_time, utc_now
from memcli.logic.reflect import (
    check_trigger,
    cohesive_clusters,
    extractive_insights,
    insight_id,
    insight_importance,
    plan_reflect,
)
from memcli.store.config import ReflectSettings

NOW = utc_now()


def ago(hours: float) -> str:
    return format_time(NOW - dt.timedelta(hours=hours))


def entry(entry_id: str, imp: float, hours: float, kind: str = "fact") -> Entry:
    meta = {"id": entry_id, "imp": str(imp), "created": ago(hours)}
    return Entry(entry_id, f"text {entry_id}", kind, "memory.md", 1, meta, True)


def test_trigger_needs_importance_entries_and_cooldown() -> None:
    cfg = ReflectSettings()
    reflection = entry("r", 0.9, 48, "reflection")
    assert not check_trigger([reflection, entry("a", 0.9, 2), entry("b", 0.9, 2)], NOW, cfg).due
    many = [reflection] + [entry(f"e{i}", 0.9, 2) for i in range(5)]
    trigger = check_trigger(many, NOW, cfg)
    assert trigger.due and trigger.entries == 5 and abs(trigger.importance_sum - 4.5) < 1e-9
    old = [entry(f"o{i}", 0.9, 72) for i in range(5)] + [reflection]  # before the last one
    assert not check_trigger(old, NOW, cfg).due
    recent_reflection = entry("r2", 0.9, 0.5, "reflection")
    assert "cooldown" in check_trigger([*many, recent_reflection], NOW, cfg).reason
    one = check_trigger([reflection, entry("big", 1.0, 1)], NOW, ReflectSettings(importance_sum=1))
    assert not one.due and "needs 2" in one.reason


def _unit(rows: list[list[float]]) -> np.ndarray:
    vectors = np.array(rows, dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _fact(entry_id: str, text: str, keywords: str = "") -> Entry:
    meta = {"id": entry_id, "imp": "0.9", "created": ago(1)}
    if keywords:
        meta["kw"] = keywords
    return Entry(entry_id, text, "fact", "memory.md", 1, meta, True)


def test_incohesive_keyword_sharing_group_gives_no_reflection() -> None:
    """Four entries share the keyword "python" and form a chain of similar pairs
    (a~b, b~c, c~d: single-linkage, as reflect grouped before, makes them one theme),
    but a and d have nothing in common: no cluster is cohesive, nothing is written."""
    pool = [
        _fact("a", "Uses uv for Python environments instead of pip-tools", "python"),
        _fact("b", "Pins Python dependencies with uv lock files", "python"),
        _fact("c", "Profiles slow Python endpoints with py-spy", "python"),
        _fact("d", "The Python services run FastAPI on Kubernetes", "python"),
    ]
    angle = np.radians(50)  # neighbours at cos 50° ≈ 0.64, two apart ≈ -0.17
    vectors = _unit([[np.cos(i * angle), np.sin(i * angle), 0.0] for i in range(4)])
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.6 and sims[1, 2] > 0.6 and sims[0, 3] < 0
    assert extractive_insights(pool, vectors, ReflectSettings(theme_similarity=0.6))[0] == []
    assert cohesive_clusters(vectors, 0.6, 3) == []


def test_cohesive_cluster_and_its_statement() -> None:
    pool = [
        _fact("t1", "Prefers pytest fixtures over setUp methods in Python tests"),
        _fact("t2", "Runs the Python test suite with pytest -x before every commit"),
        _fact("t3", "Writes a failing pytest test first when fixing a Python bug"),
        _fact("x1", "Drinks green tea in the afternoon"),
        _fact("x2", "Bikes to the office when it does not rain"),
    ]
    vectors = _unit(
        [[1, 0.3, 0, 0], [1, 0, 0.3, 0], [1, 0.2, 0.2, 0], [0, 0, 0, 1], [0, 1, 0, 0.5]]
    )
    assert cohesive_clusters(vectors, 0.6, 3) == [[0, 1, 2]]
    [insight], _ = extractive_insights(pool, vectors, ReflectSettings(theme_similarity=0.6))
    assert [e.id for e in insight.evidence] == ["t1", "t2", "t3"]
    # no embedder: the label is the word most of them share, stated as one sentence
    # about what they share, not a list of them (issue 37)
    assert insight.text == "Pytest is a recurring subject: 3 notes are about it."
    assert all(e.text != insight.text for e in pool)
    assert insight.keywords == ("pytest",)
    # a cohesive cluster whose entries share no word names no subject: nothing, and why
    unrelated = [
        _fact("u1", "团队每周三下午开架构评审会"),
        _fact("u2", "喜欢喝绿茶"),
        _fact("u3", "骑车上班"),
    ]
    insights, why = extractive_insights(
        unrelated, _unit([[1, 0.1], [1, 0], [1, 0.05]]), ReflectSettings()
    )
    assert insights == [] and why
    # two similar entries are a duplicate, not a pattern
    insights, why = extractive_insights(pool[:2], vectors[:2], ReflectSettings())
    assert insights == [] and "needs at least 3" in why[-1]


# ---------------------------------------------------------------------- issue 26 §3


def _turn(entry_id: str, text: str) -> Entry:
    meta = {"id": entry_id, "created": ago(1), "src": "chat"}
    return Entry(entry_id, text, "turn", "conversations/chat.md", 1, meta, True)


def test_the_assistant_is_never_evidence_and_chinese_is_segmented_into_words() -> None:
    """The issue's case: one added line and a two-turn chat. The assistant's reply is left
    out; two entries hold no theme; nothing is written, and the notes say why."""
    pool = [
        _fact("m1", "我喜欢用 Neovim 写代码，注释用英文"),
        _turn("c1", "user: 以后代码注释都用英文，记住了吗？"),
        _turn("c2", "assistant: 好的，记住了：代码注释用英文。"),
    ]
    vectors = _unit([[1, 0], [1, 0.01], [1, 0.02]])
    insights, why = extractive_insights(pool, vectors, ReflectSettings())
    assert insights == []
    assert "assistant" in why[0] and "needs at least 3" in why[1]
    # with a third note of the person's, a theme in words, never character n-grams
    pool.append(_fact("m2", "代码注释统一用英文写"))
    vectors = _unit([[1, 0], [1, 0.01], [1, 0.02], [1, 0.03]])
    [insight], _ = extractive_insights(pool, vectors, ReflectSettings())
    assert {e.id for e in insight.evidence} == {"m1", "c1", "m2"}
    assert insight.text.endswith("」是反复出现的主题：3 条笔记都与它有关。")
    about = insight.text.removeprefix("「").split("」")[0]
    assert set(about.split("、")) <= {"代码", "注释", "英文"}
    assert "好的" not in insight.text and "user:" not in insight.text


def test_an_insight_weighs_less_than_its_evidence_and_keeps_its_id() -> None:
    evidence = [_fact(f"e{i}", f"text {i}") for i in range(4)]
    assert insight_importance(evidence) == 0.6  # 0.9 each: capped at 0.6
    low = [replace_imp(e, 0.5) for e in evidence]
    assert insight_importance(low) == 0.4  # below the median
    ids = ["e2", "e0", "e1"]
    assert insight_id("memory.md", ids, "A theme", set()) == insight_id(
        "memory.md", sorted(ids), "A theme", set()
    )
    first = insight_id("memory.md", ids, "A theme", set())
    assert first.startswith("m") and insight_id("memory.md", ids, "A theme", {first}) != first
    from memcli.logic.reflect import Insight

    one = plan_reflect([Insight("A theme", tuple(evidence[:3]))], evidence, NOW)
    two = plan_reflect(
        [Insight("A theme", tuple(evidence[:3]))], evidence, NOW + dt.timedelta(hours=1)
    )
    assert [w.entry.id for w in one.writes] == [w.entry.id for w in two.writes]
    assert one.writes[0].entry.importance == 0.6


def replace_imp(entry: Entry, imp: float) -> Entry:
    from dataclasses import replace

    return replace(entry, meta={**entry.meta, "imp": str(imp)})


#: a fake embedding of words: these point where the members do (the centroid)
NEAR = {"pytest": [1, 0], "marathon": [1, 0], "docker": [0.8, 0.6]}


@pytest.mark.parametrize(
    ("texts", "plain", "embedded"),
    [
        # Docker notes, one of which mentions pytest: the theme is a word most of them
        # use, never the one note's word that happens to sit nearest the centroid
        (
            [
                "The backend services run in Docker",
                "Local development uses docker compose with a Postgres container",
                "Rebuild the Docker image after changing requirements",
                "Run pytest inside the Docker container in CI",
            ],
            "docker",
            "docker",
        ),
        # no word half of them use: with an embedder, one half of them are close to
        # in meaning; without one, nothing to state
        (
            [
                "Trains for a marathon every spring",
                "Bought new running shoes",
                "Uses a GPS watch to track pace",
            ],
            None,
            "marathon",
        ),
        (["喜欢喝绿茶", "每天下午喝一杯绿茶", "绿茶要用八十度的水泡"], "绿茶", "绿茶"),
    ],
)
def test_a_theme_is_named_after_a_word_its_evidence_shares(
    texts: list[str], plain: str | None, embedded: str | None
) -> None:
    from memcli.logic.themes import label

    vectors = _unit([[1, 0.01 * i] for i in range(len(texts))])

    def embed(words):  # noqa: ANN001, ANN202 - the words of NEAR near, the rest far
        return _unit([NEAR.get(w.casefold(), [0, 1]) for w in words])

    for embedder, about in ((None, plain), (embed, embedded)):
        named = label(texts, vectors, embedder)
        assert (named.casefold() if named else None) == about, embedder


@pytest.mark.parametrize(
    ("members", "about", "said"),
    [
        (
            ["a", "b", "c", "d"],
            "marathon",
            "Marathon is a recurring subject: 4 notes are about it.",
        ),
        (["a", "b", "c"], "Postgres", "Postgres is a recurring subject: 3 notes are about it."),
        (["a", "b", "c"], "pytest", "Pytest is a recurring subject: 3 notes are about it."),
        (
            ["在学日语", "每晚背单词", "周六上日语课"],
            "日语",
            "「日语」是反复出现的主题：3 条笔记都与它有关。",
        ),
    ],
)
def test_a_statement_is_one_sentence_not_a_list(members: list[str], about: str, said: str) -> None:
    from memcli.logic.themes import statement

    assert statement(members, about) == said
