"""The labelled set of how people say a change (bench/data/said.jsonl, issue 37 §10) is
what its scorer's docstring says: ≥ 300 statements, English and Chinese, several voices,
negatives among them, each positive with its decision, target and normalised statement,
and the halves fixed by the id (tests/support/extract_quality.said_split; those written
later to tune on are tune only)."""

from __future__ import annotations

import re
from collections import Counter

from tests.support.extract_quality import DATA, TUNE_ONLY, load, said_split


def test_the_set_is_large_varied_and_split_by_its_id() -> None:
    items = load(DATA / "said.jsonl")
    assert len(items) >= 300 and len({i["id"] for i in items}) == len(items)
    assert {i["lang"] for i in items} == {"en", "zh"}
    hands = Counter(i["hand"] for i in items)
    assert len(hands) >= 4 and min(hands.values()) >= 10, hands
    assert all(i["split"] == said_split(i["id"]) for i in items)  # not chosen by hand
    hashed = [i for i in items if not i["id"].startswith(TUNE_ONLY)]
    halves = Counter(i["split"] for i in hashed)
    assert min(halves.values()) >= 0.4 * len(hashed), halves
    assert halves["test"] >= 200  # the half only reported is not shrunk
    negatives = [i for i in items if not i["expect"]]
    assert len(negatives) >= 60
    assert any(m["role"] == "assistant" for i in items for m in i.get("turns", []))


def test_every_label_names_an_entry_of_its_memory_and_a_statement() -> None:
    ids = {
        name: set(re.findall(r"id=(\w+)", (DATA / f"said_memory_{name}.md").read_text()))
        for name in ("en", "zh")
    }
    for item in load(DATA / "said.jsonl"):
        for want in item["expect"]:
            assert len(want) == {"ADD": 2, "UPDATE": 3, "NOOP": 2}[want[0]], item
            if want[0] in ("UPDATE", "NOOP"):
                assert want[1] in ids[item["memory"]], item
            if want[0] in ("ADD", "UPDATE"):
                assert want[-1].strip(), item
