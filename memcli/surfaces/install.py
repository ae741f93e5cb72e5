"""`memcli install HOST` / `memcli uninstall HOST`: wire memcli into an agent host.

- claude-code: hooks in `.claude/settings.json` (`--project`) or `~/.claude/settings.json`
  (`--user`): SessionStart and UserPromptSubmit get an inject block, PreCompact and Stop
  extract from the transcript (`memcli hook EVENT`); with `--project` also the MCP server
  in `.mcp.json`. (Claude Code keeps user-scope MCP servers in `~/.claude.json`, a file it
  rewrites itself while running: for that scope we print `claude mcp add` instead.)
- cursor: the MCP server in `.cursor/mcp.json` or `~/.cursor/mcp.json`.
- codex: the MCP server as `[mcp_servers.memcli]` in `~/.codex/config.toml` (`$CODEX_HOME`)
  or `.codex/config.toml` (trusted projects), edited with tomlkit so comments stay.

Settings files are merged, never replaced: other keys, hooks and servers stay as they are,
installing twice changes nothing, a file that is not valid JSON/TOML is refused (nothing
is written), and uninstall removes what install added (hooks whose command is
`memcli … hook EVENT`, the `memcli` server) and nothing else.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.core.errors import MemcliError, ValidationError

HOSTS = ("claude-code", "cursor", "codex")
SERVER = "memcli"
#: Claude Code event -> (hook event argument, matcher or None, timeout in seconds)
CLAUDE_HOOKS: dict[str, tuple[str, str | None, int]] = {
    "SessionStart": ("session-start", "startup|resume|clear|compact", 10),
    "UserPromptSubmit": ("user-prompt-submit", None, 10),
    "PreCompact": ("pre-compact", None, 60),
    "Stop": ("stop", None, 60),
}


@dataclass
class Change:
    """One settings file: its text before (None: absent) and after (None: delete it)."""

    path: Path
    before: str | None
    after: str | None
    did: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                (self.after or "").splitlines(keepends=True),
                str(self.path) if self.before is not None else "/dev/null",
                str(self.path) if self.after is not None else "/dev/null",
            )
        )

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "changed": self.changed, "did": self.did}


@dataclass
class Plan:
    host: str
    scope: str
    changes: list[Change]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "scope": self.scope,
            "files": [c.to_dict() for c in self.changes],
            "notes": self.notes,
        }


def memcli_command() -> list[str]:
    """How the host should start memcli: `memcli` when that is on PATH, else the
    absolute path of this installation's script (or `python -m memcli`)."""
    found = shutil.which("memcli")
    if found:
        return ["memcli"]
    script = Path(sys.executable).parent / "memcli"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "memcli"]


def plan(
    host: str,
    scope: str,
    *,
    remove: bool = False,
    project_dir: Path | None = None,
    home: Path | None = None,
    workspace: str | None = None,
    command: list[str] | None = None,
) -> Plan:
    """What install (or uninstall, with remove) would write for `host` in `scope`
    ("project" or "user"); nothing is written here."""
    if host not in HOSTS:
        raise ValidationError(f"unknown host {host!r}: give one of {', '.join(HOSTS)}")
    if scope not in ("project", "user"):
        raise ValidationError("scope must be project or user")
    project_dir = (project_dir or Path.cwd()).resolve()
    home = home or Path.home()
    base = [*(command or memcli_command())]
    if workspace:
        base += ["-w", str(Path(workspace).expanduser().resolve())]
    server = {"command": base[0], "args": [*base[1:], "mcp"]}
    result = Plan(host, scope, [])
    if host == "claude-code":
        where = project_dir / ".claude" if scope == "project" else home / ".claude"
        result.changes.append(_claude_hooks(where / "settings.json", base, remove))
        if scope == "project":
            result.changes.append(_json_server(project_dir / ".mcp.json", server, remove))
        elif not remove:
            line = shlex.join(["claude", "mcp", "add", "--scope", "user", SERVER, "--", *base])
            result.notes.append(f"for memcli's MCP tools in every project too: {line} mcp")
    elif host == "cursor":
        where = project_dir / ".cursor" if scope == "project" else home / ".cursor"
        result.changes.append(_json_server(where / "mcp.json", server, remove))
    else:
        codex_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
        where = project_dir / ".codex" if scope == "project" else codex_home
        result.changes.append(_toml_server(where / "config.toml", server, remove))
        if scope == "project" and not remove:
            result.notes.append(
                "Codex reads a project's .codex/config.toml only in projects it trusts"
            )
    if not remove and base[0] != "memcli":
        result.notes.append(f"memcli is not on PATH: the settings name {base[0]}")
    return result


def apply(result: Plan) -> list[Path]:
    """Write the changed files (atomically, keeping their mode); returns them."""
    written = []
    for change in result.changes:
        if not change.changed:
            continue
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            _write(change.path, change.after)
        written.append(change.path)
    return written


# ------------------------------------------------------------------ Claude Code hooks


