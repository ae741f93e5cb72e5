"""`memcli stats`: the workspace's counts (memcli.services.entries.stats) and how its
memory is used, the figures the seeds' monitoring tracks: average importance, how many
entries carry keywords, the entries no search or inject returned in the last N days, and
the most used ones (from the access counts, `.memcli/access.json`). A watcher's request
latency is the surface's to add (memcli.surfaces.daemon.service.WatchService.status).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from memcli.core.models import Entry, parse_time
from memcli.services.runtime import Runtime
from memcli.store.access import Access

#: how many of the most used entries are listed
MOST_USED = 5
#: how many ids of the entries not used lately are listed (all are counted)
UNUSED_SHOWN = 10


def usage(
    entries: list[Entry], access: dict[str, Access], days: float, now: dt.datetime
) -> dict[str, Any]:
    """The usage figures of `entries` (first of each id, not archived) given their
    access counts: pure, for a table of cases."""
    count = len(entries)
    since = now - dt.timedelta(days=days)
    unused = [e.id for e in entries if not _used_since(access.get(e.id), since)]
    used = sorted(
        (e for e in entries if access.get(e.id, Access()).count > 0),
        key=lambda e: (-access[e.id].count, e.id),
    )
    return {
        "average_importance": round(sum(e.importance for e in entries) / count, 3)
        if count
        else None,
        "with_keywords": sum(1 for e in entries if e.keywords),
        "unused": {"days": days, "count": len(unused), "ids": unused[:UNUSED_SHOWN]},
        "most_used": [
            {"id": e.id, "count": access[e.id].count, "last": access[e.id].last, "text": e.text}
            for e in used[:MOST_USED]
        ],
    }


def _used_since(seen: Access | None, since: dt.datetime) -> bool:
    """Whether a search or inject returned the entry at or after `since`."""
    if seen is None or not seen.count or not seen.last:
        return False
    try:
        return parse_time(seen.last) >= since
    except ValueError:
        return False


def summary(rt: Runtime, days: float = 30.0, now: dt.datetime | None = None) -> dict[str, Any]:
    """The counts of memcli.services.entries.stats and the usage figures of the live
    entries over the last `days` days."""
    from memcli.core.models import utc_now
    from memcli.services.entries import live_entries, stats

    data = stats(rt)
    found = usage(live_entries(rt), rt.access.load(), days, now or utc_now())
    return {**data, **found}
