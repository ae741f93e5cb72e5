"""What recovery reads first: the files as they are now, shown to the history (an
external change becomes a version), and history time stamps for people."""

from __future__ import annotations

import datetime as dt

from memcli.store.store import Store


def observe_all(store: Store) -> list[dict]:
    """Record the current content of every Markdown file in the history (an external
    change becomes a version); returns entries an external save removed just now."""
    lost: list[dict] = []
    for name in store.entry_files(include_archived=True):
        lost += store.observe(name)
    return lost


def when(t: str) -> str:
    """A history time stamp in local time, for people."""
    try:
        moment = dt.datetime.strptime(t[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.UTC)
    except ValueError:
        return t
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")
