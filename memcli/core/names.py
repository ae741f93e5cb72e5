"""The names of a workspace's own files (no imports: the hooks' workspace resolution,
memcli.store.workspace, reads them before handing a prompt to the daemon)."""

MEMORY_FILE = "memory.md"
LEARNINGS_FILE = "learnings.md"
CONFIG_FILE = "memcli.toml"
ARCHIVE_FILE = "archive.md"
#: derived state (index, cache, statistics, history, locks, the daemon's socket)
STATE_DIR = ".memcli"
