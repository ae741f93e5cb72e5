"""What the git merge driver tests share: a base version of memory.md, a three-way
merge of two edited versions, and the entries of a result (never a duplicate id)."""

from __future__ import annotations

from collections import Counter

from memcli.store.gitmerge import merge_entries
from memcli.store.markdown import parse

BASE = """# Memory

Kept by hand, merged by memcli.

## Preferences
- Prefers pytest over unittest <!-- id=mpytest imp=0.8 -->
- Likes dark editor themes

## Facts
- Works at TechCorp <!-- id=mwork -->
- Lives in Berlin <!-- id=mhome -->
"""


def merged(ours: str, theirs: str, base: str = BASE) -> tuple[str, int]:
    outcome = merge_entries(base, ours, theirs, "memory.md")
    return outcome.text, outcome.conflicts


def entries(text: str) -> dict[str, str]:
    doc = parse(text, "memory.md")
    assert not doc.problems
    ids = Counter(e.id for e in doc.entries())
    assert all(n == 1 for n in ids.values()), ids  # never a duplicate id
    return {e.id: e.text for e in doc.entries()}
