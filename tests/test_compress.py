"""compress end to end with the real model: planted duplicates, contradictions, stale
entries, a consolidation theme and old episode notes are each handled, nothing is lost,
restore brings back exactly what left, and a second run changes nothing."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.changes import ARCHIVE_KEYS
from memcli.cli import app
from memcli.compress import conflicting_values, retention, star_groups
from memcli.config import CompressSettings, load_settings
from memcli.index.access import Access, AccessStats
from memcli.memory import Memory
from memcli.models import Entry, format_time, utc_now
from memcli.store.markdown import parse
from memcli.tokens import get_counter
from memcli.trust import trust
from tests.llm_server import FakeLLM

NOW = utc_now()


def ago(days: float) -> str:
    return format_time(NOW - dt.timedelta(days=days))


PROSE = "Hand-written notes about me. This paragraph must survive compress untouched.\n"


def planted(root: Path) -> Path:
    """A workspace with one of each case compress must handle."""
    root.mkdir(parents=True, exist_ok=True)
    old_day = (NOW - dt.timedelta(days=20)).date().isoformat()
    (root / "memory.md").write_text(
        f"""# Memory

{PROSE}
## Preferences
- Prefers dark mode in every editor and terminal <!-- id=mdup1 imp=0.6 created={ago(3)} kw=editor -->
- Prefers dark mode in all editors and terminals <!-- id=mdup2 imp=0.8 created={ago(1)} kw=theme -->
- prefers dark mode in every editor and terminal. <!-- id=mdup3 imp=0.4 created={ago(2)} -->
- Likes mechanical keyboards <!-- id=mpin1 pin=true created={ago(400)} -->

## Facts
- The billing API service runs on Python 3.10 <!-- id=mold1 imp=0.7 created={ago(5)} -->
- The billing API service runs on Python 3.12 <!-- id=mnew1 imp=0.7 created={ago(1)} -->
- Had a sandwich for lunch at the corner cafe <!-- id=mstale imp=0.3 created={ago(200)} -->
- The Kafka cluster has six brokers in the EU region <!-- id=mk1 imp=0.6 created={ago(90)} kw=kafka -->
- The Kafka cluster keeps topics replicated three times <!-- id=mk2 imp=0.7 created={ago(80)} kw=kafka,replication -->
- Kafka cluster consumer lag is watched in Grafana dashboards <!-- id=mk3 imp=0.5 created={ago(70)} kw=kafka,grafana -->
- The Kafka cluster is upgraded every quarter <!-- id=mk4 imp=0.6 created={ago(60)} kw=kafka -->
- The company's fiscal year starts in April <!-- id=mimp imp=0.95 created={ago(300)} -->
- Has a cat named Miso

## Reflections
- Infrastructure questions come up every week <!-- id=mref created={ago(300)} src=mk1,mk2 -->
""",
        encoding="utf-8",
    )
    (root / "learnings.md").write_text(
        f"""# Learnings

## Lessons
- Run the migration on staging before production <!-- id=lnew imp=0.8 created={ago(2)} -->
""",
        encoding="utf-8",
    )
    (root / "episodes").mkdir(exist_ok=True)
    (root / "episodes" / f"{old_day}.md").write_text(
        f"""# {old_day}

## Episodes
- Incident review: the cache stampede took the API down for ten minutes <!-- id=eold1 created={old_day}T10:00:00Z -->
- Cache stampede on the API: add request coalescing next time <!-- id=eold2 created={old_day}T11:00:00Z -->
""",
        encoding="utf-8",
    )
    (root / "episodes" / f"{NOW.date().isoformat()}.md").write_text(
        f"""# today

