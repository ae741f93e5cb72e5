"""Imported conversations as ordered logs (issue 16): `Memory.import_conversation` with
the bundled model — a short reply borrows relevance from the turn it answers (never in
memory.md), a period the question names finds turns whose text does not say it, and a
second import of the same conversation is refused with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.core.errors import ValidationError
from memcli.index.embedder import SentenceTransformerEmbedder
from memcli.logic.search import score_weights
from memcli.services.memory import Memory

pytestmark = pytest.mark.slow

TALK = {
    "sample_id": "trip",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1": [
            {
                "speaker": "Ann",
                "dia_id": "D1:1",
                "text": "Did you ever fix the flaky payment tests?",
            },
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Yes, finally, after two whole weeks!"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "My sister is visiting next weekend."},
            {"speaker": "Bo", "dia_id": "D1:4", "text": "The garden needs watering every day now."},
        ],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "I just got back from Oslo."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "We repainted the kitchen yellow."},
        ],
        "session_2_date_time": "9:00 am on 3 June, 2023",
    },
}


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def memory(ws: Path, model: SentenceTransformerEmbedder, **settings: str) -> Memory:
    env = {f"MEMCLI_{k.upper()}": v for k, v in settings.items()}
    return Memory(ws, env=env, embedder_factory=lambda: model, notify=lambda m: None)


def turn_ids(hits: list) -> list[str]:
    return [h.entry.meta.get("turn", h.entry.id) for h in hits]


def test_a_short_reply_borrows_from_the_turn_it_answers(
    empty_workspace: Path, model: SentenceTransformerEmbedder
) -> None:
    mem = memory(empty_workspace, model)
    [done] = mem.import_conversation(json.dumps(TALK), "trip.json")
    assert done.file == "conversations/trip.md" and done.turns == 6
    question = "Did Bo fix the flaky payment tests?"
    hits = mem.search(question, limit=3, touch=False)
    # every candidate, weak ones included (no relevance floor): the borrowing is measured
    plain = memory(
        empty_workspace, model, search_neighbour_weight="0", search_relevance_floor="0"
    ).search(question, limit=6, touch=False)
    assert turn_ids(hits)[:2] == ["D1:1", "D1:2"]  # the answer right after the question
    boosted = {h.entry.meta["turn"]: h.components["relevance"] for h in hits}
    unboosted = {h.entry.meta["turn"]: h.components["relevance"] for h in plain}
    # neighbour_weight × the relevance of the turn it answers, lent as 1 - (1-own)(1-lent)
    lent = mem.settings.search.neighbour_weight * unboosted["D1:1"]
    expected = 1 - (1 - unboosted["D1:2"]) * (1 - lent)
    assert boosted["D1:2"] == pytest.approx(expected, abs=1e-6) and lent > 0.1
    # the same lines in memory.md: curated, nothing borrowed
    lines = [e.text for e in mem.entries()]
    (empty_workspace / "memory.md").write_text(
        "# Memory\n\n## Facts\n" + "".join(f"- {t}\n" for t in lines)
    )
    (empty_workspace / "conversations" / "trip.md").unlink()
    curated = memory(empty_workspace, model).search(question, limit=6, touch=False)
    curated_plain = memory(empty_workspace, model, search_neighbour_weight="0").search(
        question, limit=6, touch=False
    )
    assert [round(h.score, 9) for h in curated] == [round(h.score, 9) for h in curated_plain]


def test_a_named_period_finds_turns_by_their_date(
    empty_workspace: Path, model: SentenceTransformerEmbedder
) -> None:
    mem = memory(empty_workspace, model)
    mem.import_conversation(json.dumps(TALK), "trip.json")
    hits = mem.search("What did they talk about in June 2023?", limit=2, touch=False)
    assert set(turn_ids(hits)) == {"D2:1", "D2:2"}  # neither text names June
    assert all(h.components["date"] == 1.0 for h in hits)
    # without the date: the same turns, weak ones included (no floor), for the difference
    off = memory(empty_workspace, model, search_date_weight="0", search_relevance_floor="0").search(
        "What did they talk about in June 2023?", limit=6, touch=False
    )
    assert all(h.components["date"] in (0.0, 1.0) for h in off)
    with_date = {h.entry.id: h.score for h in hits}
    without = {h.entry.id: h.score for h in off}
    # the score is the weighted parts over the weights' sum: date_weight (0.1) added
    total = score_weights(mem.settings.search)
    added = {i: with_date[i] * total - without[i] * (total - 0.1) for i in with_date}
    assert all(v == pytest.approx(0.1) for v in added.values())
    keyword = mem.search("8 May 2023", mode="keyword", limit=10, touch=False)
    assert set(turn_ids(keyword)[:4]) == {"D1:1", "D1:2", "D1:3", "D1:4"}  # then "2023"


def test_importing_the_same_conversation_twice_is_refused(
    empty_workspace: Path, model: SentenceTransformerEmbedder
) -> None:
    mem = memory(empty_workspace, model)
    planned = mem.import_conversation(json.dumps(TALK), "trip.json", dry_run=True)
    assert planned[0].turns == 6 and not (empty_workspace / "conversations").exists()
    mem.import_conversation(json.dumps(TALK), "trip.json")
    before = (empty_workspace / "conversations" / "trip.md").read_bytes()
    with pytest.raises(ValidationError, match="conversations/trip.md already exists"):
        mem.import_conversation(json.dumps(TALK), "trip.json")
    assert (empty_workspace / "conversations" / "trip.md").read_bytes() == before
    assert len(mem.entries()) == 6


def test_compress_never_touches_the_turns_of_a_conversation(
    empty_workspace: Path, model: SentenceTransformerEmbedder
) -> None:
    """A log is a record: two turns saying the same thing are two turns, and a 2023 chat is
    not "faded" — under `[forget] scope = "all"` too (the plan still acts elsewhere)."""
    talk = json.loads(json.dumps(TALK))
    talk["conversation"]["session_2"] += [
        {"speaker": "Bo", "dia_id": "D2:3", "text": "Yes, finally, after two whole weeks!"},
        {"speaker": "Ann", "dia_id": "D2:4", "text": "We repainted the kitchen yellow."},
    ]
    (empty_workspace / "memory.md").write_text(
        "# Memory\n\n## Facts\n"
        "- TODO: write a note about the build <!-- id=mold0001 created=2020-01-01T00:00:00Z by=agent -->\n"
    )
    mem = memory(empty_workspace, model, forget_scope="all")
    mem.import_conversation(json.dumps(talk), "trip.json")
    plan = mem.plan_compress()
    touched = {i for action in plan.actions for i in action.ids}
    turns = {e.id for e in mem.entries() if e.file.startswith("conversations/")}
    assert touched and not touched & turns
