"""What may leave memory for age, and when (DESIGN §5.1, §5.5): the seed 002 retention
curve, who may fade under `[forget] scope` (Entry.provenance: by default only entries a
program wrote that nobody confirmed, and episodes), the compress steps that archive
faded entries and that shed entries to fit a token target, and the dates both read.
Pure: entries and access statistics in, additions to a Plan out.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence

from memcli.core.models import EPISODES_DIR, Entry
from memcli.store.access import Access
from memcli.store.changes import Action, Plan, Removal
from memcli.store.config import CompressSettings


def written_at(entry: Entry) -> dt.datetime | None:
    """When the entry was last changed (`updated`, else `created`); None when undated."""
    try:
        return entry.updated or entry.created
    except ValueError:
        return None


def age_days(entry: Entry, now: dt.datetime) -> float | None:
    moment = written_at(entry)
    return None if moment is None else (now - moment).total_seconds() / 86400.0


def newest_first(entries: Sequence[Entry], order: dict[str, int]) -> list[Entry]:
    """Newest (updated, else created) first; undated count as oldest; later in the
    workspace wins ties."""
    floor = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(entries, key=lambda e: (written_at(e) or floor, order[e.id]), reverse=True)


def _last_touch(entry: Entry, access: Access | None) -> dt.datetime | None:
    if access and access.last:
        try:
            return dt.datetime.fromisoformat(access.last.replace("Z", "+00:00"))
        except ValueError:
            pass
    return written_at(entry)


def retention(
    entry: Entry, access: Access | None, now: dt.datetime, cfg: CompressSettings
) -> float:
    """Seed 002: base^(Δt_hours / (24 · strength^access_count)) · (0.5 + 0.5·importance),
    Δt from the last access, else the last update or creation (0 when undated).
    Episode notes fade `episode_decay` times faster."""
    moment = _last_touch(entry, access)
    hours = 0.0 if moment is None else max(0.0, (now - moment).total_seconds() / 3600.0)
    if entry.type == "episode":
        hours *= cfg.episode_decay
    count = access.count if access else 0
    exponent = hours / (24.0 * cfg.forget_strength**count)
    return cfg.forget_base**exponent * (0.5 + 0.5 * entry.importance)


def exempt(entry: Entry) -> bool:
    """Never archived by compress for age or size: pinned, a reflection, importance ≥ 0.9."""
    return entry.pinned or entry.type == "reflection" or entry.importance >= 0.9


def may_fade(entry: Entry, scope: str) -> bool:
    """Whether age may archive or consolidate this entry under `[forget] scope`: never
    pinned entries, reflections or importance ≥ 0.9; with "machine" only entries a
    program wrote that nobody confirmed, and episodes; "all" every other; "none" none."""
    if scope == "none" or exempt(entry):
        return False
    return scope == "all" or entry.provenance in ("machine", "episode")


def forget(
    plan: Plan,
    entries: Sequence[Entry],
    taken: set[str],
    *,
    cfg: CompressSettings,
    access: dict[str, Access],
    now: dt.datetime,
    scope: str,
) -> None:
    """Archive entries that may fade (may_fade) whose retention fell below the threshold
    (seed 002)."""
    for entry in entries:
        if entry.id in taken or not may_fade(entry, scope):
            continue
        value = retention(entry, access.get(entry.id), now, cfg)
        if value < cfg.forget_threshold:
            plan.removals.append(Removal(entry, f"faded (retention {value:.3f})"))
            plan.actions.append(
                Action("forget", f"{entry.id} faded: retention {value:.3f}", (entry.id,))
            )
            taken.add(entry.id)


def fit(
    plan: Plan,
    entries: Sequence[Entry],
    taken: set[str],
    target: int,
    tokens_after: Callable[[Plan], int],
    entry_tokens: Callable[[Entry], int] | None,
    *,
    cfg: CompressSettings,
    access: dict[str, Access],
    now: dt.datetime,
) -> None:
    """Archive more entries, those a program wrote before a person's, lowest retention
    first, until memory.md + learnings.md fit in `target` tokens (exempt entries stay):
    the one way a person asks to shed hand-kept entries."""
    total = tokens_after(plan)
    candidates = sorted(
        (
            e
            for e in entries
            if e.id not in taken and not exempt(e) and not e.file.startswith(f"{EPISODES_DIR}/")
        ),
        key=lambda e: (e.confirmed, retention(e, access.get(e.id), now, cfg)),
    )
    index = 0
    while total > target and index < len(candidates):
        # archive by the estimated size, then check the exact size of the files
        while total > target and index < len(candidates):
            entry = candidates[index]
            index += 1
            value = retention(entry, access.get(entry.id), now, cfg)
            plan.removals.append(
                Removal(entry, f"over the token target {target} (retention {value:.3f})")
            )
            plan.actions.append(
                Action("fit", f"{entry.id} archived to fit {target} tokens", (entry.id,))
            )
            taken.add(entry.id)
            total -= entry_tokens(entry) if entry_tokens else math.inf
        total = tokens_after(plan)
    if total > target:
        plan.notes.append(
            f"memory.md + learnings.md are {total} tokens after the plan, above the target "
            f"{target}: the rest is pinned, a reflection or has importance ≥ 0.9"
        )
    else:
        plan.notes.append(f"memory.md + learnings.md: {total} tokens after the plan (≤ {target})")
