"""Issue 25 scenarios of the test-suite helper (bench/reliability.py --only round3).

The packer's bug: in a JSON block a short entry's estimated cost fits the room left
while the block with it does not; 16 such near-fits ranked before an entry that does
fit used up every exact try, and `inject` returned an empty block. Here: random runs of
0 to 80 near-fits (random short texts and types, random scores above it) before one
entry that fits the budget exactly (a one-character text the estimate over-counts).
Harmless: the block is not empty, and within the budget.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from pathlib import Path

CHARS = "éüñøàç中日ßåöäëîô€£¥"
TYPES = ["fact", "lesson", "preference", "pattern", "skill", "custom-kind"]


def near_fit_sequences(scratch: Path, runs: int = 300, seed: int = 25) -> tuple[int, int]:
    from memcli.adapters.tokens import get_counter
    from memcli.core.models import Entry
    from memcli.logic.inject import Candidate, pack, render_block

    counter = get_counter("cl100k_base")
    rng = random.Random(seed)
    harmless = 0
    for run in range(runs):
        near = []
        for i in range(rng.randint(0, 80)):
            text = rng.choice(string.ascii_lowercase) + str(rng.randint(0, 99))
            entry = Entry(f"n{run}-{i}", text, rng.choice(TYPES), "memory.md", i + 1, {})
            near.append(Candidate(entry, rng.uniform(0.2, 1.0)))
        fit = Entry("fit", rng.choice(CHARS), rng.choice(TYPES), "memory.md", 999, {})
        fits = Candidate(fit, rng.uniform(0.0, 0.19))
        budget = counter.count(render_block([fits], "json"))
        packed = pack([*near, fits], budget, counter, "json")
        if packed.chosen and packed.tokens == counter.count(packed.text) <= budget:
            harmless += 1
    (scratch / "runs.txt").write_text(f"{runs} runs, {harmless} harmless\n", encoding="utf-8")
    return runs, harmless


def scenarios() -> list[tuple[str, Callable[[Path], tuple[int, int]]]]:
    return [("inject: near-fits before an entry that fits (JSON)", near_fit_sequences)]
