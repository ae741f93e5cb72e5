"""Settings precedence: flag (override) > MEMCLI_* environment > memcli.toml > default."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.core.errors import ConfigError
from memcli.services.memory import Memory
from memcli.store.config import Settings, load_settings
from tests.support.fakes import HashingEmbedder


def test_defaults_without_file(tmp_path: Path) -> None:
    assert load_settings(tmp_path, env={}) == Settings()


def test_precedence(tmp_path: Path) -> None:
    (tmp_path / "memcli.toml").write_text("[search]\nhalf_life_days = 7\nlimit = 3\n")
    assert load_settings(tmp_path, env={}).search.half_life_days == 7.0
    env = {"MEMCLI_SEARCH_HALF_LIFE_DAYS": "14"}
    settings = load_settings(tmp_path, env=env)
    assert settings.search.half_life_days == 14.0 and settings.search.limit == 3
    flagged = load_settings(tmp_path, env=env, overrides={"search": {"half_life_days": 1.5}})
    assert flagged.search.half_life_days == 1.5
    assert load_settings(tmp_path, env={"MEMCLI_INDEX_ONNX": "0"}).index.onnx is False


@pytest.mark.parametrize(
    "toml, message",
    [
        ("[search]\nhalf_lif = 3\n", "unknown setting search.half_lif"),
        ("[search\n", "memcli.toml"),
        ("search = 3\n", "[search] must be a table"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "memcli.toml").write_text(toml)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_settings(tmp_path, env={})


def test_retired_add_dedup_threshold_still_loads(tmp_path: Path) -> None:
    """`[add] dedup_threshold` was parsed and never read (add dedups on the normalized
    text; near-duplicates are compress's): the setting is gone, a file naming it loads."""
    (tmp_path / "memcli.toml").write_text("[add]\ndedup_threshold = 0.9\n[search]\nlimit = 3\n")
    settings = load_settings(tmp_path, env={"MEMCLI_ADD_DEDUP_THRESHOLD": "0.5"})
    assert settings.search.limit == 3 and not hasattr(settings, "add")
    user = tmp_path / "config.toml"
    user.write_text("[add]\ndedup_threshold = 0.8\n")
    assert load_settings(tmp_path, env={}, user_config=user).search.limit == 3
    (tmp_path / "memcli.toml").write_text("[add]\nthreshold = 0.9\n")
    with pytest.raises(ConfigError, match="unknown setting add.threshold"):
        load_settings(tmp_path, env={})
    (tmp_path / "memcli.toml").write_text("add = 1\n")
    with pytest.raises(ConfigError, match=r"\[add\] must be a table"):
        load_settings(tmp_path, env={})


def test_toml_weights_reach_search(workspace: Path) -> None:
    (workspace / "memcli.toml").write_text('[search]\nlimit = 2\nmode = "keyword"\n')
    mem = Memory(workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    hits = mem.search("python", touch=False)
    assert len(hits) == 2 and all(h.components["semantic"] == 0 for h in hits)


def test_progress_is_reported_for_big_indexes(empty_workspace: Path) -> None:
    lines = "".join(f"- generated fact number {i} about topic {i % 17}\n" for i in range(700))
    (empty_workspace / "memory.md").write_text("# Memory\n\n## Facts\n" + lines)
    calls: list[tuple[int, int]] = []
    mem = Memory(empty_workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    report = mem.index(progress=lambda done, total: calls.append((done, total)))
    assert report.total == 700 and calls and calls[-1] == (700, 700)
    # a bar that moves: steps of one model batch (64), not 0 -> 34 -> 68 -> 100 %
    steps = [b[0] - a[0] for a, b in zip([(0, 700), *calls], calls, strict=False)]
    assert len(calls) >= 10 and max(steps) <= 70


def test_synonyms_expand_keyword_queries_and_filters(workspace: Path) -> None:
    (workspace / "memcli.toml").write_text(
        '[synonyms]\nk8s = ["kubernetes"]\n"background jobs" = ["celery"]\n'
    )
    mem = Memory(workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)
    assert mem.settings.synonyms == (("k8s", "kubernetes"), ("background jobs", "celery"))
    hits = mem.search("k8s", mode="keyword", touch=False)
    assert hits and hits[0].entry.id == "m9b2d4f6"  # "...to a Kubernetes cluster..."
    assert mem.search("background jobs", mode="keyword", touch=False)[0].entry.id == "m4c8e1a3"
    (workspace / "memory.md").write_text(
        (workspace / "memory.md")
        .read_text()
        .replace("kw=deploy,kubernetes,ci", "kw=deploy,kubernetes")
    )
    assert [e.id for e in mem.list(keywords=["k8s"])] == ["m9b2d4f6"]
    (workspace / "memcli.toml").write_text("[synonyms]\nk8s = 3\n")
    with pytest.raises(ConfigError, match="synonyms.k8s must be a list"):
        Memory(workspace).settings  # noqa: B018
    (workspace / "memcli.toml").write_text("[serch]\nlimit = 3\n")
    with pytest.raises(ConfigError, match=r"unknown table \[serch\]"):
        Memory(workspace).settings  # noqa: B018
