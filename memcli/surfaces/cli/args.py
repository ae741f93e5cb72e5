"""Option values of the command line, checked and normalised the same way by the Typer
app (`app`), the Typer-free search path (`quick`) and the daemon (`served`): dates (ISO
or relative), entry types (singular, plural or heading forms; commas split). A bad value
raises UsageError (exit code 2) naming the option. `resolve_*` turn a request as typed
on the command line into the one the library takes.

Standard library and memcli.core.models only: `quick` imports this on a cold search.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Any

from memcli.core.errors import UsageError
from memcli.core.models import HEADING_TYPES, KNOWN_TYPES, format_time, parse_time, slugify
from memcli.core.requests import InjectRequest, ListRequest, SearchQuery

#: types every workspace has, whether or not it holds entries of them yet
BUILTIN_TYPES = (*KNOWN_TYPES, "episode")

DATE_FORMS = "YYYY-MM-DD, an ISO date-time, today, yesterday, or Nd / Nw (N days / weeks ago)"
_RELATIVE = re.compile(r"^(?P<n>\d{1,5})\s*(?P<unit>[dw])$")


def when(value: str, option: str, *, end: bool = False, now: dt.datetime | None = None) -> str:
    """The value of --since (or --until with `end`) as Memory takes it: ISO dates and
    date-times as given; `Nd` / `Nw` as the moment N days / weeks ago; `today` and
    `yesterday` as the start (with `end`: the end) of that local day, in UTC."""
    raw = value.strip().casefold()
    now = now or dt.datetime.now().astimezone()
    if raw in ("today", "yesterday"):
        day = now.date() - dt.timedelta(days=1 if raw == "yesterday" else 0)
        if end:
            day += dt.timedelta(days=1)  # exclusive bound: the start of the next day
        start = dt.datetime.combine(day, dt.time(), tzinfo=now.tzinfo)
        return format_time(start)
    match = _RELATIVE.match(raw)
    if match:
        days = int(match.group("n")) * (7 if match.group("unit") == "w" else 1)
        return format_time(now - dt.timedelta(days=days))
    try:
        parse_time(value)
    except ValueError:
        raise UsageError(f"{option}: {value!r} is not a date", hint=f"use {DATE_FORMS}") from None
    return value


def split_commas(values: Iterable[str] | None) -> list[str]:
    """`["a,b", "c"]` -> `["a", "b", "c"]` (blank parts dropped)."""
    return [part.strip() for v in values or [] for part in v.split(",") if part.strip()]


def canonical_type(name: str) -> str:
    """The type a name means: `preferences`, `Preference` and `User Preferences` are
    `preference` (as the `##` headings are read); anything else its slug."""
    key = " ".join(name.strip().casefold().split())
    if key in HEADING_TYPES:
        return HEADING_TYPES[key]
    slug = slugify(name)
    return HEADING_TYPES.get(slug.replace("-", " "), slug)


def declared_type(name: str, mem: Any) -> str:
    """canonical_type, where a type the workspace's `[files]` declares is also named by
    its plural or its heading (`projects`, `Hosts`: memcli.core.registry)."""
    type_ = canonical_type(name)
    if type_ in BUILTIN_TYPES:
        return type_
    found = mem.store.files.heading_type(name)
    return found if found in mem.store.files.types else type_


def workspace_types(mem: Any) -> set[str]:
    """The types `mem`'s workspace has: the built-in ones, those its `[files]` declares,
    the types of its entries and those of every `##` section in its curated files (empty
    ones too)."""
    from memcli.store.markdown import RawBlock

    files = mem.store.files
    types = set(BUILTIN_TYPES) | set(files.types)
    types.update(e.type for e in mem.entries())
    heading = re.compile(r"^##[ \t]+(?P<title>.*?)[ \t#]*$")
    fence = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
    for name in files.names:
        in_fence = False
        for block in mem.store.load(name).blocks:
            if not isinstance(block, RawBlock):
                continue
            for line in block.lines:
                text = line.rstrip("\r\n")
                if fence.match(text):
                    in_fence = not in_fence
                elif not in_fence and (found := heading.match(text)):
                    types.add(files.heading_type(found.group("title")))
    return types


def closest_type(name: str, known: Iterable[str]) -> str | None:
    """The known type a mistyped, abbreviated or plural `name` most likely means
    (`prefs` → preference, `lessn` → lesson), or None."""
    import difflib

    names = sorted(known)
    key = name.casefold().strip()
    stem = key.removesuffix("s") if len(key) > 3 else key
    starts = [t for t in names if len(stem) >= 3 and t.startswith(stem)]
    if len(starts) == 1:
        return starts[0]
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _suggestion(name: str, known: Iterable[str]) -> str:
    close = closest_type(name, known)
    return f" (did you mean {close}?)" if close else ""


def check_types(
    values: Sequence[str] | None, mem: Any, option: str = "--type", *, archived: bool = True
) -> list[str] | None:
    """The types to filter by (commas split, plural and heading forms accepted), or None
    for no filter. An unknown type is a UsageError with the closest known one."""
    names = split_commas(values)
    if not names:
        return None
    wanted = [declared_type(n, mem) for n in names]
    allowed = {*BUILTIN_TYPES, "archived"} if archived else set(BUILTIN_TYPES)
    if any(t not in allowed for t in wanted):
        allowed |= workspace_types(mem)
    for name, type_ in zip(names, wanted, strict=True):
        if type_ not in allowed:
            shown = sorted(allowed)
            raise UsageError(
                f"{option}: unknown type {name!r}{_suggestion(type_, allowed)}",
                hint=f"this workspace has {', '.join(shown)}",
            )
    return wanted


def check_new_type(name: str, mem: Any, new_type: bool) -> str:
    """The type `add --type NAME` writes: a known type, one of an existing section, or,
    with --new-type, a new one (a new `##` section)."""
    type_ = declared_type(name, mem)
    if new_type or type_ in BUILTIN_TYPES or not type_:
        return type_ or name
    types = workspace_types(mem)
    if type_ not in types:
        meant = closest_type(type_, types)
        raise UsageError(
            f"--type: no section of type {name!r} in this workspace{_suggestion(type_, types)}",
            hint=f"use --type {meant}, or add --new-type to start a new `## {name}` section"
            if meant
            else f"add --new-type to start a new `## {name}` section",
        )
    return type_


def resolve_search(q: SearchQuery, mem: Any, now: dt.datetime | None = None) -> SearchQuery:
    """`q` with --type values as types and --since / --until as moments from `now` (in
    this order: the first bad value is the one reported)."""
    return dataclasses.replace(
        q,
        types=tuple(check_types(q.types, mem) or ()),
        since=when(q.since, "--since", now=now) if q.since else None,
        until=when(q.until, "--until", end=True, now=now) if q.until else None,
    )


def resolve_inject(r: InjectRequest, mem: Any) -> InjectRequest:
    """`r` with --types values as types."""
    return dataclasses.replace(r, types=tuple(check_types(r.types, mem, "--types") or ()))


def resolve_list(r: ListRequest, mem: Any, now: dt.datetime | None = None) -> ListRequest:
    """`r` with --type values as types and --since / --until as moments from `now`."""
    return dataclasses.replace(
        r,
        types=tuple(check_types(r.types, mem) or ()),
        since=when(r.since, "--since", now=now) if r.since else None,
        until=when(r.until, "--until", end=True, now=now) if r.until else None,
    )
