"""The `memcli` entry point. Before importing the Typer app (≈100 ms) it asks a running
`memcli watch` daemon to answer `search`, `inject` and `get`; when none answers (no
daemon, stale socket, crashed daemon) it runs the command in-process as usual.

The served path: memcli.surfaces.cli.argv reads the command line into a request
(memcli.core.requests' wire form), this process reads what only it can read (its
stdin, a context or transcript file), memcli.surfaces.daemon.client sends the request,
and memcli.surfaces.cli.served prints the answer with the code the in-process run uses.
Builtin modules only up to the hand-off (Rich only on a terminal).

Only `python -m memcli` and the console script import this module: it sits on top of
the CLI (quick path, Typer app), the hooks and the daemon client, none of which import
it back.
"""

from __future__ import annotations

import os
import sys

from memcli.surfaces.cli.argv import hook_call, parse_argv, served_call

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

#: validate.MAX_INPUT_BYTES: more is refused in-process
_STDIN_LIMIT = 16 << 20


def try_daemon(argv: list[str], timeout: float = 120.0) -> int | None:
    """Exit code after the daemon answered, or None to run in-process.

    The daemon answers only for the workspace resolved here (flag, MEMCLI_WORKSPACE,
    directory) and only when its settings environment equals ours. Whatever this
    process cannot prepare as the in-process run would (an unreadable file, stdin that
    is not UTF-8 text) is left to the in-process run, which reports it.
    """
    if os.environ.get("MEMCLI_NO_DAEMON"):
        return None
    parsed = parse_argv(argv)
    if parsed is None:
        return None
    workspace_flag, command, rest = parsed
    call = served_call(command, rest)
    if call is None:
        return None
    kind, fields, view = call
    from memcli.surfaces.daemon import protocol

    files = [fields[k] for k in ("context_file", "messages") if k in fields]
    cwd = os.getcwd()
    if any(protocol.plain_file_problem(f, cwd) for f in files):
        return None  # /dev/stdin, a pipe, a terminal: only this process can read it
    if workspace_flag:  # the common agent case; skips importing the resolution rules
        root = os.path.realpath(os.path.expanduser(workspace_flag))
    else:
        from memcli.store.workspace import resolve_workspace

        try:
            root = str(resolve_workspace(None))
        except Exception:  # noqa: BLE001 - the in-process path reports workspace errors
            return None
    read: list[bytes] = []

    def request() -> dict[str, Any] | None:  # read stdin only once a daemon of ours listens
        try:
            return {"kind": kind, **_request_fields(kind, fields, read)}
        except Exception:  # noqa: BLE001 - the in-process run reports it its own way
            return None

    from memcli.surfaces.daemon.client import ask

    answer = ask(root, request, timeout)
    if answer is None:
        if read:  # already read: hand it to the in-process run
            sys.stdin = _Replay(read[0])
        return None
    from memcli.surfaces.cli import served

    try:
        return served.show(answer, view, command)
    except (BrokenPipeError, KeyboardInterrupt) as exc:  # the reader went away, or Ctrl-C
        from memcli.surfaces.guard import outcome

        return int(outcome(exc)[0])  # type: ignore[index]


def _request_fields(kind: str, fields: dict[str, Any], read: list[bytes]) -> dict[str, Any]:
    """The request's fields with what only this process can read filled in: the query
    or context from stdin (`-`), the context from --context-file or --messages (as the
    in-process run reads them; any problem: an exception, and the in-process run)."""
    values = dict(fields)
    if kind == "SearchQuery" and values["query"] == "-":
        values["query"] = _stdin(read)
    elif kind == "InjectRequest":
        sources = {k: values.pop(k, None) for k in ("query", "context_file", "messages")}
        if values.pop("stdin", False):
            values["context"] = _stdin(read)  # kept, to replay for an in-process run
        elif any(v is not None for v in sources.values()):
            from memcli.surfaces.cli.served import read_context

            values["context"] = read_context(False, **sources)
    return values


def _stdin(read: list[bytes]) -> str:
    """All of stdin as text, as validate.read_stdin reads it; ValueError for what it
    would refuse (too big, not UTF-8, a NUL byte)."""
    buffer = getattr(sys.stdin, "buffer", None)
    read.append(buffer.read(_STDIN_LIMIT + 1) if buffer is not None else sys.stdin.read().encode())
    if len(read[0]) > _STDIN_LIMIT:
        raise ValueError("stdin above the input limit")
    text = read[0].decode("utf-8")  # invalid UTF-8: ValueError, run in-process,
    if "\x00" in text:  # where the error names the byte; a NUL likewise
        raise ValueError("NUL in stdin")
    return text.removeprefix("\ufeff")


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

    try:
        app(prog_name="memcli")
    except SystemExit as exc:
        leave(exc)
        raise


def leave(exc: SystemExit) -> None:
    """End a command that loaded torch (the model's one-time preparation, an indexing)
    without the interpreter's teardown of it, 4-6 s of silence after the last line: the
    exit handlers run, the output is flushed, then the process ends. Returns (the caller
    exits as usual) when torch was not loaded, another thread is still at work, or the
    exit code is not a number."""
    import threading

    code = exc.code
    if "torch" not in sys.modules or not (code is None or isinstance(code, int)):
        return
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon for t in threading.enumerate()):
        return
    import atexit
    import contextlib

    atexit._run_exitfuncs()
    with contextlib.suppress(OSError):  # a reader that went away: as at a normal exit
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    main()
