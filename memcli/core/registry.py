"""The registry of a workspace's files: which files hold entries and what each is.

- curated files (memory.md, learnings.md and those `[files]` in memcli.toml adds, e.g.
  projects.md): the types written to each, the type of its items before the first
  `##` heading, the section heading memcli writes for each type, the title of a new one;
- ordered logs (episodes/YYYY-MM-DD.md, conversations/*.md): entries follow each other
  in time;
- archive.md: what forget/compress removed, restorable;
- memcli.toml: the settings.

Everything that asks "which files" asks a Registry: the store (which files hold
entries), the parser (default types, headings), add/restore/compress/reflect (which file
a type goes to), git (which files the merge driver merges), the watcher (which paths it
watches), history/undo (which names are the workspace's own). `BUILTIN` is the registry
of a workspace without `[files]`; memcli.store.config_files builds one from memcli.toml.
Pure: no I/O.
"""

from __future__ import annotations

import re

from memcli.core.models import heading_type, section_title
from memcli.core.names import (
    ARCHIVE_FILE,
    BUILTIN_FILES,
    CONFIG_FILE,
    CONVERSATIONS_DIR,
    EPISODES_DIR,
    SEQUENCE_DIRS,
)
from memcli.core.records import record

#: the types of the ordered logs' entries: an episode note, a conversation's turn
LOG_TYPES = {EPISODES_DIR: ("episode", "e"), CONVERSATIONS_DIR: ("turn", "c")}
_EPISODE_NAME = re.compile(re.escape(EPISODES_DIR) + r"/\d{4}-\d{2}-\d{2}\.md")


@record(frozen=True)
class FileSpec:
    """One curated file: `types` are written to it (add, restore, compress); `default`
    is the type of its items before the first `##` heading; `headings` the section
    heading memcli writes for a type (default: the type's name, capitalised);
    `starter` the types whose sections a new file starts with."""

    name: str
    types: tuple[str, ...]
    default: str
    title: str
    prefix: str = "m"
    headings: tuple[tuple[str, str], ...] = ()
    starter: tuple[str, ...] = ()

    def heading(self, entry_type: str) -> str:
        """The `##` heading memcli writes for a section of `entry_type` in this file."""
        return dict(self.headings).get(entry_type) or section_title(entry_type)

    def template(self) -> str:
        """The text of a new, empty file."""
        sections = "".join(f"\n## {self.heading(t)}\n" for t in self.starter)
        return f"---\nmemcli: 1\n---\n# {self.title}\n{sections}"


