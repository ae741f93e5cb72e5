"""Access counts a long-lived process keeps in memory (memcli.store.access): what load
and flush give is the counts on disk plus every touch, and what is kept per touch does
not grow with the number of touches since the last flush (a watcher answering a burst
of injects read them all back on every request)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.store.access import Access, AccessStats

T1, T2 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"


@pytest.mark.parametrize(
    ("on_disk", "touches", "expected"),
    [
        ({}, [["a"]], {"a": 1}),
        ({}, [["a", "a", "b"]], {"a": 2, "b": 1}),  # the same id twice in one touch
        ({}, [["a"], ["a", "b"], ["a"]], {"a": 3, "b": 1}),
        ({"a": 5}, [["a"], ["c"]], {"a": 6, "c": 1}),
        ({"a": 5, "z": 2}, [], {"a": 5, "z": 2}),  # nothing touched: the file as it is
    ],
)
def test_deferred_touches_add_to_the_counts_on_disk(
    tmp_path: Path, on_disk: dict[str, int], touches: list[list[str]], expected: dict[str, int]
) -> None:
    state = tmp_path / ".memcli"
    state.mkdir()
    if on_disk:
        payload = {k: {"count": v, "last": T1} for k, v in on_disk.items()}
        (state / "access.json").write_text(json.dumps(payload))
    stats = AccessStats(state)
    stats.defer = True
    for ids in touches:
        stats.touch(ids)
    loaded = stats.load()
    assert {k: v.count for k, v in loaded.items()} == expected
    for ids in touches:  # a touched id's last access is a touch's time, not the file's
        assert all(loaded[i].last != T1 for i in ids)
    stats.flush()
    written = json.loads((state / "access.json").read_text()) if expected else {}
    assert {k: v["count"] for k, v in written.items()} == expected
    assert AccessStats(state).load() == loaded


def test_the_last_access_is_the_last_touch(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from memcli.store import access

    times = iter([T1, T2])
    monkeypatch.setattr(access, "format_time", lambda _: next(times))
    stats = AccessStats(tmp_path)
    stats.defer = True
    stats.touch(["a", "b"])
    stats.touch(["a"])
    assert stats.load() == {"a": Access(2, T2), "b": Access(1, T1)}


def test_what_is_kept_grows_with_the_ids_not_the_touches(tmp_path: Path) -> None:
    stats = AccessStats(tmp_path)
    stats.defer = True
    for _ in range(500):  # a burst of injects, each choosing the same three entries
        stats.touch(["a", "b", "c"])
    assert len(stats._pending) == 3
    assert stats.load()["a"].count == 500
