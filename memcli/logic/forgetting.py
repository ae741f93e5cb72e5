"""What may leave memory for age, and when (docs/maintenance.md): the retention
curve, who may fade under `[forget] scope` (Entry.provenance: by default only entries a
program wrote that nobody confirmed, and episodes) and what (only the transient: episodes,
dated events, task notes, never a lasting fact about the person), the compress steps that archive
faded entries and that shed entries to fit a token target, and the dates both read.
Pure: entries and access statistics in, additions to a Plan out.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Sequence

from memcli.core.models import EPISODES_DIR, Entry
from memcli.store.access import Access
from memcli.store.changes import Action, Plan, Removal
from memcli.store.config import CompressSettings


def episode_day(entry: Entry) -> dt.date | None:
    """The day of the episode file (episodes/YYYY-MM-DD.md) the entry is in, or None."""
    if not entry.file.startswith(f"{EPISODES_DIR}/"):
        return None
    try:
        return dt.date.fromisoformat(entry.file.removeprefix(f"{EPISODES_DIR}/")[:10])
    except ValueError:
        return None


def written_at(entry: Entry) -> dt.datetime | None:
    """When the entry was last changed (`updated`, else `created`; an undated episode
    note: the start of its file's day); None when undated."""
    try:
        moment = entry.updated or entry.created
    except ValueError:
        moment = None
    day = episode_day(entry) if moment is None else None
    return dt.datetime.combine(day, dt.time(), dt.UTC) if day else moment


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


#: types whose entries hold something that passes (an episode, an event, a task)
TRANSIENT_TYPES = frozenset(["episode", "event", "task", "todo"])
#: a task note: "TODO …", "Task: …", "[ ] …", "待办…", "提醒…"
_TASK = re.compile(r"^\s*(?:todo\b|task\s*:|\[ \]|remind(?:er)?\b|待办|提醒|任务[:：])", re.I)
#: a moment of a day: a clock time, a relative day, a date, a weekday named as one day
_MOMENT = re.compile(
    r"\b\d{1,2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b"
    r"|\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening|week)|"
    r"last (?:night|week|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"next (?:week|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
    r"|\b(?:on|this|next|last) (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}\b"
    r"|今天|今晚|昨天|明天|后天|上周[一二三四五六日天]?|下周[一二三四五六日天]?|\d{1,2}月\d{1,2}[日号]",
    re.I,
)
#: a one-off happening told in the past ("Had a sandwich for lunch", "Went to the dentist")
_PAST_EVENT = re.compile(
    r"^(?:had|went|met|ate|saw|visited|attended|bought|watched|spent|took|got|came|"
    r"called|fixed|finished|started)\b",
    re.I,
)
#: what recurs every year about a person stays ("Mother's birthday is on 14 March")
_LASTING = re.compile(r"\b(?:birthday|born|anniversary)\b|生日|出生|纪念日", re.I)


def transient(entry: Entry) -> bool:
    """The entry holds something that passes: an episode, a dated event,
    a task note, an entry that expires, a one-off happening — never a lasting fact about
    the person ("Has a cat named Miso")."""
    if entry.provenance == "episode" or entry.type in TRANSIENT_TYPES or "expires" in entry.meta:
        return True
    text = entry.text.strip()
    if _TASK.match(text):
        return True
    if _LASTING.search(text):
        return False
    return bool(_MOMENT.search(text) or _PAST_EVENT.match(text))


def unconfirmed(entry: Entry, scope: str) -> bool:
    """Whether maintenance may consolidate this entry under `[forget] scope`: never pinned
    entries, reflections or importance ≥ 0.9; with "machine" only entries a program wrote
    that nobody confirmed, and episodes; "all" every other; "none" none."""
    if scope == "none" or exempt(entry):
        return False
    return scope == "all" or entry.provenance in ("machine", "episode")


def may_fade(entry: Entry, scope: str) -> bool:
    """Whether age may archive this entry: `unconfirmed` under `[forget] scope`, and
    `transient` — a lasting fact about the person never fades, whoever wrote it."""
    return unconfirmed(entry, scope) and transient(entry)


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
    """Archive entries that may fade (may_fade) whose retention fell below the
    threshold."""
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