@record(frozen=True)
class Registry:
    """The files of one workspace (see the module docstring); `curated[0]` is the
    primary file (a type no file declares goes there, `memcli open` opens it)."""

    curated: tuple[FileSpec, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The curated files' names, in order."""
        return tuple(spec.name for spec in self.curated)

    @property
    def primary(self) -> str:
        return self.curated[0].name

    @property
    def archive(self) -> str:
        return ARCHIVE_FILE

    @property
    def config(self) -> str:
        return CONFIG_FILE

    @property
    def log_dirs(self) -> tuple[str, ...]:
        return SEQUENCE_DIRS

    @property
    def types(self) -> tuple[str, ...]:
        """Every type a curated file declares, in file order."""
        return tuple(t for spec in self.curated for t in spec.types)

    def spec(self, name: str) -> FileSpec | None:
        """The curated file `name`, None when it is not one."""
        return next((s for s in self.curated if s.name == name), None)

    def file_for_type(self, entry_type: str) -> str:
        """The file an entry of this type is written to."""
        found = next((s for s in self.curated if entry_type in s.types), None)
        return (found or self.curated[0]).name

    def section_title(self, entry_type: str) -> str:
        """The heading memcli writes for a section of this type (its file's heading)."""
        return self.curated_spec_for(entry_type).heading(entry_type)

    def curated_spec_for(self, entry_type: str) -> FileSpec:
        return self.spec(self.file_for_type(entry_type)) or self.curated[0]

    def heading_type(self, title: str) -> str:
        """The type a `##` heading gives: a heading a curated file writes (or the plural
        of a type one declares: `## Projects` is `project`), else
        memcli.core.models.heading_type (built-in names, else the heading's slug)."""
        key = " ".join(title.strip().casefold().split())
        for spec in self.curated:
            for entry_type, heading in spec.headings:
                if key == heading.casefold():
                    return entry_type
        found = heading_type(title)
        if found not in self.types and found.endswith("s") and found[:-1] in self.types:
            return found[:-1]
        return found

    def default_type(self, name: str) -> str:
        """The type of items before the first `##` heading of file `name`."""
        spec = self.spec(name)
        if spec is not None:
            return spec.default
        head = name.replace("\\", "/").partition("/")[0]
        return LOG_TYPES[head][0] if self.is_log(name) else "fact"

    def id_prefix(self, name: str) -> str:
        """The first letter of the ids minted for entries of file `name`."""
        spec = self.spec(name)
        if spec is not None:
            return spec.prefix
        head = name.replace("\\", "/").partition("/")[0]
        return LOG_TYPES[head][1] if self.is_log(name) else "m"

    def is_curated(self, name: str) -> bool:
        return self.spec(name) is not None

    def is_log(self, name: str) -> bool:
        """True for a file of an ordered log (episodes/…, conversations/…): its entries
        follow each other in time, so a search lets one borrow relevance from the ones
        next to it; curated files and archive.md are not sequences."""
        head, _, rest = name.replace("\\", "/").partition("/")
        return bool(rest) and head in SEQUENCE_DIRS and "/" not in rest

    def is_entry_file(self, name: str) -> bool:
        """True for any file of the workspace that holds entries (archive.md too)."""
        return (
            self.is_curated(name)
            or name == ARCHIVE_FILE
            or (self.is_log(name) and name.endswith(".md"))
        )

    def is_own_file(self, name: str, listed: list[str] | tuple[str, ...] = ()) -> bool:
        """True when `name`, a workspace-relative path read from a file (archive.md's
        `from=`), is one of the workspace's own entry files an entry may go back to: a
        curated file, episodes/YYYY-MM-DD.md, or an episode file the store lists. Never
        a path that leaves the workspace (`..`, absolute) or any other file."""
        if self.is_curated(name) or _EPISODE_NAME.fullmatch(name):
            return True
        return name in listed and name.startswith(f"{EPISODES_DIR}/") and name.count("/") == 1

    def watched(self, rel: str) -> bool:
        """True for a workspace-relative path the watcher re-indexes on (a curated file,
        archive.md, memcli.toml, a log's Markdown file)."""
        rel = rel.replace("\\", "/")
        if "/" not in rel:
            return self.is_curated(rel) or rel in (ARCHIVE_FILE, CONFIG_FILE)
        return self.is_log(rel) and rel.endswith(".md")

    @property
    def merged(self) -> tuple[str, ...]:
        """The files git merges entry by entry (memcli.store.gitmerge): the curated
        files and archive.md, and the logs as patterns (`episodes/*.md`)."""
        return (*self.names, ARCHIVE_FILE, *(f"{d}/*.md" for d in SEQUENCE_DIRS))

    def describe(self) -> str:
        """The entry files, as said in messages: `memory.md, learnings.md, episodes/, …`."""
        return ", ".join((*self.names, *(f"{d}/" for d in SEQUENCE_DIRS)))


def builtin_specs() -> tuple[FileSpec, ...]:
    """The curated files of every workspace (memcli.core.names.BUILTIN_FILES)."""
    return tuple(
        FileSpec(
            name,
            tuple(t for t, _ in sections),
            default,
            title,
            prefix,
            sections,
            starter,
        )
        for name, title, prefix, default, sections, starter in BUILTIN_FILES
    )


#: the registry of a workspace without `[files]`
BUILTIN = Registry(builtin_specs())
