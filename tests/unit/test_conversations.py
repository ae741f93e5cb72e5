"""Conversations people bring (memcli.adapters.conversations) and the log file they
become (memcli.services.conversations.render_conversation): pure parts."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from memcli.adapters.conversations import parse_conversations
from memcli.core.errors import ValidationError
from memcli.services.conversations import render_conversation
from memcli.store.markdown import parse

OPENAI = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "We moved the staging database to Postgres 17."},
    {"role": "assistant", "content": [{"type": "text", "text": "Noted: Postgres 17."}]},
    {"role": "user", "content": "Line one\nline two", "created": "2024-05-02T10:00:00Z"},
]

CHATGPT = [
    {
        "title": "Trip planning",
        "create_time": 1714640000.0,
        "current_node": "c",
        "mapping": {
            "root": {"message": None, "parent": None, "children": ["a"]},
            "a": {
                "message": {
                    "id": "a",
                    "author": {"role": "user"},
                    "content": {"content_type": "text", "parts": ["Book Lisbon in May"]},
                    "create_time": 1714640000.0,
                },
                "parent": "root",
                "children": ["b-old", "c"],
            },
            "b-old": {
                "message": {
                    "id": "b-old",
                    "author": {"role": "assistant"},
                    "content": {"parts": ["an answer the user regenerated"]},
                },
                "parent": "a",
                "children": [],
            },
            "c": {
                "message": {
                    "id": "c",
                    "author": {"role": "assistant"},
                    "content": {"parts": ["Lisbon, 12-19 May."]},
                    "create_time": 1714640060.0,
                },
                "parent": "a",
                "children": [],
            },
        },
    }
]

LOCOMO = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Back from Oslo!"}],
        "session_2_date_time": "9:00 am on 3 June, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
            {
                "speaker": "Bo",
                "dia_id": "D1:2",
                "text": "Cute!",
                "blip_caption": "a photo of a grey cat",
            },
        ],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
    },
    "qa": [],
}


def test_openai_messages() -> None:
    [conv] = parse_conversations(json.dumps(OPENAI), "chat.json")
    assert conv.name == "chat"
    assert [(t.speaker, t.text) for t in conv.turns] == [
        ("user", "We moved the staging database to Postgres 17."),
        ("assistant", "Noted: Postgres 17."),
        ("user", "Line one\nline two"),
    ]
    assert conv.turns[2].created == dt.datetime(2024, 5, 2, 10, tzinfo=dt.UTC)
    [wrapped] = parse_conversations(json.dumps({"title": "Ops", "messages": OPENAI}), "x.json")
    assert wrapped.name == "ops" and len(wrapped.turns) == 3
    text = render_conversation(conv, "conversations/chat.md", ["c1", "c2", "c3"])
    assert [e.text for e in parse(text, "conversations/chat.md").entries()][2] == (
        "user: Line one\nline two"  # a multi-line turn stays one entry
    )


def test_chatgpt_export_follows_the_current_branch() -> None:
    [conv] = parse_conversations(json.dumps(CHATGPT), "conversations.json")
    assert conv.name == "trip-planning"
    assert [t.text for t in conv.turns] == ["Book Lisbon in May", "Lisbon, 12-19 May."]
    assert conv.turns[0].created == dt.datetime.fromtimestamp(1714640000.0, dt.UTC)


def test_locomo_sessions_in_order_with_their_times() -> None:
    [conv] = parse_conversations(json.dumps([LOCOMO]), "locomo.json")
    assert conv.name == "conv-x"
    assert [t.source_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1"]
    assert conv.turns[1].text == "Cute! [shared a photo: a photo of a grey cat]"
    assert conv.turns[0].created == dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)
    assert conv.turns[2].session == "session_2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "talk.json: line 1: not JSON"),
        ('{"a": 1}', "talk.json: no conversation turns found"),
        ("[]", "talk.json: no conversation turns found"),
        ('[{"role": "system", "content": "only a system prompt"}]', "no conversation turns"),
    ],
)
def test_what_is_not_a_conversation_is_refused_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_conversations(text, "talk.json")


def test_the_log_reads_back_turn_by_turn_as_a_sequence() -> None:
    [conv] = parse_conversations(json.dumps(LOCOMO), "locomo.json")
    name = "conversations/conv-x.md"
    text = render_conversation(conv, name, ["c1", "c2", "c3"])
    entries = parse(text, name).entries()
    assert [(e.id, e.type, e.text) for e in entries] == [
        ("c1", "turn", "Ann: I adopted a cat."),
        ("c2", "turn", "Bo: Cute! [shared a photo: a photo of a grey cat]"),
        ("c3", "turn", "Bo: Back from Oslo!"),
    ]
    assert entries[0].meta["created"] == "2023-05-08T13:56:00Z"
    assert entries[2].meta["turn"] == "D2:1" and entries[2].meta["src"] == "conv-x"
    assert all(e.provenance == "conversation" for e in entries)
    assert parse(text, name).serialize() == text  # round-trips byte for byte
