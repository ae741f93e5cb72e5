"""compress, its pure parts: conflicting values, retention, star groups, provenance,
structural similarity verdicts, which of two entries is newer, taking back an archive
copy; and plans over generated workspaces with the hashing embedder (forgetting scope,
a token target). End to end with the real model: tests/integration/test_compress.py."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import replace
from pathlib import Path

import pytest

from memcli.adapters.tokens import get_counter
from memcli.core.models import Entry, format_time, utc_now
from memcli.logic.compress import conflicting_values
from memcli.logic.consolidation import star_groups
from memcli.logic.forgetting import retention
from memcli.services.memory import Memory
from memcli.store.access import Access
from memcli.store.config import CompressSettings, load_settings

NOW = utc_now()


def ago(days: float) -> str:
    return format_time(NOW - dt.timedelta(days=days))


# ---------------------------------------------------------------------- pure pieces


def test_conflicting_values() -> None:
    assert conflicting_values("Uses Python 3.10 for services", "Uses Python 3.12 for services")
    assert conflicting_values("Lives in Berlin", "Lives in Paris")
    assert conflicting_values("团队用的是 Postgres 14", "团队用的是 Postgres 16")
    assert not conflicting_values("Likes Python", "Likes Rust")  # both can be true
    assert not conflicting_values("Prefers pytest", "Prefers pytest")
    assert not conflicting_values(
        "The Kafka cluster has six brokers", "The Kafka cluster is upgraded every quarter"
    )


def test_retention_matches_seed_002() -> None:
    cfg = CompressSettings()
    entry = Entry("a", "x", "fact", "memory.md", 1, {"imp": "0.5", "created": ago(10)})
    # 0.9^(240 h / 24) · 0.75
    assert retention(entry, None, NOW, cfg) == pytest.approx(0.9**10 * 0.75, rel=1e-6)
    accessed = Access(2, ago(10))
    assert retention(entry, accessed, NOW, cfg) == pytest.approx(
        0.9 ** (240 / (24 * 1.5**2)) * 0.75, rel=1e-6
    )
    episode = Entry("e", "x", "episode", "episodes/d.md", 1, {"created": ago(10)})
    assert retention(episode, None, NOW, cfg) == pytest.approx(0.9**30 * 0.75, rel=1e-6)
    undated = Entry("u", "x", "fact", "memory.md", 1, {"imp": "0.2"})
    assert retention(undated, None, NOW, cfg) == pytest.approx(0.6)


def test_star_groups_take_no_chains_and_leave_no_group_behind() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    groups = star_groups(vectors, 0.5, 3)
    used = [i for g in groups for i in g]
    assert len(used) == len(set(used))
    for group in groups:
        sims = vectors[group] @ vectors[group].T
        assert (sims >= 0.5).all(axis=1).any()  # one member is close to all the others
    left = [i for i in range(300) if i not in set(used)]
    assert star_groups(vectors[left], 0.5, 3) == []


def test_taking_back_an_archive_copy_keeps_an_older_one_with_that_id(tmp_path: Path) -> None:
    """An entry forgotten earlier (its copy in archive.md) is live again under the same id
    (an editor's stale buffer put it back); a compress that plans to archive it but finds
    it edited takes back only its own copy, never the older one."""
    from memcli.store.changes import Plan, Removal, apply
    from memcli.store.store import Store

    root = tmp_path / "ws"
    root.mkdir()
    (root / "memory.md").write_text("## Facts\n- Lives in Lisbon <!-- id=mback -->\n")
    (root / "learnings.md").write_text("")
    old_copy = (
        "- Lives in Porto <!-- id=mback archived=2026-01-02T00:00:00Z reason=forgotten "
        "from=memory.md type=fact -->\n"
    )
    (root / "archive.md").write_text("# Archive\n\n" + old_copy)
    store = Store(root)
    live = store.load("memory.md").find("mback").entry
    planned = replace(live, text="Lives in Lisbon, planned")  # edited after planning
    applied = apply(store, Plan(removals=[Removal(planned, "faded")]))
    assert applied.skipped == ["mback"]
    assert old_copy in (root / "archive.md").read_text()
    assert "Lives in Lisbon <!-- id=mback -->" in (root / "memory.md").read_text()


# ---------------------------------------------------------------------- provenance (§5.1)


def test_provenance_of_every_kind_of_entry() -> None:
    def entry(meta: dict[str, str], type_: str = "fact", file: str = "memory.md") -> Entry:
        return Entry("x", "t", type_, file, 1, meta)

    assert entry({}).provenance == "hand"
    assert entry({"id": "m1", "imp": "0.4", "created": ago(3)}).provenance == "hand"
    assert entry({"by": "person"}).provenance == "person"
    assert entry({"by": "person", "src": "chat"}).provenance == "person"
    for by in ("extract", "agent", "compress"):
        assert entry({"by": by}).provenance == "machine"
    assert entry({"src": "chat-1"}).provenance == "machine"  # an older extract/agent write
    assert entry({}, "episode", "episodes/2026-01-02.md").provenance == "episode"
    assert entry({"by": "reflect"}).provenance == "reflection"
    assert entry({}, "reflection").provenance == "reflection"
    assert entry({"by": "agent", "pin": "true"}).confirmed
    assert not entry({"by": "agent"}).confirmed and entry({}).confirmed


def _old_workspace(root: Path, count: int, extra_meta: str = "", prefix: str = "") -> Path:
    """memory.md with `count` distinct hand-written facts, all 22 days old (each text
    after `prefix`: "TODO: " makes them task notes)."""
    import random

    rng = random.Random(7)
    words = [
        f"{a}{b}"
        for a in ("ka", "lo", "mi", "ru", "se", "to", "vi", "ze")
        for b in ("ban", "cor", "dun", "fel", "gim", "hox", "jup", "kel", "lom", "nar")
    ]
    lines = ["# Memory", "", "## Facts"]
    for i in range(count):
        text = prefix + " ".join(rng.sample(words, 6)).capitalize() + f" (item {i})"
        lines.append(f"- {text} <!-- id=h{i:05d} imp=0.3 created={ago(22)}{extra_meta} -->")
    root.mkdir(parents=True, exist_ok=True)
    (root / "memory.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.mark.slow
def test_old_hand_written_entries_never_fade_but_machine_ones_do(tmp_path: Path) -> None:
    """600 hand-written entries 22 days old: nothing archived for age (it was all of
    them). The same file written by a program as task notes fades as seed 002 says; as
    lasting facts it does not (issue 26: fading is for what is transient)."""
    from tests.support.fakes import HashingEmbedder

    # 1,024 buckets: in 64, a tenth of these made-up sentences (six of 80 words each)
    # look alike, and judging those 440,000 pairs took most of a minute
    embedder = functools.partial(HashingEmbedder, dim=1024)
    hand = Memory(_old_workspace(tmp_path / "hand", 600), embedder_factory=embedder)
    plan = hand.plan_compress()
    assert not [a for a in plan.actions if a.kind in ("forget", "consolidate")]
    assert not plan.removals, [a.summary for a in plan.actions][:5]

    machine_root = _old_workspace(tmp_path / "machine", 300, " by=extract", "TODO: ")
    machine = Memory(machine_root, embedder_factory=embedder)
    faded = {a.ids[0] for a in machine.plan_compress().actions if a.kind == "forget"}
    assert len(faded) == 300  # 0.9^22 · 0.65 < 0.1
    lasting = Memory(
        _old_workspace(tmp_path / "lasting", 300, " by=extract"), embedder_factory=embedder
    )
    assert not [a for a in lasting.plan_compress().actions if a.kind == "forget"]


def test_forget_scope_setting(tmp_path: Path) -> None:
    from tests.support.fakes import HashingEmbedder

    root = _old_workspace(tmp_path / "ws", 20)
    with (root / "memory.md").open("a", encoding="utf-8") as handle:
        handle.write(
            f"- Had lunch with the platform team <!-- id=mach imp=0.3 created={ago(60)} by=agent -->\n"
            f"- TODO: renew the passport <!-- id=mtodo imp=0.3 created={ago(60)} -->\n"
        )

    def forgotten(scope: str | None) -> set[str]:
        toml = root / "memcli.toml"
        toml.write_text(f'[forget]\nscope = "{scope}"\n' if scope else "", encoding="utf-8")
        mem = Memory(root, embedder_factory=HashingEmbedder)
        assert mem.settings.forget.scope == (scope or "machine")
        return {a.ids[0] for a in mem.plan_compress().actions if a.kind == "forget"}

    assert forgotten(None) == {"mach"}
    assert forgotten("machine") == {"mach"}
    assert forgotten("all") == {"mach", "mtodo"}  # the lasting h… facts never fade
    assert forgotten("none") == set()
    (root / "memcli.toml").write_text('[forget]\nscope = "everything"\n', encoding="utf-8")
    settings = load_settings(root)  # a bad value: named with its line, the default kept
    assert settings.forget.scope == "machine" and "forget.scope" in settings.problems[0]


def test_target_tokens_sheds_machine_entries_before_a_persons(tmp_path: Path) -> None:
    from tests.support.fakes import HashingEmbedder

    root = _old_workspace(tmp_path / "ws", 30)
    with (root / "memory.md").open("a", encoding="utf-8") as handle:
        for i, word in enumerate(
            ["docker", "gradle", "maven", "npm", "pip", "cargo", "bazel", "make", "cmake", "go"]
        ):
            handle.write(
                f"- Chat note: {word} flakes in the build <!-- id=a{i} imp=0.8 "
                f"created={ago(1)} by=agent -->\n"
            )
    (root / "memcli.toml").write_text('[forget]\nscope = "none"\n', encoding="utf-8")
    mem = Memory(root, embedder_factory=HashingEmbedder)
    full = get_counter().count((root / "memory.md").read_text(encoding="utf-8"))
    plan = mem.plan_compress(target_tokens=full - 60)
    fitted = [a.ids[0] for a in plan.actions if a.kind == "fit"]
    assert fitted and all(i.startswith("a") for i in fitted)


# ---------------------------------------------------------------------- same fact, other value (§5.2-5.3)


def test_similarity_verdicts_are_structural() -> None:
    """Pure: the structural signs decide whatever the cosine (cosines given here)."""
    from memcli.logic.similarity import verdict

    def said(a: str, b: str, cosine: float = 0.9) -> str:
        return verdict(a, b, cosine, 0.65, 0.5)

    assert (
        said(
            "Prefers pytest for testing Python code",
            "The user prefers pytest when testing Python code",
        )
        == "duplicate"
    )
    assert said("Uses Neovim for Python", "Uses VS Code for TypeScript") == "distinct"
    assert said("Lives in Berlin", "Works in Berlin") == "distinct"
    assert said("Has a cat named Miso", "Has a dog named Miso") == "distinct"
    assert said("Lives in Berlin", "Lives in Lisbon", 0.5) == "contradiction"  # place
    assert said("Manager is Priya Raman", "Manager is Tom Becker", 0.4) == "contradiction"
    assert said("Works at TechCorp", "Works at DataSoft", 0.24) == "contradiction"  # name
    assert (
        said("The on-call rotation is two weeks long", "The on-call rotation is one week long")
        == "contradiction"
    )  # duration
    assert said("Drinks coffee", "Doesn't drink coffee") == "contradiction"  # yes/no
    assert said("住在北京", "住在上海") == "contradiction"
    assert said("喜欢喝咖啡", "不喜欢喝咖啡") == "contradiction"
    assert said("Likes Python", "Likes Rust") == "distinct"  # both can be true
    assert said("Speaks French", "Speaks German") == "distinct"
    assert said("Has been to Japan twice", "Has been to Korea once") == "distinct"
    assert said("Drinks coffee in the morning", "Drinks tea in the afternoon") == "distinct"
    assert said("Standup is at 9:30", "Retro is at 16:00") == "distinct"


def test_an_undated_hand_written_entry_is_not_superseded_by_a_program() -> None:
    from memcli.logic.compress import newer_of

    hand = Entry("h", "Lives in Porto", "fact", "memory.md", 1, {})
    machine = Entry(
        "m", "Lives in Lyon", "fact", "memory.md", 2, {"by": "agent", "created": ago(1)}
    )
    assert newer_of(hand, machine, {"h": 0, "m": 1}) == (hand, machine)
    person = Entry(
        "p", "Lives in Lyon", "fact", "memory.md", 0, {"by": "person", "created": ago(1)}
    )
    assert newer_of(hand, person, {"p": 0, "h": 1}) == (hand, person)  # later in the file


def _plan_of(lines: list[tuple[str, str, dict[str, str]]]):  # noqa: ANN202 - a Plan
    """plan_compress on entries whose vectors are all one (cosine 1: only the words and
    their structure tell them apart)."""
    import numpy as np

    from memcli.logic.compress import Context, plan_compress

    entries = [
        Entry(i, text, "preference", "memory.md", n, {"id": i, **meta}, True)
        for n, (i, text, meta) in enumerate(lines)
    ]
    vectors = np.ones((len(entries), 4)) / 2.0
    ctx = Context(CompressSettings(), NOW, lambda file: "new", {})
    return plan_compress(entries, vectors, ctx)


def test_a_merge_never_drops_a_detail() -> None:
    """Issue 15: a person's detailed entry is not replaced by a newer, shorter wording of
    it: the merge keeps the text that says everything; entries that only chain through
    another (each with a detail of its own) are not merged into each other."""
    detailed = (
        "Prefers pytest over unittest for Python tests, with fixtures instead of setUp methods"
    )
    plan = _plan_of(
        [
            ("m8f3a2c1", detailed, {"created": ago(4)}),
            ("p1", "Prefers pytest for testing Python code", {"created": ago(1), "by": "person"}),
        ]
    )
    assert [(a.kind, a.ids) for a in plan.actions] == [("merge", ("m8f3a2c1", "p1"))]
    assert [w.entry.text for w in plan.writes] == [detailed]
    assert plan.removed_ids() == {"p1"}
    # the newer wording of the two paraphrases is not "the same" as the detailed entry
    # (one slot swapped): the older goes into the detailed entry, the newer stays
    three = _plan_of(
        [
            ("m8f3a2c1", detailed, {"created": ago(4)}),
            ("p1", "Prefers pytest for testing Python code", {"created": ago(1), "by": "person"}),
            (
                "p2",
                "The user prefers pytest when testing Python code",
                {"created": ago(0.5), "by": "person"},
            ),
        ]
    )
    assert [(a.kind, a.ids) for a in three.actions] == [("merge", ("m8f3a2c1", "p1"))]
    assert [w.entry.text for w in three.writes] == [detailed]
    # a chain: "Prefers pytest" goes into one of the two, neither detail is lost
    chain = _plan_of(
        [
            ("c1", "Prefers pytest with fixtures", {"created": ago(3)}),
            ("c2", "Prefers pytest", {"created": ago(2)}),
            ("c3", "Prefers pytest with parametrize", {"created": ago(1)}),
        ]
    )
    assert [(a.kind, a.ids) for a in chain.actions] == [("merge", ("c3", "c2"))]
    assert chain.removed_ids() == {"c2"}
    pair = _plan_of(
        [
            ("d1", "Prefers pytest with fixtures", {"created": ago(3)}),
            ("d2", "Prefers pytest", {"created": ago(2)}),
        ]
    )
    assert [w.entry.text for w in pair.writes] == ["Prefers pytest with fixtures"]
    paraphrase = _plan_of(
        [
            ("e1", "Prefers pytest for testing Python code", {"created": ago(3)}),
            ("e2", "The user prefers pytest when testing Python code", {"created": ago(2)}),
        ]
    )
    assert [w.entry.text for w in paraphrase.writes] == [
        "The user prefers pytest when testing Python code"  # the newest wording
    ]


# ---------------------------------------------------------------------- issue 26 §2

#: (a, b, cosine the bundled model gives them, verdict): each side says something the
#: other does not → two facts unless the meanings are this close; a light verb swapped
#: at the start is a rewording; other numbers are another fact
SAME_OR_NOT = [
    ("Prefers pytest for testing Python code", "Prefers pytest markers for slow tests", 0.66,
     "distinct"),
    ("Drinks oat milk in coffee", "Takes oat milk in their coffee", 0.84, "duplicate"),
    ("Uses a split keyboard", "Types on a split keyboard", 0.80, "duplicate"),
    ("Chat note: go flakes in the build", "Chat note: docker flakes in the build", 0.8,
     "distinct"),  # "go" mid-sentence is a value, not a light verb
    ("Takes the bus to work", "Takes the bus to the gym", 0.72, "distinct"),
    ("Prefers small functions with descriptive names",
     "Likes short functions that have descriptive names", 0.73, "duplicate"),
    ("每周跑四十公里", "每周日跑十公里", 0.86, "distinct"),
    ("Dislikes long meetings without an agenda",
     "Doesn't like long meetings that have no agenda", 0.84, "duplicate"),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b", "cosine", "expected"), SAME_OR_NOT)
def test_merges_only_what_is_the_same(a: str, b: str, cosine: float, expected: str) -> None:
    from memcli.logic.similarity import verdict

    assert verdict(a, b, cosine, CompressSettings().duplicate_threshold, 0.5) == expected
    assert verdict(b, a, cosine, CompressSettings().duplicate_threshold, 0.5) == expected


def test_a_merge_keeps_the_persons_wording() -> None:
    from memcli.logic.compress import merges

    person = Entry("p", "Drinks oat milk in coffee", "preference", "memory.md", 1, {})
    agent = Entry(
        "a", "Takes oat milk in their coffee", "preference", "memory.md", 2, {"by": "agent"}
    )
    longer = Entry(
        "l", "Drinks oat milk in coffee every morning", "preference", "memory.md", 3,
        {"by": "agent"},
    )  # fmt: skip
    assert merges([agent, person], lambda x, y: True) == [(person, [agent])]
    # a program's text that says more never swallows the person's: both stay
    assert merges([longer, person], lambda x, y: True) == []


#: (text, type, file, meta, transient?)
TRANSIENT = [
    ("Has a cat named Miso", "fact", "memory.md", {"by": "agent"}, False),
    ("Prefers pytest for testing Python code", "preference", "memory.md", {}, False),
    ("Had a sandwich for lunch at the corner cafe", "fact", "memory.md", {}, True),
    ("Dentist appointment tomorrow at 10:30", "fact", "memory.md", {}, True),
    ("TODO: renew the passport", "fact", "memory.md", {}, True),
    ("Standup moved to 2026-12-01", "fact", "memory.md", {}, True),
    ("Mother's birthday is on 14 March", "fact", "memory.md", {}, False),
    ("Flight to Tokyo", "event", "memory.md", {}, True),
    ("Wi-Fi password rotates", "fact", "memory.md", {"expires": "2026-12-31"}, True),
    ("15:05 Lunch with the team", "episode", "episodes/2026-10-01.md", {}, True),
    ("明天下午三点开会", "fact", "memory.md", {}, True),
    ("养了一只叫 Miso 的猫", "fact", "memory.md", {}, False),
]


@pytest.mark.parametrize(("text", "kind", "file", "meta", "expected"), TRANSIENT)
def test_only_what_passes_may_fade(
    text: str, kind: str, file: str, meta: dict, expected: bool
) -> None:
    from memcli.logic.forgetting import may_fade, transient

    entry = Entry("x", text, kind, file, 1, dict(meta, by=meta.get("by", "agent")))
    assert transient(entry) is expected
    assert may_fade(entry, "machine") is expected  # a program wrote it: only if it passes


def test_an_undated_episode_note_ages_from_its_day() -> None:
    from memcli.logic.forgetting import written_at

    note = Entry("e", "15:05 Lunch with the team", "episode", "episodes/2026-10-01.md", 1, {})
    assert written_at(note) == dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
