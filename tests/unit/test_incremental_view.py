"""The watcher's incremental steps after a reparse, against building from scratch: the
stretch of entries a sync compares (services/lastsync) and the search view reused
after an edit in place (SearchView.after, EntryArrays.edited)."""

from __future__ import annotations

import numpy as np

from memcli.core.models import Entry
from memcli.services.lastsync import changed_window
from memcli.services.search import SearchView
from memcli.store.markdown import parse_file
from memcli.store.reparse import reparse

TEXT = "## Facts\n" + "".join(
    f"- fact {i} <!-- id=m{i} imp=0.{i % 9 + 1} created=2026-0{i % 9 + 1}-01 -->\n"
    for i in range(40)
)


def _entries(text: str, prev=None):  # noqa: ANN001, ANN202
    parsed = parse_file(text, "memory.md") if prev is None else reparse(prev, text)
    return parsed, parsed.entries


def test_changed_window_is_the_edited_stretch() -> None:
    prev, before = _entries(TEXT)
    _, edited = _entries(TEXT.replace("- fact 7 ", "- fact seven "), prev)
    assert [e.id for side in changed_window(before, edited) for e in side] == ["m7", "m7"]
    # a line inserted: every later entry moves, but only the new one is compared
    _, inserted = _entries(TEXT.replace("- fact 7 ", "- new <!-- id=mnew -->\n- fact 7 "), prev)
    old, new = changed_window(before, inserted)
    assert old == [] and [e.id for e in new] == ["mnew"]
    _, removed = _entries(
        TEXT.replace("- fact 30 <!-- id=m30 imp=0.4 created=2026-04-01 -->\n", ""), prev
    )
    old, new = changed_window(before, removed)
    assert [e.id for e in old] == ["m30"] and new == []
    assert changed_window(before, list(before)) == ([], [])


def _same_view(got: SearchView, want: SearchView) -> None:
    assert got.ordered == want.ordered
    assert got.position_of == want.position_of
    assert np.array_equal(got.not_archived, want.not_archived)
    assert got.live_ids == want.live_ids
    assert np.array_equal(got.arrays.near, want.arrays.near)
    assert np.array_equal(got.arrays.order, want.arrays.order)
    everything = np.arange(len(want.ordered))
    for _ in range(2):  # the second query reads every entry's values
        got_values, want_values = got.arrays.values(everything), want.arrays.values(everything)
        for name in ("importance", "confidence", "moment", "episode", "created"):
            a, b = getattr(got_values, name), getattr(want_values, name)
            assert np.array_equal(a, b, equal_nan=True), name


def test_view_after_an_edit_in_place_equals_a_fresh_view() -> None:
    prev, before = _entries(TEXT)
    old_view = SearchView(before)
    for _ in range(2):
        old_view.arrays.values(np.arange(len(before)))  # values of every entry held
    _ = old_view.position_of, old_view.live_ids, old_view.not_archived
    edits = [
        TEXT.replace("imp=0.8", "imp=0.1"),  # metadata
        TEXT.replace(
            "created=2026-04-01 -->\n- fact 4 ", "created=2026-04-01 -->\n  more\n- fact 4 "
        ),
        TEXT.replace("- fact 3 <!-- id=m3", "- fact 3 <!-- id=mX"),  # an id: built anew
        TEXT.replace("## Facts\n", "## Facts\n- new first\n"),  # one more entry: built anew
    ]
    for text in edits:
        _, now = _entries(text, prev)
        got = SearchView.after(old_view, now)
        kept = "arrays" in got.__dict__
        assert kept == (text in edits[:2]), text  # reused only for edits in place
        _same_view(got, SearchView(now))


def test_values_are_read_again_where_the_metadata_changed() -> None:
    _, before = _entries(TEXT)
    view = SearchView(before)
    for _ in range(2):
        view.arrays.values(np.arange(len(before)))
    changed = list(before)
    changed[5] = Entry(
        before[5].id, before[5].text, "fact", "memory.md", before[5].line, {"imp": "0.05"}
    )
    after = SearchView.after(view, changed)
    assert after.arrays.values(np.array([5])).importance[0] == 0.05
    assert view.arrays.values(np.array([5])).importance[0] != 0.05  # the old one is untouched


def test_edited_arrays_derive_cached_properties_again() -> None:
    """Per-entry arrays a ranking feature caches on EntryArrays are not carried into
    the edited generation (they would hold the old entry's values)."""
    from functools import cached_property

    from memcli.logic.search import EntryArrays

    class WithTexts(EntryArrays):
        @cached_property
        def texts(self) -> list[str]:
            return [e.text for e in self.entries]

    _, before = _entries(TEXT)
    arrays = WithTexts(before)
    assert arrays.texts[5] == "fact 5"
    changed = list(before)
    changed[5] = Entry(before[5].id, "fact five", "fact", "memory.md", before[5].line, {})
    assert arrays.edited(changed, np.array([5])).texts[5] == "fact five"


def test_each_entrys_values_are_read_once(monkeypatch) -> None:  # noqa: ANN001
    """Queries read the values of their candidates, each entry's once per generation:
    an inject's searches in a one-off process (the prompt's, then each part's) do not
    read every entry's (10k: ≈ 40 ms), and the values are those of the entries."""
    from memcli.logic.search import EntryValues

    _, before = _entries(TEXT)
    read: list[str] = []
    real = EntryValues.of.__func__

    def counted(cls, entries):  # noqa: ANN001, ANN202
        read.extend(e.id for e in entries)
        return real(cls, entries)

    monkeypatch.setattr(EntryValues, "of", classmethod(counted))
    arrays = SearchView(before).arrays
    first, second = np.arange(0, 10), np.arange(5, 15)
    arrays.values(first)
    got = arrays.values(second)
    assert sorted(read) == sorted(e.id for e in before[:15])
    want = real(EntryValues, before[5:15])
    for name in ("importance", "confidence", "moment", "episode", "created"):
        assert np.array_equal(getattr(got, name), getattr(want, name), equal_nan=True), name
    changed = list(before)  # an edit of an entry no query read yet
    old = before[30]
    changed[30] = Entry(old.id, old.text, "fact", "memory.md", old.line, {"imp": "0.05"})
    after = SearchView.after(SearchView(before), changed)
    assert after.arrays.values(np.array([30, 31])).importance.tolist() == [0.05, 0.5]
