"""The gloss table's file (memcli.index.gloss_table): what is written is what lookups
read, by bisection and, after BULK lookups, from the whole table; a damaged file is
refused, never misread."""

from __future__ import annotations

import pytest

from memcli.index import gloss_table
from memcli.index.gloss_table import Table, encode

WORDS = {"数据库": "database", "数据": "data", "和": "and", "a": "b", "迁移": "migrate"}


@pytest.mark.parametrize("bulk", [False, True])
def test_every_word_reads_back_and_others_are_missing(
    bulk: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if bulk:
        monkeypatch.setattr(gloss_table, "BULK", 0)  # the whole table from the first lookup
    table = Table(encode(WORDS))
    assert len(table) == len(WORDS)
    for word, gloss in WORDS.items():
        assert table.get(word) == gloss
    for missing in ("数", "数据库迁移", "", "z", "\uffff"):
        assert table.get(missing) is None


def test_an_empty_table() -> None:
    assert Table(encode({})).get("数据") is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: blob[:3],  # no word count
        lambda blob: blob[:20],  # offsets cut short
        lambda blob: blob[:-1],  # the last gloss cut
        lambda blob: blob + b"x",  # bytes after the end
        lambda blob: (10**6).to_bytes(4, "little") + blob[4:],  # a wrong count
    ],
)
def test_a_damaged_file_is_refused(damage) -> None:  # noqa: ANN001 - a lambda
    with pytest.raises(ValueError):
        Table(damage(encode(WORDS)))
