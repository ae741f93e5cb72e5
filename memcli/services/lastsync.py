"""What this process's last index sync left the backend holding, so that the next sync
of a long-lived process (the watcher) compares only the entries that changed.

memcli.store.reparse reuses the entry objects of a file's lines that did not change, so
the entries of two syncs differ only in a stretch between a common head and tail of
the same objects (found by comparing identities at C speed); the entries
there are compared with the content keys this sync remembers. An edit of one entry of
100k so costs that entry, not the workspace. memcli.services.indexing uses it only
while the backend's revision is still the one this sync left and no two entries share
an id; otherwise it plans from the backend's fingerprint and every entry.
"""

from __future__ import annotations

from itertools import compress, count
from operator import is_not

from memcli.core.models import Entry
from memcli.core.records import record
from memcli.index.protocol import IndexBackend
from memcli.index.sync import SyncPlan, content_key
from memcli.store.store import Store


@record
class _Synced:
    """The entries and content keys a sync left the backend with."""

    revision: str  # the backend's revision right after the sync
    entries: list[Entry]  # the unique entries it indexed, in file order
    keys: dict[str, str]  # id -> content key of each


class LastSync:
    """The entries and content keys of this process's last sync."""

    def __init__(self, glossed: bool = True) -> None:
        self.glossed = glossed  # content keys of glossed embeddings (sync.content_key)
        self._state: _Synced | None = None
        self._full_keys: dict[str, str] = {}

    @property
    def revision(self) -> str | None:
        """The backend's revision that sync left (None: no sync to start from)."""
        return None if self._state is None else self._state.revision

    def planned_full(self, ids: list[str], keys: list[str]) -> None:
        """A sync planned from every entry (`ids` with their content `keys`) starts."""
        self._state = None
        self._full_keys = dict(zip(ids, keys, strict=True))

    def plan(
        self,
        entries: list[Entry],
        manifest: dict | None,
        model_id: str,
        backend: IndexBackend,
        store: Store,
    ) -> tuple[SyncPlan, list[Entry]] | None:
        """The plan from the last sync to `entries`, and the entries to upsert; None
        unless the backend still holds what that sync left (the index manifest and the
        backend at its revision, the same model, a backend no other clone writes) and
        no two entries of the store's files share an id."""
        state = self._state
        if (
            state is None
            or manifest is None
            or manifest.get("corrupt")
            or manifest.get("model") != model_id
            or backend.shared
            or manifest.get("backend") != state.revision
            or backend.revision() != state.revision
            or not store.ids_distinct(include_archived=True)
        ):
            return None
        before, now = changed_window(state.entries, entries)
        keys = state.keys
        ids_now = {e.id for e in now}
        removed = [e.id for e in before if e.id not in ids_now and e.id in keys]
        added: list[str] = []
        changed: list[str] = []
        upsert: list[Entry] = []
        for entry in now:
            held = keys.get(entry.id)
            if held is None:
                added.append(entry.id)
            elif held != content_key(entry, self.glossed):
                changed.append(entry.id)
            else:
                continue
            upsert.append(entry)
        return SyncPlan(added, changed, removed, []), upsert

    def synced(
        self,
        unique: list[Entry],
        plan: SyncPlan,
        upsert: list[Entry],
        revision: str,
        from_full: bool,
    ) -> None:
        """The backend now holds `unique` at `revision`, after `plan` (planned from
        every entry with from_full, else by `plan()`)."""
        if from_full:
            keys = self._full_keys
        else:
            assert self._state is not None
            keys = self._state.keys
            for entry_id in plan.removed:
                keys.pop(entry_id, None)
            for entry in upsert:
                keys[entry.id] = content_key(entry, self.glossed)
        self._full_keys = {}
        self._state = _Synced(revision, list(unique), keys)


def changed_window(before: list[Entry], now: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    """The stretch of `before` and of `now` between their common head and tail: the
    same objects at the same places from either end (compared by identity at C speed),
    then, from the end, entries moved to another line with the same id, text and
    metadata (what a reparse does to the entries after an inserted line)."""
    head = first_difference(before, now)
    rest = min(len(before), len(now)) - head
    tail = first_difference(before[len(before) - rest :][::-1], now[len(now) - rest :][::-1])
    old, new = before[head : len(before) - tail], now[head : len(now) - tail]
    same = 0
    for a, b in zip(reversed(old), reversed(new), strict=False):
        if a.id != b.id or a.text is not b.text or a.meta is not b.meta:
            break
        same += 1
    return old[: len(old) - same], new[: len(new) - same]


def first_difference(a: list[Entry], b: list[Entry]) -> int:
    """The first index at which `a` and `b` hold different objects (else the shorter
    length)."""
    differ = compress(count(), map(is_not, a, b))
    return next(differ, min(len(a), len(b)))