def is_our_hook(command: object, event: str | None = None) -> bool:
    """Whether a hook command is `memcli … hook EVENT` (any path to memcli, any -w)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if "hook" not in words:
        return False
    i = words.index("hook")
    program = " ".join(words[:i])
    if "memcli" not in program:
        return False
    return event is None or words[i + 1 : i + 2] == [event]


def _claude_hooks(path: Path, base: list[str], remove: bool) -> Change:
    before, data = _read_json(path)
    hooks = data.get("hooks")
    if hooks is None:
        hooks = {}
    if not isinstance(hooks, dict):
        raise _shape_error(path, '"hooks" is not an object')
    did = []
    for event, (argument, matcher, timeout) in CLAUDE_HOOKS.items():
        groups = hooks.get(event)
        if groups is None:
            groups = []
        if not isinstance(groups, list):
            raise _shape_error(path, f'"hooks.{event}" is not a list')
        command = shlex.join([*base, "hook", argument])
        ours = [
            (group, handler)
            for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for handler in group["hooks"]
            if isinstance(handler, dict) and is_our_hook(handler.get("command"), argument)
        ]
        if remove:
            for group, handler in ours:
                group["hooks"].remove(handler)
            emptied = [id(group) for group, _ in ours if not group["hooks"]]
            kept = [g for g in groups if id(g) not in emptied]
            if ours:
                did.append(f"removed the {event} hook")
            if kept:
                hooks[event] = kept
            else:
                hooks.pop(event, None)
            continue
        handler = {"type": "command", "command": command, "timeout": timeout}
        if ours:
            (group, current), *extra = ours
            if current != handler or extra:
                current.clear()
                current.update(handler)
                for other_group, other in extra:  # one memcli hook per event is enough
                    other_group["hooks"].remove(other)
                did.append(f"updated the {event} hook")
            continue
        group = {"hooks": [handler]}
        if matcher:
            group = {"matcher": matcher, **group}
        groups.append(group)
        hooks[event] = groups
        did.append(f"added the {event} hook: {command}")
    if hooks:
        data["hooks"] = hooks
    else:
        data.pop("hooks", None)
    return Change(path, before, _json_text(data, before, remove) if did else before, did)


# ------------------------------------------------------------------ MCP server entries


def _is_our_server(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return "memcli" in " ".join(words) and "mcp" in words


def _json_server(path: Path, server: dict[str, Any], remove: bool) -> Change:
    before, data = _read_json(path)
    servers = data.get("mcpServers")
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise _shape_error(path, '"mcpServers" is not an object')
    did = []
    current = servers.get(SERVER)
    if remove:
        if _is_our_server(current):
            del servers[SERVER]
            did.append(f"removed the MCP server {SERVER!r}")
    elif current is None:
        servers[SERVER] = server
        line = shlex.join([server["command"], *server["args"]])
        did.append(f"added the MCP server {SERVER!r}: {line}")
    elif not _is_our_server(current):
        raise MemcliError(
            f"{path}: an MCP server named {SERVER!r} is there already and does not run "
            "`memcli mcp`; nothing was written",
            hint="rename or remove that entry, then install again",
        )
    elif {k: current.get(k) for k in server} != server:
        current.update(server)  # keeps env and other keys the user added
        did.append(f"updated the MCP server {SERVER!r}")
    if servers:
        data["mcpServers"] = servers
    else:
        data.pop("mcpServers", None)
    return Change(path, before, _json_text(data, before, remove) if did else before, did)


def _toml_server(path: Path, server: dict[str, Any], remove: bool) -> Change:
    try:
        import tomlkit
        from tomlkit.exceptions import ParseError
    except ImportError:  # pragma: no cover - a dependency of memcli
        raise MemcliError(
            "editing Codex's config.toml needs tomlkit (it keeps comments)",
            hint="pip install tomlkit",
        ) from None
    before = _read_text(path)
    try:
        doc = tomlkit.parse(before or "")
    except ParseError as exc:
        raise MemcliError(
            f"{path}: not valid TOML ({exc}); nothing was written",
            hint="fix the file (or move it away), then install again",
        ) from None
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise _shape_error(path, "mcp_servers is not a table")
    did = []
    current = servers.get(SERVER) if servers is not None else None
    if remove:
        if servers is not None and _is_our_server(_plain(current)):
            del servers[SERVER]
            did.append(f"removed [mcp_servers.{SERVER}]")
            if not servers:
                del doc["mcp_servers"]
    elif current is None:
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        table = tomlkit.table()
        table["command"] = server["command"]
        table["args"] = server["args"]
        servers[SERVER] = table
        did.append(f"added [mcp_servers.{SERVER}]")
    elif not _is_our_server(_plain(current)):
        raise MemcliError(
            f"{path}: [mcp_servers.{SERVER}] is there already and does not run `memcli mcp`; "
            "nothing was written",
            hint="rename or remove that table, then install again",
        )
    elif {k: _plain(current.get(k)) for k in server} != server:
        current["command"] = server["command"]
        current["args"] = server["args"]
        did.append(f"updated [mcp_servers.{SERVER}]")
    after = tomlkit.dumps(doc)
    if before is None and not after.strip():
        after = None
    return Change(path, before, after if did else before, did)


def _plain(value: object) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


# ------------------------------------------------------------------ files


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise MemcliError(f"{path}: not UTF-8 text; nothing was written") from None
    except OSError as exc:
        raise MemcliError(f"{path}: cannot be read ({exc.strerror})") from None


def _read_json(path: Path) -> tuple[str | None, dict[str, Any]]:
    before = _read_text(path)
    if before is None or not before.strip():
        return before, {}
    try:
        data = json.loads(before)
    except json.JSONDecodeError as exc:
        raise MemcliError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); nothing was written",
            hint="fix the file (or move it away), then install again",
        ) from None
    if not isinstance(data, dict):
        raise _shape_error(path, "the file is not a JSON object")
    return before, data


def _json_text(data: dict[str, Any], before: str | None, remove: bool) -> str | None:
    if remove and not data and before is not None:
        return None  # nothing left: the file held only what install wrote
    return json.dumps(data, indent=_indent(before), ensure_ascii=False) + "\n"


def _indent(text: str | None) -> int | str:
    """The indentation the file uses (2 by default)."""
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _shape_error(path: Path, what: str) -> MemcliError:
    return MemcliError(
        f"{path}: {what}; nothing was written", hint="fix the file, then install again"
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.memcli-{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)
