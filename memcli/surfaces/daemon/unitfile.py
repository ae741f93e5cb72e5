"""`memcli watch --install-service`: a systemd user unit (Linux) or a launchd agent
(macOS) that keeps `memcli watch` running for one workspace, started at login and
restarted when it fails. Writes one file; says the command that starts it.

The workspace's path goes into the file as data, never as syntax: systemd's specifiers
(`%`) and variables (`$`) are escaped, XML is escaped for launchd, and a path holding a
newline or another control character (which would start a new directive) is refused.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from xml.sax.saxutils import escape

from memcli.core.errors import ValidationError


def service_name(root: Path) -> str:
    """A name per workspace: the folder's name and a short hash of its path."""
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:8]
    stem = "".join(c if c.isalnum() else "-" for c in root.name).strip("-") or "workspace"
    return f"memcli-watch-{stem}-{digest}"


def service_file(root: Path, kind: str, env: dict[str, str] | None = None) -> tuple[Path, str]:
    """(where the file goes, its content) for kind "systemd" or "launchd"."""
    env = dict(os.environ) if env is None else env
    name = service_name(root)
    command = [sys.executable, "-m", "memcli", "-w", str(root), "watch"]
    for part in command:
        _refuse_control_characters(part)
    if kind == "systemd":
        base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
        path = Path(base) / "systemd" / "user" / f"{name}.service"
        exec_start = " ".join(_systemd_quote(part) for part in command)
        text = (
            "[Unit]\n"
            f"Description=memcli watch for {_no_specifiers(str(root))}\n\n"
            "[Service]\n"
            f"ExecStart={exec_start}\n"
            "Environment=HF_HUB_OFFLINE=1\n"
            "Restart=on-failure\n"
            "RestartSec=5\n\n"
            "[Install]\n"
            "WantedBy=default.target\n"
        )
        return path, text
    if kind == "launchd":
        label = "io.memcli." + name
        path = Path(env.get("HOME", "~")) / "Library" / "LaunchAgents" / f"{label}.plist"
        args = "".join(f"    <string>{escape(part)}</string>\n" for part in command)
        log = escape(str(root / ".memcli" / "watch.log"))
        text = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
            '<plist version="1.0">\n<dict>\n'
            f"  <key>Label</key>\n  <string>{escape(label)}</string>\n"
            f"  <key>ProgramArguments</key>\n  <array>\n{args}  </array>\n"
            "  <key>EnvironmentVariables</key>\n"
            "  <dict>\n    <key>HF_HUB_OFFLINE</key>\n    <string>1</string>\n  </dict>\n"
            "  <key>RunAtLoad</key>\n  <true/>\n"
            "  <key>KeepAlive</key>\n"
            "  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>\n"
            f"  <key>StandardOutPath</key>\n  <string>{log}</string>\n"
            f"  <key>StandardErrorPath</key>\n  <string>{log}</string>\n"
            "</dict>\n</plist>\n"
        )
        return path, text
    raise ValueError(f"unknown service kind {kind!r}")


def start_command(path: Path, kind: str) -> str:
    """What to run to start (and enable) the installed service."""
    if kind == "systemd":
        return f"systemctl --user daemon-reload && systemctl --user enable --now {path.name}"
    return f"launchctl load -w {path}"


def stop_command(path: Path, kind: str) -> str:
    if kind == "systemd":
        return f"systemctl --user disable --now {path.name}"
    return f"launchctl unload -w {path}"


def platform_kind() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


def _refuse_control_characters(part: str) -> None:
    bad = next((c for c in part if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise ValidationError(
            f"{part!r}: a path with a control character ({bad!r}) cannot be written into a "
            "service file safely (a newline would start a directive of its own)",
            hint="move the workspace to a path without newlines or control characters",
        )


def _no_specifiers(text: str) -> str:
    """`text` as systemd reads it literally: `%` starts a specifier (`%h`, `%n`)."""
    return text.replace("%", "%%")


def _systemd_quote(part: str) -> str:
    """One word of ExecStart, read back by systemd as exactly `part`: quoted with C
    escapes, `%` specifiers and `$` variables escaped."""
    if not (part and all(c.isalnum() or c in "/._-=:+," for c in part)):
        part = '"' + part.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return _no_specifiers(part).replace("$", "$$")
