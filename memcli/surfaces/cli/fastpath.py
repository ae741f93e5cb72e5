"""The `memcli` entry point. Before importing the Typer app (≈100 ms) it asks a running
`memcli watch` daemon to answer `search`, `inject` and `get`; when none answers (no
daemon, stale socket, crashed daemon) it runs the command in-process as usual.

Builtin modules only up to the hand-off (`_socket` rather than socket, which pulls in
enum and selectors; `_json`'s string encoder rather than json, which pulls in re; a
framed answer that needs no decoder), so a served command costs one Python start-up and
a socket round trip.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

SERVED = ("search", "inject", "get")


def split_global(argv: list[str]) -> tuple[str | None, int] | None:
    """(workspace flag, index of the command) when the only global option is
    --workspace/-w, else None (--traceback, --help, anything unusual: Typer's job)."""
    workspace = None
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg in ("-w", "--workspace") and i + 1 < len(argv):
            workspace = argv[i + 1]
            i += 2
        elif arg.startswith("--workspace="):
            workspace = arg.split("=", 1)[1]
            i += 1
        else:
            return None
    return workspace, i


def parse_argv(argv: list[str]) -> tuple[str | None, str, list[str]] | None:
    """(workspace flag, command, rest) for a daemon-servable call, else None."""
    split = split_global(argv)
    if split is None:
        return None
    workspace, i = split
    if i >= len(argv) or argv[i] not in SERVED:
        return None
    rest = argv[i + 1 :]
    if "--help" in rest:
        return None
    return workspace, argv[i], rest


def hook_call(argv: list[str]) -> tuple[str | None, list[str]] | None:
    """(workspace flag, arguments) of `memcli [-w W] hook ARGS`, else None."""
    split = split_global(argv)
    if split is None:
        return None
    workspace, i = split
    if i >= len(argv) or argv[i] != "hook" or "--help" in argv[i + 1 :]:
        return None
    return workspace, argv[i + 1 :]


def try_daemon(argv: list[str], timeout: float = 120.0) -> int | None:
    """Exit code after the daemon answered, or None to run in-process.

    Nothing is sent unless the socket lies in a directory that is ours alone and the
    process listening on it runs as our uid (the request carries the query and stdin).
    The daemon answers only for the workspace resolved here (flag, MEMCLI_WORKSPACE,
    directory) and only when its settings environment equals ours.
    """
    if os.environ.get("MEMCLI_NO_DAEMON"):
        return None
    parsed = parse_argv(argv)
    if parsed is None:
        return None
    workspace_flag, _command, rest = parsed
    from memcli.surfaces.daemon import protocol

    files = protocol.file_arguments(rest)
    cwd = os.getcwd()
    if files is None or any(protocol.plain_file_problem(f, cwd) for f in files):
        return None  # /dev/stdin, a pipe, a terminal: only this process can read it
    if workspace_flag:  # the common agent case; skips importing the resolution rules
        root = os.path.realpath(os.path.expanduser(workspace_flag))
    else:
        from memcli.store.workspace import resolve_workspace

        try:
            root = resolve_workspace(None)
        except Exception:  # noqa: BLE001 - the in-process path reports workspace errors
            return None
    read: list[bytes] = []

    def stdin() -> str | None:  # read only once a daemon of ours is listening
        if "-" not in rest:
            return None
        buffer = getattr(sys.stdin, "buffer", None)
        limit = (16 << 20) + 1  # validate.MAX_INPUT_BYTES + 1: more is refused in-process
        read.append(buffer.read(limit) if buffer is not None else sys.stdin.read().encode())
        if len(read[0]) >= limit:
            raise ValueError("stdin above the input limit")
        text = read[0].decode("utf-8")  # invalid UTF-8: ValueError, run in-process,
        if "\x00" in text:  # where the error names the byte; a NUL likewise
            raise ValueError("NUL in stdin")
        return text

    response = ask_daemon(str(root), argv, cwd, stdin, timeout)
    if response is None:
        if read:  # already read: hand it to the in-process run
            sys.stdin = _Replay(read[0])
        return None
    code, out, err = response
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


def ask_daemon(
    root: str,
    argv: list[str],
    cwd: str,
    stdin: Callable[[], str | None],
    timeout: float,
) -> tuple[int, str, str] | None:
    """(exit code, stdout, stderr) of `argv` as the watcher of the workspace at `root`
    ran it, or None when no watcher answers (no socket, a stale one, a socket in a
    directory that is not ours alone, a listener of another uid, a timeout). `stdin()`
    gives the request's stdin; it is called only once the listener is known to be ours."""
    from memcli.surfaces.daemon import protocol

    path = protocol.socket_file(root)
    if not os.path.exists(path):
        return None
    directory = os.path.dirname(path)
    if directory != os.path.join(root, ".memcli"):
        problem = protocol.private_dir_problem(directory)
        if problem is not None:
            sys.stderr.write(
                f"warning: not using the memcli watch socket in {directory}: {problem}\n"
            )
            return None
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(min(1.0, timeout))
        sock.connect(path)
        if protocol.peer_uid(sock) != os.getuid():  # who listens, before anything is sent
            return None
        sock.settimeout(timeout)
        sock.sendall(_request_json(argv, root, cwd, stdin()))
        return protocol.unframe(protocol.read_all(sock, limit=1 << 30))
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def _request_json(argv: list[str], root: str, cwd: str, stdin: str | None) -> bytes:
    """The request as one JSON line, written with `_json`'s string encoder (the one
    json.dumps uses) so that json, and re with it, stay unimported."""
    from memcli.surfaces.daemon.protocol import settings_env

    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:  # an interpreter without the C accelerator
        from json.encoder import py_encode_basestring_ascii as quote
    env = settings_env(os.environ)
    fields = [
        '"argv": [' + ", ".join(quote(a) for a in argv) + "]",
        '"workspace": ' + quote(root),
        '"cwd": ' + quote(cwd),
        '"env": {' + ", ".join(f"{quote(k)}: {quote(v)}" for k, v in env.items()) + "}",
        '"stdin": ' + ("null" if stdin is None else quote(stdin)),
        '"tty": ' + ("true" if sys.stdout.isatty() else "false"),
        f'"width": {_terminal_width():d}',
        '"frame": true',
    ]
    return ("{" + ", ".join(fields) + "}\n").encode("ascii")


def _terminal_width() -> int:
    """shutil.get_terminal_size's answer, without importing shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _Replay:
    """stdin already consumed for the daemon, replayed for the in-process run (as
    bytes, so the in-process run checks them exactly as it checks a real stdin)."""

    def __init__(self, data: bytes) -> None:
        import io

        self.buffer = io.BytesIO(data)

    def read(self, *args: int) -> str:
        return self.buffer.read(*args).decode("utf-8", errors="replace")

    def isatty(self) -> bool:
        return False


def main() -> None:
    hook = hook_call(sys.argv[1:])
    if hook is not None:  # agent hosts' hooks: answered without Typer, never blocking
        from memcli.surfaces import hooks

        code = hooks.run(*hook)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    code = try_daemon(sys.argv[1:])
    if code is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # skip interpreter teardown: nothing else to clean up
    from memcli.surfaces.cli import quick

    code = quick.run(sys.argv[1:])  # search without a daemon: skips building Typer
    if code is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    from memcli.surfaces.cli.app import app

    app(prog_name="memcli")


if __name__ == "__main__":
    main()
