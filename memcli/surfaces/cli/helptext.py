"""What `memcli --help` and each command's help show beyond the options: the panel a
command is listed under, its examples, and the command a mistyped or synonymous name
means (`delete` → forget).

One table, so that a new command without a panel or examples fails a test
(tests/unit/test_help.py) instead of going unlisted. Examples are command lines a
person can type as they are; the test parses each one against its command.
"""

from __future__ import annotations

from typing import Any

#: the panels of `memcli --help`, in the order they are shown
EVERYDAY = "Everyday"
AGENTS = "Agents"
MAINTENANCE = "Maintenance"
SETUP = "Setup"
PANELS = (EVERYDAY, AGENTS, MAINTENANCE, SETUP)

#: command path (after `memcli`) → (panel, [(example, what it does)]); subcommands of a
#: group (`config set`) have no panel of their own (None)
COMMANDS: dict[str, tuple[str | None, list[tuple[str, str]]]] = {
    "init": (SETUP, [
        ("memcli init", "make the current directory a workspace"),
        ("memcli init ~/notes/memory", "a workspace somewhere else"),
    ]),
    "add": (EVERYDAY, [
        ('memcli add "Prefers pytest over unittest" --type preference',
         "remember a preference"),
        ('memcli add "Deploys go through staging first" -t lesson -i 0.8', "an important lesson"),
        ('memcli add "Prefers tabs over spaces" -t preference --to user', "in your own layer"),
        ("echo 'Cat is called Miso' | memcli add -", "the text from stdin"),
    ]),
    "list": (EVERYDAY, [
        ("memcli list", "every entry"),
        ("memcli list --type preference --since 7d", "this week's preferences"),
    ]),
    "get": (EVERYDAY, [("memcli get m8f3a2c1", "one entry with its metadata")]),
    "edit": (EVERYDAY, [
        ('memcli edit m8f3a2c1 --text "Prefers pytest with fixtures"', "new text"),
        ("memcli edit m8f3a2c1 --importance 0.9 --pin", "raise it and keep it"),
        ("memcli edit m8f3a2c1", "open it in $EDITOR"),
    ]),
    "forget": (EVERYDAY, [("memcli forget m8f3a2c1", "move it to archive.md")]),
    "open": (EVERYDAY, [
        ("memcli open", "memory.md in $VISUAL / $EDITOR"),
        ("memcli open learnings.md", "the learnings"),
    ]),
    "restore": (EVERYDAY, [("memcli restore m8f3a2c1", "bring an archived entry back")]),
    "stats": (MAINTENANCE, [("memcli stats", "counts by type and file")]),
    "search": (EVERYDAY, [
        ('memcli search "how do I write tests"', "ranked memories"),
        ('memcli search "deploy" --mode keyword --type lesson', "keyword matches, lessons only"),
        ('memcli search "editor" --explain', "every part of each score"),
    ]),
    "index": (MAINTENANCE, [
        ("memcli index", "bring the index up to date"),
        ("memcli index --rebuild", "rebuild it from the Markdown alone"),
    ]),
    "inject": (AGENTS, [
        ('memcli inject -q "set up the CI pipeline" --max-tokens 800', "a block for a prompt"),
        ("memcli inject --messages chat.json", "chosen by a conversation's last turns"),
    ]),
    "watch": (SETUP, [
        ("memcli watch", "in the foreground (Ctrl-C stops it)"),
        ("memcli watch --background", "as a process of its own"),
        ("memcli watch --status", "how the running watcher is"),
    ]),
    "extract": (AGENTS, [
        ("memcli extract --messages chat.json --dry-run", "what would be remembered"),
        ("memcli extract --messages chat.jsonl", "remember it"),
    ]),
    "compress": (MAINTENANCE, [
        ("memcli compress --dry-run", "the plan as a diff"),
        ("memcli compress --yes", "apply it"),
    ]),
    "reflect": (MAINTENANCE, [
        ("memcli reflect --dry-run", "the insights it would write"),
        ("memcli reflect --force", "reflect now, whatever the trigger says"),
    ]),
    "log": (EVERYDAY, [('memcli log "Shipped v2.1 to production"', "a note in today's episode")]),
    "history": (MAINTENANCE, [
        ("memcli history", "past changes, newest first"),
        ("memcli history --removed", "entries a save removed"),
        ("memcli history m8f3a2c1", "one entry's versions"),
    ]),
    "undo": (EVERYDAY, [
        ("memcli undo --dry-run", "what undo would take back"),
        ("memcli undo --yes", "take it back"),
    ]),
    "doctor": (MAINTENANCE, [("memcli doctor", "check the files, index and model")]),
    "export": (MAINTENANCE, [
        ("memcli export > memories.jsonl", "every entry as JSON Lines"),
        ("memcli export --format markdown", "plain Markdown"),
    ]),
    "import": (MAINTENANCE, [
        ("memcli import memories.jsonl --dry-run", "what would be added"),
        ("memcli import CLAUDE.md", "the bullets of a CLAUDE.md"),
        ("memcli import conversations.json --dry-run", "a ChatGPT export: what it would keep"),
        ("memcli import --conversation chat.json", "a conversation as an ordered log"),
    ]),
    "mcp": (AGENTS, [
        ("memcli mcp", "an MCP server over stdio"),
        ("memcli mcp --http 127.0.0.1:8765", "over streamable HTTP"),
    ]),
    "hook": (AGENTS, [
        ("memcli hook user-prompt-submit < payload.json", "what Claude Code's hook runs"),
    ]),
    "install": (AGENTS, [
        ("memcli install claude-code", "hooks and MCP for Claude Code"),
        ("memcli install cursor --project", "MCP for Cursor, this project only"),
    ]),
    "uninstall": (AGENTS, [("memcli uninstall claude-code", "remove what install added")]),
    "trust": (SETUP, [("memcli trust", "approve this workspace's memcli.toml")]),
    "config": (SETUP, [
        ("memcli config list", "every setting in effect"),
        ("memcli config set search.limit 5", "change one"),
    ]),
    "config list": (None, [("memcli config list", "every setting and where it comes from")]),
    "config get": (None, [("memcli config get inject.max_tokens", "one setting")]),
    "config set": (None, [
        ("memcli config set search.limit 5", "in this workspace's memcli.toml"),
        ("memcli config set inject.max_tokens 1200 --user", "in your own config.toml"),
    ]),
    "review": (EVERYDAY, [
        ("memcli review", "what an agent asked for that waits for you, as ID@FINGERPRINT"),
        ("memcli review confirm m8f3a2c1", "apply the version listed; the entry is yours"),
    ]),
    "review confirm": (None, [
        ("memcli review confirm m8f3a2c1", "the version the last `memcli review` showed"),
        ("memcli review confirm m8f3a2c1@3f9a0c6d21", "the version with that fingerprint"),
        ("memcli review confirm --all", "everything the last listing showed"),
    ]),
    "review reject": (None, [
        ("memcli review reject m8f3a2c1", "archive it (`memcli restore` brings it back)"),
    ]),
    "config unset": (None, [
        ("memcli config unset search.limit", "back to the default"),
        ("memcli config unset inject.max_tokens --user", "from your own config.toml"),
    ]),
    "git": (SETUP, [("memcli git setup", "entry-aware merges for this workspace")]),
    "git setup": (None, [("memcli git setup", "register the merge driver here")]),
}

