"""The daemon side of the fast path: while `memcli watch` runs, it answers `search`,
`inject` and `get` from other memcli processes over a Unix socket in `.memcli/`.

A request carries the client's argv, cwd, stdin and terminal shape; the daemon runs the
very same CLI code on them with its warm Memory and returns exit code, stdout and stderr,
so output is identical to running in-process. Only requests for this workspace, from
processes of our uid whose settings environment equals ours, are served; the socket is
created user-only (0600), in `.memcli/` or in a per-user directory checked to be ours
alone (mode 0700, not a symlink). The daemon never reads its own stdin: a request's
stdin is the client's, and file options must name regular files outside /dev and /proc.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.surfaces.cli.fastpath import parse_argv
from memcli.surfaces.daemon.protocol import (
    ensure_private_dir,
    file_arguments,
    frame,
    peer_uid,
    plain_file_problem,
    read_line,
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
                request = json.loads(data.decode("utf-8"))
                if not isinstance(request, dict):
                    raise ValueError("request must be an object")
                self.requests += 1
                response = self.handler(request)
            except Exception as exc:  # noqa: BLE001 - a bad request must not kill the daemon
                request, response = {}, {"error": f"{type(exc).__name__}: {exc}"}
            if request.get("frame") is True and isinstance(response.get("code"), int):
                payload = frame(response["code"], response["stdout"], response["stderr"])
            else:
                payload = json.dumps(response).encode("utf-8") + b"\n"
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


class CliRunnerHandler:
    """Runs client requests through the real Typer app, one at a time."""

    def __init__(self, root: Path, status: Callable[[], dict[str, Any]]) -> None:
        self.root = root.resolve()
        self.status = status
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "status":
            return {"status": self.status()}
        argv = request.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            return {"error": "argv must be a list of strings"}
        workspace = request.get("workspace")
        if not workspace or Path(workspace).resolve() != self.root:
            return {"error": "this daemon serves another workspace"}
        parsed = parse_argv(argv)
        if parsed is None:
            return {"error": "this command is not served by the daemon"}
        flag, command, rest = parsed
        cwd = request.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            return {"error": "cwd must be an absolute path"}
        if flag and (Path(cwd) / Path(flag).expanduser()).resolve() != self.root:
            return {"error": "this daemon serves another workspace"}
        if request.get("env") != settings_env(os.environ):
            return {"error": "the client's settings environment differs from the daemon's"}
        files = file_arguments(rest)
        problems = [p for p in (plain_file_problem(f, cwd) for f in files or []) if p]
        if problems:
            return {"error": f"not read by the daemon: {problems[0]}"}
        stdin = request.get("stdin")
        if stdin is not None and not isinstance(stdin, str):
            return {"error": "stdin must be a string"}
        # the workspace the client resolved (its flag, MEMCLI_WORKSPACE or directory), never
        # the one this process would find from the client's directory
        argv = ["-w", str(self.root), command, *rest]
        with self._lock:
            return run_cli(argv, request)


def run_cli(argv: list[str], request: dict[str, Any]) -> dict[str, Any]:
    """Run the CLI in this process with the client's cwd, stdin and terminal."""
    from rich.console import Console

    from memcli.surfaces.cli import render

    out, err = io.StringIO(), io.StringIO()
    tty = bool(request.get("tty"))
    width = int(request.get("width") or 80)
    saved = (render._out, render._err, sys.stdin, os.getcwd())
    render._out = Console(
        file=out, force_terminal=tty, width=width, highlight=False, soft_wrap=True
    )
    render._err = Console(file=err, force_terminal=False, highlight=False, soft_wrap=True)
    sys.stdin = io.StringIO(request.get("stdin") or "")
    code = 0
    try:
        os.chdir(request.get("cwd") or saved[3])
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                returned = _command().main(args=argv, standalone_mode=False, prog_name="memcli")
                code = returned if isinstance(returned, int) else 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except Exception as exc:  # noqa: BLE001 - same as the in-process CLI's click handling
                code = _click_exit_code(exc, err)
    finally:
        render._out, render._err, sys.stdin = saved[0], saved[1], saved[2]
        os.chdir(saved[3])
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


@functools.lru_cache(maxsize=1)
def _command():  # noqa: ANN202 - the Click command Typer builds (costly to rebuild per request)
    import typer.main

    from memcli.surfaces.cli import app as cli

    return typer.main.get_command(cli.app)


def _click_exit_code(exc: Exception, err: io.StringIO) -> int:
    exit_code = getattr(exc, "exit_code", None)
    show = getattr(exc, "show", None)
    if callable(show):
        show(file=err)
    if isinstance(exit_code, int):
        return exit_code
    raise exc
