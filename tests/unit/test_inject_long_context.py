"""An inject context over the 64 KiB cap keeps its newest part, the turns just said
(issue 35: a planted bug keeping the oldest part passed the whole suite). A property of
core.validate.clean_context, and the whole path through Memory.inject: the block is
about what was said last, not what was said first."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memcli.core.validate import MAX_QUERY_CHARS, clean_context
from tests.support.fakes import fake_memory


@given(
    st.text(alphabet="ab \n", min_size=0, max_size=80),
    st.integers(min_value=0, max_value=2 * MAX_QUERY_CHARS),
)
def test_a_long_context_keeps_its_end(tail: str, padding: int) -> None:
    context = "x" * padding + "NEWEST" + tail
    kept = clean_context(context)
    assert len(kept) == min(len(context), MAX_QUERY_CHARS)
    assert context.endswith(kept)  # its newest part, whole up to the cap


def test_inject_of_a_long_conversation_is_about_its_last_turn(empty_workspace: Path) -> None:
    mem = fake_memory(empty_workspace)
    mem.add("Gardening: water the tomatoes every morning", importance=0.5, by="person")
    mem.add("Kubernetes deploys go through the staging cluster first", importance=0.5, by="person")
    old = "We talked about gardening, tomatoes and watering every morning. " * 1_000
    new = "Now: how do Kubernetes deploys reach the staging cluster? " * 1_100
    context = old + new  # the cap holds the newest turns alone
    assert len(new) < MAX_QUERY_CHARS < len(context)
    packed = mem.inject(context, max_tokens=2000)
    assert [c.entry.text for c in packed.chosen][:1] == [  # the best match first
        "Kubernetes deploys go through the staging cluster first"
    ]