#: words people type for a command memcli names otherwise
SYNONYMS = {
    "delete": "forget",
    "remove": "forget",
    "rm": "forget",
    "del": "forget",
    "archive": "forget",
    "unarchive": "restore",
    "undelete": "restore",
    "show": "get",
    "view": "get",
    "cat": "get",
    "ls": "list",
    "find": "search",
    "query": "search",
    "grep": "search",
    "new": "add",
    "create": "add",
    "remember": "add",
    "update": "edit",
    "change": "edit",
    "prune": "compress",
    "dedupe": "compress",
    "dedup": "compress",
    "summarize": "reflect",
    "reindex": "index",
    "rebuild": "index",
    "check": "doctor",
    "status": "doctor",
    "revert": "undo",
    "settings": "config",
    "serve": "mcp",
    "server": "mcp",
    "daemon": "watch",
    "prompt": "inject",
    "context": "inject",
}


def examples_text(path: str) -> str | None:
    """The Examples section of a command's help (None: the table has none)."""
    row = COMMANDS.get(path)
    if not row or not row[1]:
        return None
    width = max(len(line) for line, _ in row[1])
    lines = [f"  {line.ljust(width)}  # {what}" for line, what in row[1]]
    return "Examples:\n\n\b\n" + "\n".join(lines)  # \b: Click keeps the lines as they are


def panel(path: str) -> str | None:
    """The panel a top-level command is listed under."""
    row = COMMANDS.get(path)
    return row[0] if row else None


def suggest(name: str, known: list[str]) -> str | None:
    """The command a mistyped or synonymous `name` most likely means, or None."""
    import difflib

    key = name.casefold()
    if key in SYNONYMS and SYNONYMS[key] in known:
        return SYNONYMS[key]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    if close:
        return close[0]
    prefixed = [k for k in known if k.startswith(key) or (len(key) >= 3 and key.startswith(k))]
    return prefixed[0] if len(prefixed) == 1 else None


def attach(group: Any, prefix: str = "") -> None:
    """Give every command under `group` its Examples epilog (once; recursive)."""
    for name, command in getattr(group, "commands", {}).items():
        path = f"{prefix} {name}".strip()
        if command.epilog is None:
            command.epilog = examples_text(path)
        attach(command, path)
