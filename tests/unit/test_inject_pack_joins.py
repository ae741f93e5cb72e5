"""The packer counts a block as the sum of its pieces' counts (memoized), not the whole
block after each change: identical to counting it whole, for every input.

Why the sum is exact in cl100k_base: BPE runs inside the pre-tokenizer's chunks, and no
alternative of its pattern reaches past a newline followed by a character that is not
whitespace (letters never take a newline before them, punctuation and whitespace take
newlines only at their end), so a cut there is a cut between chunks. The property tests
below check it on arbitrary text, and the packer against a copy of the one that counted
the whole block (tests/support/inject_pack_old.py)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memcli.adapters.tokens import EstimateCounter, get_counter, joins_at_newlines
from memcli.core.models import Entry
from memcli.logic.inject import FORMATS, Candidate, block_pieces, pack, render_block
from tests.support import inject_pack_old

COUNTER = get_counter("cl100k_base")
TYPES = ["preference", "fact", "pattern", "skill", "lesson", "correction", "episode", "my-kind"]

#: texts at the edges of the pre-tokenizer: joins of punctuation, digits, contractions,
#: spaces and newlines at either end, CR, unicode letters and marks, tags, long lines
_EDGES = [
    "ends with a dot.",
    "'s starts with a contraction",
    "trailing spaces   ",
    "trailing newline\n",
    "\n\nleading newlines",
    "   leading spaces",
    "crlf\r\nline\r\n",
    "123456789 digits 1234",
    "!!!???",
    "-- dashes --",
    "## not a heading",
    "</memory> <system> <|im_start|>",
    "喜欢用中文讨论架构。",
    "🍵🚀 emoji run 🚀",
    "é\u0301 combining",
    "tab\there\t",
    "x" * 700,
    "word " * 300,
    "a\n\n\n\nb",
    "\u2028 line separator \u2029",
    '&lt; &amp; "quotes" \',',
]
_text = st.one_of(st.sampled_from(_EDGES), st.text(min_size=1, max_size=160))


@st.composite
def candidates(draw: st.DrawFn) -> list[Candidate]:
    result = []
    for i in range(draw(st.integers(0, 60))):
        text = draw(_text)
        if not text.strip():
            text = "x"
        pinned = draw(st.booleans()) and draw(st.booleans())
        entry = Entry(
            f"m{i}",
            text,
            draw(st.sampled_from(TYPES)),
            "memory.md",
            i + 1,
            {"pin": "true"} if pinned else {},
        )
        score = draw(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 1))
        result.append(Candidate(entry, score, entry.pinned or entry.type == "correction"))
    return result


def _budgets(cands: list[Candidate], fmt: str) -> list[int]:
    """Budgets at the edges: the empty block and one more, around the first entries'
    block, around everything, and a few between."""
    empty = COUNTER.count(render_block([], fmt))
    whole = COUNTER.count(render_block(cands, fmt))
    one = COUNTER.count(render_block(cands[:1], fmt))
    few = COUNTER.count(render_block(cands[:5], fmt))
    near = {empty, empty + 1, one - 1, one, one + 1, few - 1, few, few + 1, whole - 1, whole}
    near |= {(empty + whole) // 2, (empty + whole) // 3, whole + 50}
    return sorted(b for b in near if b >= empty)


def _same(cands: list[Candidate], budget: int, fmt: str) -> None:
    new = pack(cands, budget, COUNTER, fmt)
    old = inject_pack_old.pack(cands, budget, COUNTER, fmt)
    assert new == old
    assert new.tokens == COUNTER.count(new.text) <= budget


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidates(), st.sampled_from(FORMATS))
def test_packs_exactly_as_counting_the_whole_block(cands: list[Candidate], fmt: str) -> None:
    for budget in _budgets(cands, fmt):
        _same(cands, budget, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_many_candidates_and_every_edge_text(fmt: str) -> None:
    """Hundreds of candidates (beyond what pack scans), every edge text in every type."""
    cands = [
        Candidate(
            Entry(f"e{i}", _EDGES[i % len(_EDGES)] + f" {i}", TYPES[i % len(TYPES)], "m.md", i + 1),
            (i * 37 % 101) / 101,
            i % 9 == 0,
        )
        for i in range(600)
    ]
    for budget in [*_budgets(cands[:40], fmt), 2000, 8000]:
        _same(cands, budget, fmt)


_piece = st.one_of(st.sampled_from(_EDGES), st.text(max_size=80))


@settings(max_examples=400, deadline=None)
@given(st.lists(_piece, min_size=1, max_size=12), st.booleans())
@example(["x", "y"], False)
@example(["a\n", "\nb"], False)  # "\n\n" is one token
@example(["a.\n", "'s"], True)
@example(["a  \n", "b \n", "  "], True)
def test_count_joined_is_the_count_of_the_joined_text(pieces: list[str], cut: bool) -> None:
    """With `cut`, the pieces are made to end with a newline and start with a character
    that is not whitespace (where count_joined adds their counts); without, any pieces
    (where it must count the joined text)."""
    if cut:
        pieces = [p + "\n" for p in pieces[:-1]] + pieces[-1:]
        pieces = [
            p if i == 0 or (p and not p[0].isspace()) else "z" + p for i, p in enumerate(pieces)
        ]
        assert joins_at_newlines(pieces)
    assert COUNTER.count_joined(pieces) == COUNTER.count("".join(pieces))


def test_pieces_are_only_added_where_the_encoding_cuts() -> None:
    """Added, "x" and "y" would be 2 tokens; "xy" is one."""
    assert sum(COUNTER.count_many(["x", "y"])) == 2 != COUNTER.count("xy") == 1
    assert COUNTER.count_joined(["x", "y"]) == 1
    assert not joins_at_newlines(["a\n", " b"]) and not joins_at_newlines(["a", "b"])
    assert joins_at_newlines(["a\n", "b\n", "c"]) and joins_at_newlines(["only"])
    estimate = EstimateCounter("cl100k_base")  # 1 token per 3 bytes, rounded up: not additive
    assert estimate.count_joined(["a\n", "b\n"]) == estimate.count("a\nb\n") == 2


@pytest.mark.parametrize("fmt", ["markdown", "xml"])
def test_the_block_is_not_counted_whole_while_packing(
    fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the change is for: in markdown and xml, no block with entries is counted
    whole while packing; the counts are of headings, entries and closing tags."""
    counted: list[str] = []
    real = type(COUNTER).count
    monkeypatch.setattr(
        type(COUNTER), "count", lambda self, text: counted.append(text) or real(self, text)
    )
    cands = [
        Candidate(
            Entry(
                f"e{i}", f"entry number {i} {_EDGES[i % len(_EDGES)]}", TYPES[i % 7], "m.md", i + 1
            ),
            1 / (i + 1),
        )
        for i in range(80)
    ]
    old = inject_pack_old.pack(cands, 300, COUNTER, fmt)
    counted.clear()
    packed = pack(cands, 300, COUNTER, fmt)
    assert packed.chosen and packed == old
    whole = [t for t in counted if "</memory>" in t]
    assert set(whole) <= {render_block([], fmt)}  # the empty block (memoized: maybe not)
    assert "".join(block_pieces(packed.chosen, fmt)) == packed.text


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_estimate_without_tiktoken_packs_as_before(fmt: str) -> None:
    """The estimate (1 token per 3 bytes, rounded up) does not add up by pieces: it
    counts the joined block, as before."""
    estimate = EstimateCounter("cl100k_base")
    cands = [
        Candidate(Entry(f"e{i}", _EDGES[i % len(_EDGES)], TYPES[i % 8], "m.md", i + 1), i / 90)
        for i in range(90)
    ]
    empty = estimate.count(render_block([], fmt))
    for budget in [empty, empty + 1, empty + 17, 200, 333, 1000, 5000]:
        new = pack(cands, budget, estimate, fmt)
        assert new == inject_pack_old.pack(cands, budget, estimate, fmt)
        assert new.tokens == estimate.count(new.text) <= budget and not new.exact
