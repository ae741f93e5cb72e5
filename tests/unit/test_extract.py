"""Extraction of memories from English and Chinese transcripts, offline: candidates,
sentence splitting, cues, plans (ADD / UPDATE / NOOP) with the hashing embedder.
Through the CLI and with an LLM: tests/integration/test_extract.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.core.models import Entry
from memcli.logic.extract import plan
from memcli.logic.sentences import split_sentences
from memcli.logic.statements import candidates, statements
from memcli.services.memory import Memory
from tests.support.fakes import HashingEmbedder
from tests.support.samples import EN, ZH


def test_candidates_are_explicit_user_statements() -> None:
    found = {(c.type, c.text) for c in candidates(EN)}
    assert found == {
        ("fact", "The staging database lives on db-stage-2"),
        ("preference", "Prefers pytest over unittest for Python tests"),
        ("fact", "User's favourite editor is Helix"),
        ("correction", "The on-call rotation is one week long"),
    }  # hedged "maybe I like tabs" and assistant/tool messages are not kept
    zh = {(c.type, c.text) for c in candidates(ZH)}
    assert zh == {
        ("fact", "周五下午不发布"),
        ("preference", "喜欢用中文讨论架构设计，代码注释用英文"),
        ("correction", "周四下午以后不发布"),
    }
    assert all(c.importance >= 0.7 for c in candidates(EN) + candidates(ZH))


def test_plan_add_update_noop() -> None:
    existing = [
        Entry(
            "m1",
            "Prefers pytest over unittest for Python tests, with fixtures",
            "preference",
            "memory.md",
            1,
            {},
        ),
        Entry("m2", "User's favourite editor is Vim", "fact", "memory.md", 2, {}),
    ]
    decisions = {d.candidate.text: d for d in plan(candidates(EN), existing)}
    assert decisions["Prefers pytest over unittest for Python tests"].action == "NOOP"
    helix = decisions["User's favourite editor is Helix"]
    assert helix.action == "UPDATE" and helix.entry_id == "m2"
    assert decisions["The on-call rotation is one week long"].action == "ADD"


# ---------------------------------------------------------------- issue 15 part 5


def _entry(entry_id: str, text: str, entry_type: str = "fact") -> Entry:
    return Entry(entry_id, text, entry_type, "memory.md", 1, {"id": entry_id})


EXISTING = [
    _entry("mstage", "The staging database is Postgres 16"),
    _entry("murl", "The staging URL is staging-old.techcorp.io"),
    _entry("mcat", "Has a cat named Miso"),
    _entry("mcity", "Lives in Berlin"),
    _entry("mvim", "Uses Vim as the main editor", "preference"),
    _entry("mpytest", "Prefers pytest over unittest for Python tests", "preference"),
    _entry("mfri", "周五下午不发布", "pattern"),
    _entry("moncall", "The on-call rotation is two weeks long; the handbook lives in the ops wiki"),
]


def _decide(*said: str) -> list[tuple[str, str | None, str | None]]:
    messages = [{"role": "user", "content": s} for s in said]
    return [
        (d.action, d.entry_id, d.stored)
        for d in plan(candidates(messages), EXISTING, HashingEmbedder().embed)
    ]


SPLITS = [
    (
        "Remember that our staging URL is staging.techcorp.io. Thanks!",
        ["Remember that our staging URL is staging.techcorp.io.", "Thanks!"],
    ),
    ("We run Python 3.12.1 now. It works.", ["We run Python 3.12.1 now.", "It works."]),
    (
        "The config is in ~/.config/memcli/config.toml. Don't touch it.",
        ["The config is in ~/.config/memcli/config.toml.", "Don't touch it."],
    ),
    (
        "Docs: https://example.com/a.b?c=1. Mail jane.doe@corp.com. Ok?",
        ["Docs: https://example.com/a.b?c=1.", "Mail jane.doe@corp.com.", "Ok?"],
    ),
    (
        "It costs 3.50 e.g. per seat. Dr. Smith is in the U.S. now. Fine.",
        ["It costs 3.50 e.g. per seat.", "Dr. Smith is in the U.S. now.", "Fine."],
    ),
    ("I like tea, i.e. green tea. Ok", ["I like tea, i.e. green tea.", "Ok"]),
    ("Run ./scripts/setup.sh first\nthen pytest", ["Run ./scripts/setup.sh first", "then pytest"]),
    (
        "记住：周五下午不发布。我喜欢喝茶！好吗？",
        ["记住：周五下午不发布。", "我喜欢喝茶！", "好吗？"],
    ),
    ("对了，记住服务器是 10.0.0.5。好的", ["对了，记住服务器是 10.0.0.5。", "好的"]),
]


def test_sentence_splitting_keeps_hosts_versions_paths_urls_and_abbreviations_whole() -> None:
    for text, expected in SPLITS:
        assert split_sentences(text) == expected, text


def test_the_four_examples_of_the_issue() -> None:
    (url,) = candidates(
        [{"role": "user", "content": "Remember that our staging URL is staging.techcorp.io"}]
    )
    assert url.text == "Our staging URL is staging.techcorp.io"
    also = candidates(
        [
            {
                "role": "user",
                "content": "Thanks, that fixed it, and also remember that release branches are cut on Mondays.",
            }
        ]
    )
    assert [c.text for c in also] == ["Release branches are cut on Mondays"]
    (cat,) = candidates([{"role": "user", "content": "My cat's name is Miso"}])
    assert cat.text == "User's cat's name is Miso"
    assert _decide("My cat's name is Miso") == [("NOOP", "mcat", None)]  # "Has a cat named Miso"
    assert _decide("Actually, the staging database is Postgres 17") == [
        ("UPDATE", "mstage", "The staging database is Postgres 17")
    ]  # never ADDed beside the Postgres 16 entry
    assert _decide("Remember that our staging URL is staging.techcorp.io") == [
        ("UPDATE", "murl", "Our staging URL is staging.techcorp.io")
    ]


def test_cues_anywhere_in_a_sentence() -> None:
    cases = {
        "The deploy went fine. btw my timezone is CET": [("User's timezone is CET", "fact")],
        "Sure, oh and I prefer tabs in Makefiles.": [("Prefers tabs in Makefiles", "preference")],
        "Great, merged - also remember that invoices go to billing@techcorp.io.": [
            ("Invoices go to billing@techcorp.io", "fact")
        ],
        "I prefer ruff, and I live in Hamburg.": [
            ("Prefers ruff", "preference"),
            ("Lives in Hamburg", "fact"),
        ],
        "好的，谢谢。对了，记住测试环境的地址是 test.techcorp.cn。": [
            ("测试环境的地址是 test.techcorp.cn", "fact")
        ],
        "顺便说一下，我喜欢喝乌龙茶。": [("喜欢喝乌龙茶", "preference")],
        "I always write the failing test first.": [
            ("Always writes the failing test first", "pattern")
        ],
        "I don't like ORMs that hide the SQL.": [
            ("Does not like ORMs that hide the SQL", "preference")
        ],
        "I work at Initech.": [("Works at Initech", "fact")],
    }
    for said, expected in cases.items():
        found = [(c.text, c.type) for c in candidates([{"role": "user", "content": said}])]
        assert found == expected, said


def test_questions_hypotheticals_other_people_small_talk_and_hedges() -> None:
    for said in [
        "Do you remember what my timezone is?",
        "Is the staging database Postgres 16 or 17?",
        "If I moved to Berlin, I would live in Kreuzberg.",
        "Suppose my timezone is UTC, what would the cron line be?",
        "假如我喜欢 Emacs，你会推荐什么插件？",
        "My colleague Dave prefers Emacs.",
        "我同事喜欢用 Emacs。",
        "I like that idea!",
        "My bad, I pasted the wrong log.",
        "I'm a bit tired today, let's keep it short.",
        "I have a question about the retry logic.",
        "我喜欢这个方案。",
        "Maybe I prefer tabs, not sure yet.",
        "我可能喜欢深色主题吧。",
    ]:
        assert candidates([{"role": "user", "content": said}]) == [], said
    # hedged statements score lower: kept only when the cue itself scores high
    assert statements("I think I prefer dark themes.") == [
        ("Prefers dark themes", "preference", 0.6)
    ]
    assert statements("Remember that the build maybe needs Java 21.")[0][2] == 0.7
    # asking to remember is no question to skip
    assert [
        c.text
        for c in candidates(
            [{"role": "user", "content": "Can you remember that my birthday is May 3?"}]
        )
    ] == ["User's birthday is May 3"]


def test_corrections_update_the_entry_they_correct() -> None:
    assert _decide("No, the staging database is Postgres 17.") == [
        ("UPDATE", "mstage", "The staging database is Postgres 17")
    ]
    assert _decide("The staging database is actually Postgres 15.") == [
        ("UPDATE", "mstage", "The staging database is Postgres 15")
    ]
    assert _decide("I moved to Lisbon last month.") == [("UPDATE", "mcity", "Lives in Lisbon")]
    assert _decide("I don't use Vim any more.") == [("UPDATE", "mvim", "No longer uses Vim")]
    assert _decide("Correction: the on-call rotation is one week long.") == [
        ("UPDATE", "moncall", "The on-call rotation is one week long")
    ]  # the statement replaces the text as a whole; the old one goes to archive.md


def test_a_rewrite_never_splices_a_statement_into_old_text_it_keeps() -> None:
    """Issue 37 §6 (DESIGN §7): a correction of one clause of an entry replaces its text as
    a whole, so no kept clause ("ask her …") is left speaking of someone else."""
    alice = _entry(
        "malice", "Alice owns the payments integration with Stripe; ask her before touching webhooks"
    )
    said = "Actually, Alice moved to the platform team; Bob owns the Stripe integration now"
    found = candidates([{"role": "user", "content": said}])
    decisions = [(d.action, d.entry_id, d.stored) for d in plan(found, [alice])]
    assert decisions == [
        ("UPDATE", "malice", "Alice moved to the platform team; Bob owns the Stripe integration")
    ]


def test_a_chinese_correction_updates_the_entry() -> None:
    assert _decide("不对，应该是周四下午以后不发布。") == [("UPDATE", "mfri", "周四下午以后不发布")]
    # said and corrected in one conversation: only the correction is added
    decisions = _decide("记住：周三上午不开会。", "不对，应该是周三下午不开会。")
    assert [d for d in decisions if d[0] != "NOOP"] == [("ADD", None, "周三下午不开会")]


def test_restatements_are_noops_and_new_details_updates() -> None:
    assert _decide("I live in Berlin.") == [("NOOP", "mcity", None)]
    assert _decide("Remember that the staging database is Postgres 16.") == [
        ("NOOP", "mstage", None)
    ]
    assert _decide("I live in Berlin, near Tempelhof.") == [
        ("UPDATE", "mcity", "Lives in Berlin, near Tempelhof")
    ]
    assert _decide("I prefer pytest over unittest, with fixtures instead of setUp methods.") == [
        (
            "UPDATE",
            "mpytest",
            "Prefers pytest over unittest, with fixtures instead of setUp methods",
        )
    ]
    assert _decide("I prefer ruff for linting.") == [("ADD", None, "Prefers ruff for linting")]


def test_an_update_archives_the_old_text_as_superseded(empty_workspace: Path) -> None:
    mem = Memory(empty_workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    old = mem.add("The staging database is Postgres 16").entry
    (decision,) = mem.extract(
        [{"role": "user", "content": "Actually, the staging database is Postgres 17"}],
        source="conv-9",
    )
    assert (decision.action, decision.entry_id) == ("UPDATE", old.id)
    live = [e.text for e in mem.entries()]
    assert live == ["The staging database is Postgres 17"]  # updated in place, same id
    assert mem.get(old.id).entry.source == "conv-9"
    (archived,) = [e for e in mem.entries(include_archived=True) if e.file == "archive.md"]
    assert archived.text == "The staging database is Postgres 16" and archived.id != old.id
    assert archived.meta["reason"] == f"superseded by {old.id}"
    assert archived.meta["replaced_by"] == old.id
    again = mem.extract(
        [{"role": "user", "content": "Actually, the staging database is Postgres 17"}]
    )
    assert [d.action for d in again] == ["NOOP"]  # nothing archived twice
    assert len([e for e in mem.entries(include_archived=True) if e.file == "archive.md"]) == 1


def test_an_updated_hand_kept_entry_is_extracts_and_a_lasting_fact_still_stays(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hand-written entry extract updates stays as it is; extract's text waits beside
    it as the program's proposal (DESIGN §4; what waits for review:
    tests/integration/test_agent_rewrites.py), and a lasting fact about the person never
    fades for age (DESIGN §5.1). A program's own entry is rewritten in place."""
    import datetime as dt

    from memcli.core.models import format_time, utc_now

    old = format_time(utc_now() - dt.timedelta(days=90))
    (empty_workspace / "memory.md").write_text(
        "# Memory\n\n## Facts\n"
        f"- Lives in Berlin <!-- id=mhand imp=0.5 created={old} -->\n"
        f"- The build server is ci-7 <!-- id=mbot imp=0.5 created={old} by=agent -->\n",
        encoding="utf-8",
    )
    mem = Memory(empty_workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    said = "I live in Berlin, near Tempelhof. Remember that the build server is ci-7 in rack 4."
    decisions = mem.extract([{"role": "user", "content": said}], source="conv-3")
    (proposal,) = [e for e in mem.entries() if e.id not in ("mhand", "mbot")]
    assert [(d.action, d.entry_id) for d in decisions] == [
        ("UPDATE", "mhand"),
        ("UPDATE", "mbot"),
    ]
    assert (mem.get("mhand").entry.text, mem.get("mhand").entry.provenance) == (
        "Lives in Berlin", "hand"
    )
    assert proposal.meta["by"] == "extract" and proposal.meta["review"] == "rewrite:mhand"
    assert mem.get("mbot").entry.provenance == "machine"
    assert "rack 4" in mem.get("mbot").entry.text
    later = utc_now() + dt.timedelta(days=120)
    monkeypatch.setattr("memcli.services.maintain.utc_now", lambda: later)
    assert not {"mhand", proposal.id} & set(mem.plan_compress().removed_ids())
    again = mem.extract([{"role": "user", "content": said}], source="conv-3")
    assert [d.action for d in again][0] == "NOOP"  # said again: the proposal waits as it is
    assert [e.id for e in mem.entries()] == ["mhand", "mbot", proposal.id]


# ------------------------------------------------------- issue 26 §1: the target named


def _dated(entry_id: str, text: str, created: str, entry_type: str = "fact") -> Entry:
    meta = {"id": entry_id, "created": created}
    return Entry(entry_id, text, entry_type, "memory.md", 1, meta)


#: (entries of one slot, oldest first; what is said; the entry it updates; stored text)
TARGETS = [
    (  # the issue's case: the statement names Munich, the newer one
        [("mber", "Lives in Berlin"), ("mmuc", "Lives in Munich")],
        "I moved, I live in Leipzig now, not Munich",
        "mmuc",
        "Lives in Leipzig",
    ),
    (  # it names the older one: that one, not the newest
        [("mmuc", "Lives in Munich"), ("mber", "Lives in Berlin")],
        "I live in Leipzig now, not Munich",
        "mmuc",
        "Lives in Leipzig",
    ),
    (  # names none: the newest of the slot
        [("mber", "Lives in Berlin"), ("mmuc", "Lives in Munich")],
        "I live in Leipzig now",
        "mmuc",
        "Lives in Leipzig",
    ),
    (
        [("mtc", "Works at TechCorp"), ("mds", "Works at DataSoft")],
        "Actually I work at Initech, no longer at TechCorp",
        "mtc",
        "Works at Initech",
    ),
    (
        [("mvim", "Uses Vim"), ("memacs", "Uses Emacs")],
        "I use Helix instead of Vim now",
        "mvim",
        "Uses Helix",
    ),
    (
        [("zsh", "住在上海"), ("zbj", "住在北京")],
        "我搬到杭州了，不住在上海了",
        "zsh",
        "住在杭州",
    ),
    (
        [("zsh", "住在上海"), ("zbj", "住在北京")],
        "我现在住在杭州",
        "zbj",
        "住在杭州",
    ),
]


@pytest.mark.parametrize(("slot", "said", "target", "stored"), TARGETS)
def test_an_update_goes_to_the_entry_the_statement_names_else_the_newest(
    slot: list[tuple[str, str]], said: str, target: str, stored: str
) -> None:
    existing = [
        _dated(entry_id, text, f"2026-0{n + 1}-01T10:00:00Z")
        for n, (entry_id, text) in enumerate(slot)
    ]
    decisions = plan(
        candidates([{"role": "user", "content": said}]), existing, HashingEmbedder().embed
    )
    assert [(d.action, d.entry_id, d.stored) for d in decisions] == [("UPDATE", target, stored)]


def test_a_reflection_or_a_conversation_turn_is_never_updated() -> None:
    existing = [
        _dated("mref", "Lives in Munich", "2026-05-01T10:00:00Z", "reflection"),
        Entry("c1", "Lives in Munich", "fact", "conversations/chat.md", 1, {"id": "c1"}),
    ]
    decisions = plan(
        candidates([{"role": "user", "content": "I live in Leipzig now, not Munich"}]),
        existing,
        HashingEmbedder().embed,
    )
    assert [(d.action, d.stored) for d in decisions] == [("ADD", "Lives in Leipzig")]
