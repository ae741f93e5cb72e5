"""How far each session's transcript has been extracted, so that `memcli hook pre-compact`
and `memcli hook stop` never extract the same part of a transcript twice.

`.memcli/hooks.json` holds, per session id, the transcript's path, the byte offset
reached and the number of the line there (`{"sessions": {id: {"transcript", "offset",
"line", "t"}}}`, so that a line skipped later is named by its number); the last MAX_SESSIONS
sessions are kept). A lock on `.memcli/hooks.lock` makes read, extract and record one
step: a PreCompact and a Stop of one session must not both read the same new lines. The
file is derived state: a damaged one is started afresh (parts may be read again; extract
NOOPs what it already holds).

Builtin modules only, as memcli.surfaces.hooks.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

STATE_FILE = "hooks.json"
LOCK_FILE = "hooks.lock"
MAX_SESSIONS = 500


class Positions:
    """The offsets of one workspace, read and written under its lock:

        with Positions(root) as positions:
            offset = positions.offset(session, path)
            ...
            positions.record(session, path, new_offset)
    """

    def __init__(self, root: str) -> None:
        from memcli.store.links import check_state, follow

        self.dir = os.fspath(check_state(root, follow(root, ".memcli", folder=True)))
        self.path = os.path.join(self.dir, STATE_FILE)
        self.state: dict[str, Any] = {"sessions": {}}
        self._lock = _Locked(os.path.join(self.dir, LOCK_FILE))

    def __enter__(self) -> Positions:
        os.makedirs(self.dir, exist_ok=True)
        self._lock.__enter__()
        self.state = load(self.path)
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__()

    def offset(self, session: str, transcript: str) -> int:
        """Where extraction of this session's transcript goes on (0: from the start, also
        when the session's transcript moved)."""
        seen = self.state["sessions"].get(session) or {}
        offset = seen.get("offset", 0) if seen.get("transcript") == transcript else 0
        return offset if isinstance(offset, int) and offset >= 0 else 0

    def line(self, session: str, transcript: str) -> int | None:
        """The number of the line at `offset()` (None: not recorded, an older file)."""
        if self.offset(session, transcript) == 0:
            return 1
        line = (self.state["sessions"].get(session) or {}).get("line")
        return line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None

    def record(self, session: str, transcript: str, offset: int, line: int | None = None) -> None:
        """Keep `offset` (line number `line`) as reached (written at once, atomically)."""
        sessions = self.state["sessions"]
        sessions[session] = {"transcript": transcript, "offset": offset, "t": time.time()}
        if line is not None:
            sessions[session]["line"] = line
        if len(sessions) > MAX_SESSIONS:
            oldest = sorted(sessions, key=lambda k: sessions[k].get("t", 0))
            for key in oldest[: len(sessions) - MAX_SESSIONS]:
                del sessions[key]
        import json

        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(self.state, handle, indent=1)
        os.replace(tmp, self.path)


def load(path: str) -> dict[str, Any]:
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        state = {}  # absent or damaged: parts may be read again (extract NOOPs them)
    if not isinstance(state, dict) or not isinstance(state.get("sessions"), dict):
        state = {"sessions": {}}
    state["sessions"] = {k: v for k, v in state["sessions"].items() if isinstance(v, dict)}
    return state


class _Locked:
    """An exclusive lock on a file (fcntl; the filelock package where there is none)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = -1
        self._filelock: Any = None

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except ImportError:  # no fcntl (Windows)
            from filelock import FileLock

            os.close(self.fd)
            self.fd = -1
            self._filelock = FileLock(self.path + "x")
            self._filelock.acquire()

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing releases the flock
            self.fd = -1
        elif self._filelock is not None:
            self._filelock.release()
