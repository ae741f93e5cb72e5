"""The daemon side of the fast path: while `memcli watch` runs, it answers `search`,
`inject` and `get` from other memcli processes over a Unix socket in `.memcli/`.

A request is one JSON line: a memcli.core.requests object in its wire form, the
workspace the client resolved and the client's settings environment. The daemon calls
the library with it (memcli.surfaces.cli.served.answer, the code the in-process CLI
runs) on its warm Memory and answers with the result data, or with the error's message
and exit code (memcli.surfaces.guard); the client prints it, or, when it says how it
prints (a client whose streams are not terminals), the daemon prints it into the answer
and the client writes that text. Only requests for this
workspace, from processes of our uid whose settings environment equals ours, are
served; the socket is created user-only (0600), in `.memcli/` or in a per-user
directory checked to be ours alone (mode 0700, not a symlink). The daemon never reads
its own stdin, nor any file a client names: a request carries text.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.surfaces.protocol import (
    dumps_wire,
    ensure_private_dir,
    loads,
    peer_uid,
    read_line,
    same_dir,
    settings_env,
    socket_path,
)


class DaemonServer:
    """A threaded Unix-socket server; `handler(request) -> response dict`."""

    def __init__(
        self,
        root: Path,
        handler: Callable[[dict[str, Any]], dict[str, Any]],
        after_reply: Callable[[], None] | None = None,
        detach_stdin: bool = True,
    ) -> None:
        self.root = root
        self.detach_stdin = detach_stdin  # tests serving in-process keep their stdin
        self.path = socket_path(root)
        self.handler = handler
        self.after_reply = after_reply  # work the client need not wait for
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.started = time.time()
        self.requests = 0

    def start(self) -> None:
        """Listen; RuntimeError when another daemon serves the workspace or the socket's
        directory is not ours alone."""
        if self.path.parent == self.root / ".memcli":
            from memcli.store.links import follow

            follow(self.root, ".memcli", folder=True)  # a link out: refused, none made
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        else:  # the per-user fallback in /tmp, where anyone could have made the name first
            try:
                ensure_private_dir(str(self.path.parent))
            except PermissionError as exc:
                raise RuntimeError(str(exc)) from None
        if self.detach_stdin:
            _detach_stdin()
        if self.path.exists():
            if _answers(self.path):
                raise RuntimeError(f"another memcli watch already serves {self.root}")
            with contextlib.suppress(OSError):
                self.path.unlink()  # stale socket of a crashed daemon
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o077)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        sock.listen(16)
        sock.settimeout(0.2)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="memcli-daemon", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            try:
                if not _same_user(conn):
                    raise PermissionError("the client runs as another user")
                data = read_line(conn)
                request = loads(data.decode("utf-8"))
                if not isinstance(request, dict):
                    raise ValueError("request must be an object")
                self.requests += 1
                response = self.handler(request)
            except Exception as exc:  # noqa: BLE001 - a bad request must not kill the daemon
                response = {"refused": f"{type(exc).__name__}: {exc}"}
            payload = dumps_wire(response).encode("ascii") + b"\n"
            with contextlib.suppress(OSError):
                conn.sendall(payload)
        if self.after_reply is not None:
            self.after_reply()

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with contextlib.suppress(OSError):
            self.path.unlink()


class Lease:
    """One watcher per workspace, whatever path reaches it: an exclusive lock (flock) on
    `.memcli/locks/watch.lock`, held while the watcher lives. A symlink, a bind mount or
    any other name of the workspace leads to the same file, so to the same lock (the
    socket's name alone depends on the path). The file holds the holder's pid."""

    def __init__(self, root: Path) -> None:
        from memcli.store.links import check_state, follow

        # a link memcli does not follow (.memcli, or one in it): LinkRefused, none made
        self.path = check_state(root, follow(root, ".memcli", folder=True)) / "locks" / "watch.lock"
        self._handle: Any = None

    def acquire(self) -> None:
        """Take the lease; RuntimeError naming the holder when another watcher has it."""
        try:
            import fcntl
        except ImportError:  # Windows: the socket check alone
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read(20).strip() or "?"
            handle.close()
            raise RuntimeError(
                f"another memcli watch (pid {holder}) already serves this workspace "
                f"({self.path.parent.parent}, perhaps reached by another path)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.truncate(0)
            self._handle.close()  # closing the last descriptor drops the flock
            self._handle = None


def _same_user(conn: socket.socket) -> bool:
    """The peer's uid (SO_PEERCRED) is ours; True where the OS cannot tell (the socket
    file is 0600 then, in a directory only we may enter)."""
    uid = peer_uid(conn)
    return uid is None or uid == os.getuid()


def _detach_stdin() -> None:
    """Point this process's stdin at /dev/null: no request can make the daemon wait on
    the terminal or pipe it was started from (`--messages /dev/stdin`)."""
    try:
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return
    try:
        os.dup2(null, 0)
    except OSError:
        pass
    finally:
        os.close(null)
    sys.stdin = io.StringIO("")


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


class RequestHandler:
    """Answers client requests with result data, one at a time; a request it will not
    serve gets `{"refused": why}` (the client then runs the command in-process)."""

    def __init__(
        self,
        root: Path,
        status: Callable[[], dict[str, Any]],
        memory: Callable[[], Any] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.status = status
        self.memory = memory or self._shared_memory
        self._lock = threading.Lock()
        #: the settings environment a client must have: the daemon's own, read once (a
        #: process's environment is its own to change, and memcli never changes these)
        self.settings_env = settings_env(os.environ)

    def _shared_memory(self) -> Any:
        from memcli.services.memory import shared_memory
        from memcli.store.workspace import Resolved

        return shared_memory(Resolved(self.root))

    def __call__(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("op") == "status":
            return {"status": self.status()}
        from memcli.core.requests import GetRequest, InjectRequest, SearchQuery, from_wire

        workspace = message.get("workspace")
        if not (isinstance(workspace, str) and workspace and same_dir(workspace, str(self.root))):
            return {"refused": "this daemon serves another workspace"}
        if message.get("env") != self.settings_env:
            return {"refused": "the client's settings environment differs from the daemon's"}
        wire = message.get("request")
        if not isinstance(wire, dict):
            return {"refused": "no request"}
        try:
            request = from_wire(wire)
        except ValueError as exc:
            return {"refused": str(exc)}
        if not isinstance(request, SearchQuery | InjectRequest | GetRequest):
            return {"refused": "this command is not served by the daemon"}
        view = message.get("view")
        with self._lock:
            data = answer(self.memory(), request)
        return printed(data, view)


def printed(data: dict[str, Any], view: object) -> dict[str, Any]:
    """The answer `data` printed for the client (memcli.surfaces.cli.served.printed)
    when it sent how it prints (`view`: the view options and its command), else as is."""
    from memcli.surfaces.cli import served
    from memcli.surfaces.cli.env import SERVED

    if not (
        isinstance(view, dict)
        and view.get("command") in SERVED
        and all(isinstance(view.get(k, False), bool) for k in served.VIEW_OPTIONS)
    ):
        return data
    return served.printed(data, view)


def answer(mem: Any, request: Any) -> dict[str, Any]:
    """The result data of `request`, or the error as the client prints it
    (memcli.surfaces.guard.describe: message, exit code, the --json error); an error
    the guard does not know propagates (the client then runs the command in-process,
    where it shows)."""
    from memcli.surfaces import guard
    from memcli.surfaces.cli import served

    notices = io.StringIO()  # Memory's notices (a context cut short) go to the client
    try:
        with contextlib.redirect_stderr(notices):
            data = served.answer(mem, request)
    except Exception as exc:
        report = guard.describe(exc)
        if report is None:
            raise
        data = report
    if notices.getvalue():
        data["notices"] = notices.getvalue()
    return data
