"""`[files]` of memcli.toml: the curated files a workspace adds to memory.md and
learnings.md (memcli.core.registry). One table per file:

```toml
[files."projects.md"]
types = ["project", "host"]     # required: the types written to this file
default = "project"             # the type of items before the first `##` heading (types[0])
title = "Projects"              # the `# ` title of a new file (from the name: "Projects")
headings = { host = "Hosts" }   # the `##` heading memcli writes for a type ("Host")
```

A name is a Markdown file directly in the workspace folder (letters, digits, `_ . -`,
ending `.md`): never a path (`/`, `..`, absolute), a hidden file, archive.md,
memory.md or learnings.md (their types are built in). A type is a lower-case word
(`project`, `code-review`) no other file declares, and not a built-in type
(preference, fact, …: memory.md's and learnings.md's). A `## Projects` heading in
projects.md gives type `project` too (the plural of a declared type). Anything else
is an error naming memcli.toml:line, and nothing is read or written until it is fixed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NoReturn

from memcli.core.errors import ConfigError, MemcliError
from memcli.core.models import KNOWN_TYPES, heading_type, slugify
from memcli.core.names import ARCHIVE_FILE, CONFIG_FILE
from memcli.core.registry import BUILTIN, LOG_TYPES, FileSpec, Registry

KEYS = ("types", "default", "title", "headings")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\.md")
#: types no curated file may declare: what an archived entry or a log's entry is
RESERVED_TYPES = frozenset(["archived", *(t for t, _ in LOG_TYPES.values())])


def load_registry(root: Path) -> Registry:
    """The registry of the workspace at `root`: BUILTIN plus `[files]` of its
    memcli.toml (ConfigError naming memcli.toml:line when an entry is bad)."""
    from memcli.store.links import read_settings

    path = root / CONFIG_FILE
    try:
        data = read_settings(path, root)  # the link rule, a regular file, bounded
    except FileNotFoundError:
        return BUILTIN
    if b"files" not in data:  # no [files] table: nothing to parse
        return BUILTIN
    import tomllib  # only where there is a table to parse (≈ 5 ms of a cold read)

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}", hint="fix the TOML syntax") from None
    return registry_from(table.get("files"), path)


def registry_from(files: Any, path: Path) -> Registry:
    """BUILTIN plus the files of a parsed `[files]` table read from `path`."""
    if files is None:
        return BUILTIN
    if not isinstance(files, dict):
        _fail(path, None, None, '[files] must be a table of [files."name.md"] tables')
    specs = list(BUILTIN.curated)
    for name, given in files.items():
        specs.append(_spec(name, given, path, specs))
    return Registry(tuple(specs))


def _spec(name: str, given: Any, path: Path, taken: list[FileSpec]) -> FileSpec:
    def fail(message: str, key: str | None = None, hint: str = "") -> NoReturn:
        _fail(path, name, key, message, hint)

    where = f'files."{name}"'
    if not _NAME.fullmatch(name) or ".." in name:
        fail(
            f"{where}: {name!r} is not a file name in the workspace folder",
            hint="name a Markdown file directly in the workspace, e.g. projects.md "
            "(letters, digits, _ . -; no path, no ..)",
        )
    if name == ARCHIVE_FILE:
        fail(
            f"{where}: {ARCHIVE_FILE} holds what forget and compress removed; it cannot be "
            "a curated file",
            hint="choose another name",
        )
    for spec in taken:
        if spec.name.casefold() == name.casefold():
            built_in = BUILTIN.spec(spec.name) is not None
            fail(
                f"{where}: {spec.name} is built in (its types are fixed)"
                if built_in
                else f'{where}: the same file as files."{spec.name}"',
                hint="choose another name" if built_in else "declare each file once",
            )
    if not isinstance(given, dict):
        fail(
            f"{where} must be a table with types = [...]", hint=f'e.g. {where}.types = ["project"]'
        )
    unknown = [k for k in given if k not in KEYS]
    if unknown:
        fail(f"{where}: unknown key {unknown[0]!r}", unknown[0], f"keys: {', '.join(KEYS)}")
    types = given.get("types")
    if not isinstance(types, list) or not types or not all(isinstance(t, str) for t in types):
        fail(
            f"{where}.types must be a non-empty list of type names",
            "types",
            'e.g. types = ["project"]',
        )
    declared = {t: spec.name for spec in taken for t in spec.types}
    for entry_type in types:
        slug = slugify(entry_type)
        if slug != entry_type or not slug:
            fail(
                f"{where}.types: {entry_type!r} is not a type name",
                "types",
                f"a type is a lower-case word or words joined by - (e.g. {slug or 'project'!r})",
            )
        if entry_type in RESERVED_TYPES or heading_type(entry_type) in RESERVED_TYPES:
            fail(
                f"{where}.types: {entry_type!r} is reserved (archive.md's and the logs' entries)",
                "types",
            )
        known = KNOWN_TYPES.get(entry_type) or KNOWN_TYPES.get(heading_type(entry_type))
        if known is not None:
            fail(
                f"{where}.types: {entry_type!r} is a built-in type of {known[0]}",
                "types",
                "declare new types only; built-in ones stay in their file",
            )
        if entry_type in declared:
            fail(
                f"{where}.types: {entry_type!r} is declared twice "
                f"({declared[entry_type]} and {name})",
                "types",
                "each type lives in one file",
            )
        declared[entry_type] = name
    default = given.get("default", types[0])
    if default not in types:
        fail(
            f"{where}.default: {default!r} is not one of its types ({', '.join(types)})", "default"
        )
    title = given.get("title", _title(name))
    if not isinstance(title, str) or not title.strip() or "\n" in title or "\r" in title:
        fail(f"{where}.title must be one line of text", "title")
    headings = given.get("headings", {})
    if not isinstance(headings, dict):
        fail(f'{where}.headings must be a table of type = "Heading"', "headings")
    for entry_type, heading in headings.items():
        if entry_type not in types:
            fail(f"{where}.headings: {entry_type!r} is not one of its types", "headings")
        if not isinstance(heading, str) or not heading.strip() or "\n" in heading:
            fail(f"{where}.headings.{entry_type} must be one line of text", "headings")
        other = heading_type(heading)
        if other in KNOWN_TYPES or (other in declared and declared[other] != name):
            fail(
                f"{where}.headings.{entry_type}: {heading!r} is the heading of type {other!r}",
                "headings",
            )
    return FileSpec(
        name,
        tuple(types),
        default,
        title.strip(),
        "m",  # as memcli.store.metadata.id_prefix_for, which reparse uses
        tuple((t, h.strip()) for t, h in headings.items()),
        tuple(types),
    )


def _title(name: str) -> str:
    stem = name[: -len(".md")]
    return re.sub(r"[_.-]+", " ", stem).strip().capitalize() or stem


def _fail(path: Path, name: str | None, key: str | None, message: str, hint: str = "") -> NoReturn:
    line = line_of_file(path, name, key)
    raise ConfigError(
        f"{path}{f':{line}' if line else ''}: {message}",
        hint=(hint + "; " if hint else "") + "nothing was read or changed",
    )


def line_of_file(path: Path, name: str | None, key: str | None = None) -> int | None:
    """The line of `path` declaring `[files."name"]` (its `key` line when given), or the
    `[files]` table's line when `name` is None; None when not found."""
    from memcli.store.links import read_settings

    try:
        lines = read_settings(path).decode("utf-8").splitlines()
    except (MemcliError, OSError, UnicodeDecodeError):
        return None
    quoted = rf"(?:\"{re.escape(name)}\"|'{re.escape(name)}'|{re.escape(name)})" if name else ""
    header = re.compile(
        rf"\s*\[\s*files\s*(?:\.\s*{quoted})?\s*\]" if name else r"\s*(?:\[\s*files\b|files\s*=)"
    )
    inline = re.compile(rf"\s*(?:files\s*\.\s*)?{quoted}\s*(?:=|\.)") if name else None
    found: int | None = None
    for number, line in enumerate(lines, 1):
        if found is None:
            if header.match(line) and (name is None or name in line):
                found = number
                if key is None:
                    return found
            elif inline is not None and inline.match(line):
                found = number
                if key is None or re.search(rf"\b{re.escape(key)}\b", line):
                    return number
            continue
        if re.match(r"\s*\[", line):
            break
        if key is not None and re.match(rf"\s*{re.escape(key)}\s*[=.]", line):
            return number
    return found