## Episodes
- Paired with Sam on the search ranking <!-- id=enew created={ago(0)} -->
""",
        encoding="utf-8",
    )
    return root


def texts_everywhere(root: Path) -> list[str]:
    names = ["memory.md", "learnings.md", "archive.md"]
    names += [f"episodes/{p.name}" for p in (root / "episodes").glob("*.md")]
    found = []
    for name in names:
        path = root / name
        if path.exists():
            found += [e.text for e in parse(path.read_text(encoding="utf-8"), name).entries()]
    return found


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*.md"))
        if ".memcli" not in p.parts
    }


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


# ---------------------------------------------------------------------- end to end


def test_compress_handles_every_planted_case(tmp_path: Path) -> None:
    root = planted(tmp_path / "ws")
    AccessStats(root / ".memcli").touch(["mdup1", "mdup1", "mdup3"])
    before_texts = texts_everywhere(root)
    mem = Memory(root)
    plan = mem.plan_compress()
    kinds = {(a.kind, a.ids) for a in plan.actions}

    merged = next(a for a in plan.actions if a.kind == "merge")
    assert set(merged.ids) == {"mdup1", "mdup2", "mdup3"}
    assert ("supersede", ("mold1", "mnew1")) in kinds
    assert ("forget", ("mstale",)) in kinds
    consolidated = [a for a in plan.actions if a.kind == "consolidate"]
    assert {"mk1", "mk2", "mk3", "mk4"} in [set(a.ids) for a in consolidated]
    assert {"eold1", "eold2"} in [set(a.ids) for a in consolidated]
    removed = plan.removed_ids()
    for exempt in ("mpin1", "mref", "mimp", "lnew", "enew"):
        assert exempt not in removed

    diff = mem.diff(plan)
    assert diff.startswith("--- a/")
    assert "+++ b/archive.md" in diff and "-- Had a sandwich" in diff
    assert snapshot(root) == snapshot(root)  # planning wrote nothing
    mem.apply(plan)

    after = {e.id: e for e in mem.entries()}
    survivor = after["mdup2"]  # the newest wording survives
    assert survivor.text == "Prefers dark mode in all editors and terminals"
    assert survivor.importance == 0.8
    assert set(survivor.keywords) == {"theme", "editor"}
    assert set(survivor.source.split(",")) == {"mdup1", "mdup3"}
    assert mem.access.get("mdup2").count == 3  # summed access counts
    assert "mnew1" in after and "mold1" not in after
    kafka = [e for e in after.values() if e.source and "mk1" in e.source.split(",")]
    kafka = [e for e in kafka if e.type == "fact"]
    assert len(kafka) == 1 and kafka[0].importance == 0.7
    assert "Kafka" in kafka[0].text and set(kafka[0].source.split(",")) == {
        "mk1",
        "mk2",
        "mk3",
        "mk4",
    }
    lesson = [e for e in after.values() if e.source == "eold1,eold2"]
    assert len(lesson) == 1 and lesson[0].type == "lesson" and lesson[0].file == "learnings.md"
    assert lesson[0].text.startswith((NOW - dt.timedelta(days=20)).date().isoformat())

    # nothing lost: every original text is still somewhere
    after_texts = texts_everywhere(root)
    assert all(text in after_texts for text in before_texts)
    assert PROSE in (root / "memory.md").read_text(encoding="utf-8")
    archive = parse((root / "archive.md").read_text(encoding="utf-8"), "archive.md")
    reasons = {e.id: e.meta["reason"] for e in archive.entries()}
    assert reasons["mold1"] == "superseded by mnew1"
    assert reasons["mdup1"] == "duplicate of mdup2"
    assert reasons["mstale"].startswith("faded (retention")
    assert archive.find("mk1").entry.meta["replaced_by"] == kafka[0].id

    # applying compress again changes nothing
    again = mem.plan_compress()
    assert again.is_empty, [a.summary for a in again.actions]

    # restore brings back exactly what left
    originals = {
        e.id: e
        for name in ["memory.md", "learnings.md"]
        for e in parse(
            planted(tmp_path / "orig").joinpath(name).read_text(encoding="utf-8"), name
        ).entries()
    }
    for entry in archive.entries():
        restored = mem.restore(entry.id)
        if entry.id in originals:
            assert restored.text == originals[entry.id].text
            assert restored.meta == originals[entry.id].meta
        assert not {k for k in restored.meta if k in ARCHIVE_KEYS}
    assert parse((root / "archive.md").read_text(encoding="utf-8"), "archive.md").entries() == []


def test_target_tokens_archive_lowest_retention_first(workspace: Path) -> None:
    counter = get_counter()
    size = sum(
        counter.count((workspace / n).read_text(encoding="utf-8"))
        for n in ("memory.md", "learnings.md")
    )
    target = size // 3
    settings = dataclasses.replace(
        load_settings(workspace), compress=CompressSettings(forget_threshold=0.0)
    )
    mem = Memory(workspace, settings=settings)  # no forgetting: only the target acts
    plan = mem.compress(target_tokens=target)
    assert [a.kind for a in plan.actions] and {a.kind for a in plan.actions} == {"fit"}
    total = sum(
        counter.count((workspace / n).read_text(encoding="utf-8"))
        for n in ("memory.md", "learnings.md")
    )
    assert total <= target, plan.notes
    left = {e.id for e in mem.entries()}
    assert {"m5d1e7b3", "l5e3a1d8", "m0f4a8b2"} <= left  # importance 0.9 and a reflection
    archived = [r.entry for r in plan.removals]
    kept_retention = min(
        retention(e, None, NOW, settings.compress)
        for e in mem.entries()
        if e.importance < 0.9 and e.type != "reflection"
    )
    assert all(retention(e, None, NOW, settings.compress) <= kept_retention for e in archived)
    assert mem.plan_compress(target_tokens=target).is_empty


# ---------------------------------------------------------------------- the CLI


def test_cli_dry_run_pipe_and_yes(tmp_path: Path, runner: CliRunner) -> None:
    root = planted(tmp_path / "ws")
    before = snapshot(root)
    dry = runner.invoke(app, ["-w", str(root), "compress", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "--- a/memory.md" in dry.output and "+++ b/archive.md" in dry.output
    assert snapshot(root) == before

    piped = runner.invoke(app, ["-w", str(root), "compress"])
    assert piped.exit_code == 1 and "--yes" in piped.output
    assert snapshot(root) == before

    as_json = runner.invoke(app, ["-w", str(root), "compress", "--dry-run", "--json"])
    data = json.loads(as_json.stdout)
    assert data["applied"] is None and data["diff"].startswith("--- a/")
    assert {a["kind"] for a in data["actions"]} >= {"merge", "supersede", "forget"}

    done = runner.invoke(app, ["-w", str(root), "compress", "--yes", "--json"])
    assert done.exit_code == 0, done.output
    applied = json.loads(done.stdout)["applied"]
    assert "mold1" in applied["archived"] and applied["skipped"] == []
    second = runner.invoke(app, ["-w", str(root), "compress", "--yes"])
    assert second.exit_code == 0 and "nothing to do" in second.output

    bad = runner.invoke(app, ["-w", str(root), "compress", "--target-tokens", "-5"])
    assert bad.exit_code == 1 and "--target-tokens" in bad.output


def test_an_entry_edited_after_planning_is_left_alone(tmp_path: Path) -> None:
    root = planted(tmp_path / "ws")
    mem = Memory(root)
    plan = mem.plan_compress()
    path = root / "memory.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("Had a sandwich for lunch", "Had a bagel for lunch"), encoding="utf-8"
    )
    applied = mem.apply(plan)
    assert "mstale" in applied.skipped
    assert "Had a bagel for lunch" in path.read_text(encoding="utf-8")
    archive = parse((root / "archive.md").read_text(encoding="utf-8"), "archive.md")
    assert archive.find("mstale") is None  # its archive copy was taken back
    assert archive.find("mold1") is not None


# ---------------------------------------------------------------------- with an LLM


def test_compress_with_llm_and_its_failures(tmp_path: Path, runner: CliRunner) -> None:
    root = planted(tmp_path / "ws")
    with FakeLLM() as llm:
        (root / "memcli.toml").write_text(llm.toml(), encoding="utf-8")
        trust(root)  # a workspace's own LLM endpoint applies once approved
        llm.answer = {"text": "Kafka: six EU brokers, 3x replication, lag in Grafana"}
        before = snapshot(root)
        for mode in ("garbage", "500", "slow"):
            llm.mode = mode
            result = runner.invoke(app, ["-w", str(root), "compress", "--yes"])
            assert result.exit_code == 1, (mode, result.output)
            assert "nothing was changed" in result.output
            assert snapshot(root) == before
        llm.mode = "ok"
        result = runner.invoke(app, ["-w", str(root), "compress", "--yes"])
        assert result.exit_code == 0, result.output
    entries = Memory(root).entries()
    assert any(e.text == llm.answer["text"] and e.type == "fact" for e in entries)
    assert any(r["path"].endswith("/chat/completions") for r in llm.requests)


def test_log_writes_a_searchable_episode(workspace: Path, runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["-w", str(workspace), "log", "Pairing session on the flaky websocket test"]
    )
    assert result.exit_code == 0, result.output
    files = list((workspace / "episodes").glob("*.md"))
    assert len(files) == 1
    entry = parse(files[0].read_text(encoding="utf-8"), f"episodes/{files[0].name}").entries()[0]
    assert entry.type == "episode" and entry.created is not None
    hits = Memory(workspace).search("websocket pairing", limit=1)
    assert hits[0].entry.id == entry.id
    empty = runner.invoke(app, ["-w", str(workspace), "log", "  "])
    assert empty.exit_code == 1 and "empty" in empty.output


def test_sample_workspace_round_trip(workspace: Path) -> None:
    """compress on the sample, then restore everything: the entries are back as they were."""
    original = {
        name: {e.id: (e.text, e.meta) for e in Memory(workspace).store.load(name).entries()}
        for name in ("memory.md", "learnings.md")
    }
    before_texts = texts_everywhere(workspace)
    mem = Memory(workspace)
    plan = mem.compress()
    assert plan.removals  # the sample has entries older than the forgetting curve allows
    assert all(text in texts_everywhere(workspace) for text in before_texts)
    assert mem.plan_compress().is_empty
    for entry in mem.list(include_archived=True, types=["archived"]):
        mem.restore(entry.id)
    for name, entries in original.items():
        now = {e.id: (e.text, e.meta) for e in Memory(workspace).store.load(name).entries()}
        assert now == entries
