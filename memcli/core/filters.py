"""Which entries a listing, a search or an inject block considers: filters by type,
creation time and keyword (with the [synonyms] groups of memcli.toml), and the query
expansion those groups give a keyword search. Pure: entries in, entries out."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from memcli.core.errors import ValidationError
from memcli.core.models import Entry, parse_time, slugify
from memcli.core.validate import check_type, clean_keywords


def filter_entries(
    entries: Sequence[Entry],
    *,
    types: Sequence[str] | None = None,
    since: str | dt.datetime | None = None,
    until: str | dt.datetime | None = None,
    keywords: Sequence[str] | None = None,
    synonyms: tuple[tuple[str, ...], ...] = (),
) -> list[Entry]:
    """Entries matching every given filter (types: any of; keywords: all of, each
    satisfied by the keyword or one of its synonyms)."""
    wanted_types = {filter_type(t) for t in types or []}
    since_t = _as_time(since, "--since")
    until_t = _as_time(until, "--until")
    if until_t is not None and isinstance(until, str) and len(until.strip()) == 10:
        until_t += dt.timedelta(days=1)  # a date means "through the end of that day"
    wanted_kw = [set(synonyms_of(k.casefold(), synonyms)) for k in clean_keywords(keywords)]
    result = []
    for entry in entries:
        if wanted_types and entry.type not in wanted_types:
            continue
        if since_t or until_t:
            created = entry.created
            if created is None:
                continue
            if since_t and created < since_t:
                continue
            if until_t and created >= until_t:
                continue
        if wanted_kw:
            have = {k.casefold() for k in entry.keywords}
            if not all(alternatives & have for alternatives in wanted_kw):
                continue
        result.append(entry)
    return result


def filter_type(entry_type: str) -> str:
    """A type to filter by: any usable type, and "archived" (archive.md's entries)."""
    return "archived" if slugify(entry_type or "") == "archived" else check_type(entry_type)


def synonyms_of(word: str, groups: tuple[tuple[str, ...], ...]) -> list[str]:
    """`word` and every word that shares a synonym group with it."""
    result = [word]
    for group in groups:
        if word in group:
            result.extend(w for w in group if w not in result)
    return result


def expand_query(query: str, groups: tuple[tuple[str, ...], ...]) -> str:
    """The query plus the synonyms of the words (or phrases) it contains."""

    def words(text: str) -> str:
        return " " + " ".join(_WORDS.findall(text.casefold())) + " "

    folded = words(query)
    extra: list[str] = []
    for group in groups:
        if any(words(w) in folded for w in group):
            extra.extend(w for w in group if w not in extra)
    return " ".join([query, *extra])


_WORDS = re.compile(r"\w+")


def _as_time(value: str | dt.datetime | None, flag: str) -> dt.datetime | None:
    if value is None or isinstance(value, dt.datetime):
        return value
    try:
        return parse_time(value)
    except ValueError as exc:
        raise ValidationError(f"{flag}: {exc}") from None
