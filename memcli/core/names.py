"""The names of a workspace's own files, and the curated files every workspace has:
the built-in half of the registry (memcli.core.registry; `[files]` in memcli.toml adds
to it). No imports: the hooks' workspace resolution (memcli.store.workspace) reads them
before handing a prompt to the daemon. No other module spells these names."""

CONFIG_FILE = "memcli.toml"
ARCHIVE_FILE = "archive.md"
#: derived state (index, cache, statistics, history, locks, the daemon's socket)
STATE_DIR = ".memcli"
#: episodic notes, one file per day (episodes/YYYY-MM-DD.md)
EPISODES_DIR = "episodes"
#: imported conversations, one file per conversation (memcli import --conversation)
CONVERSATIONS_DIR = "conversations"
#: folders of ordered logs: there adjacent entries follow each other in time
SEQUENCE_DIRS = (EPISODES_DIR, CONVERSATIONS_DIR)

#: the curated files of every workspace, in order (the first is the primary one: `open`
#: opens it, a type no file declares is written to it): (name, `#` title of a new file,
#: first letter of the ids minted there, type of the items before the first `##`
#: heading, (type, the section heading memcli writes) for each type written there,
#: the sections a new file starts with)
BUILTIN_FILES: tuple[
    tuple[str, str, str, str, tuple[tuple[str, str], ...], tuple[str, ...]], ...
] = (
    (
        "memory.md",
        "Memory",
        "m",
        "fact",
        (
            ("preference", "Preferences"),
            ("fact", "Facts"),
            ("pattern", "Patterns"),
            ("reflection", "Reflections"),
            ("correction", "Corrections"),
        ),
        ("preference", "fact", "pattern", "reflection"),
    ),
    (
        "learnings.md",
        "Learnings",
        "l",
        "lesson",
        (("skill", "Skills"), ("lesson", "Lessons")),
        ("skill", "lesson"),
    ),
)
#: the files whose presence makes a directory a workspace (the walk up takes the nearest
#: directory holding one of MARKERS; a workspace exists once it has a curated file)
CURATED_BUILTIN = tuple(spec[0] for spec in BUILTIN_FILES)
MARKERS = (CURATED_BUILTIN[0], CONFIG_FILE)
#: the built-in curated files by name, for tests and tools that build workspaces; memcli's
#: own modules ask the workspace's registry instead (tests/unit/test_registry.py)
MEMORY_FILE, LEARNINGS_FILE = CURATED_BUILTIN
