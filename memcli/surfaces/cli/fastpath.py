"""The `memcli` entry point. It reads the command line once into the command's
environment (memcli.surfaces.cli.env.Env) and, before importing the Typer app
(≈100 ms), answers what it can without it: the hooks, and `search`, `inject` and `get`
through a running `memcli watch` daemon; when none answers (no daemon, stale socket,
crashed daemon) they run in-process without Typer (memcli.surfaces.cli.quick),
anything else through the Typer app, with the same Env.

The served path: memcli.surfaces.cli.env reads the command's arguments into a request
(memcli.core.requests' wire form), this process reads what only it can read (its
stdin, a context or transcript file), memcli.surfaces.protocol sends the request,
and the answer is printed by the code the in-process run uses (memcli.surfaces.cli.served):
in the daemon for a client whose stdout and stderr are not terminals (this process then
writes the text it got), else here.
Builtin modules only up to the hand-off (Rich only on a terminal).

Only `python -m memcli`, the console script and the tests' CLI helper import this
module: it sits on top of the CLI (quick path, Typer app), the hooks and the daemon
client, none of which import it back.
"""

from __future__ import annotations

import os
import sys

from memcli.surfaces.cli.env import Env, plain_stream, read_context, served_call

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

#: validate.MAX_INPUT_BYTES: more is refused in-process
_STDIN_LIMIT = 16 << 20
#: seconds to wait for the daemon's answer
TIMEOUT = 120.0


def try_daemon(
    env: Env | list[str],
    timeout: float = TIMEOUT,
    call: tuple[str, dict[str, Any], dict[str, bool]] | None = None,
) -> int | None:
    """Exit code after the daemon answered the command (its Env, or its arguments),
    or None to run in-process. `call`: env.served_call of the command, when read.

    The daemon answers only for the workspace resolved here (flag, MEMCLI_WORKSPACE,
    directory) and only when its settings environment equals ours. Whatever this
    process cannot prepare as the in-process run would (an unreadable file, stdin that
    is not UTF-8 text) is left to the in-process run, which reports it.
    """
    env = Env(env) if isinstance(env, list) else env
    if env.environ.get("MEMCLI_NO_DAEMON"):
        return None
    call = served_call(env) if call is None else call
    if call is None:
        return None
    kind, fields, view = call
    from memcli.surfaces import protocol

    files = [fields[k] for k in ("context_file", "messages") if k in fields]
    cwd = os.getcwd()
    if any(protocol.plain_file_problem(f, cwd) for f in files):
        return None  # /dev/stdin, a pipe, a terminal: only this process can read it
    try:
        root = env.root_name()  # the command's one resolution, kept for the in-process run
    except Exception:  # noqa: BLE001 - the in-process path reports workspace errors
        return None
    read: list[bytes] = []

    def request() -> dict[str, Any] | None:  # read stdin only once a daemon of ours listens
        try:
            return {"kind": kind, **_request_fields(kind, fields, read)}
        except Exception:  # noqa: BLE001 - the in-process run reports it its own way
            return None

    from memcli.surfaces.protocol import ask

    plain = plain_stream(env.stdout) and plain_stream(env.stderr)
    answer = ask(root, request, timeout, {**view, "command": env.name} if plain else None)
    if answer is not None and "out" in answer and not _printed(answer):
        answer = None  # a printed answer of another form: the in-process run answers
    if answer is None:
        if read:  # already read: hand it to the in-process run
            sys.stdin = _Replay(read[0])
        return None
    try:
        if "out" in answer:  # printed by the daemon (served.printed)
            env.stderr.write(answer["err"])
            env.stdout.write(answer["out"])
            return int(answer["exit"])
        from memcli.surfaces.cli import served

        return served.show(answer, view, env)
    except (BrokenPipeError, KeyboardInterrupt) as exc:  # the reader went away, or Ctrl-C
        from memcli.surfaces.guard import outcome

        return int(outcome(exc)[0])  # type: ignore[index]


def _printed(answer: dict[str, Any]) -> bool:
    """Whether a printed answer (served.printed) has its form: two texts and a code."""
    texts = isinstance(answer.get("out"), str) and isinstance(answer.get("err"), str)
    return texts and type(answer.get("exit")) is int


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


def answered(env: Env) -> int | None:
    """Exit code of the command when answered without the Typer app (a hook, a
    served command the daemon answered, a read in-process), else None."""
    if env.command == "hook" and env.plain and "--help" not in env.rest:
        from memcli.surfaces import hooks  # agent hosts' hooks: never blocking
        from memcli.surfaces.blas import one_thread_for

        one_thread_for(env.command)  # before numpy loads, if the hook reads in-process
        return hooks.run(env.workspace, env.rest)
    if env.command == "mcp" and not env.rest:  # stdio: answers `initialize` at once
        from memcli.surfaces import mcp_stdio

        return mcp_stdio.run_here(env.workspace)
    call = served_call(env)
    if call is None:
        return None
    code = try_daemon(env, call=call)
    if code is None:
        from memcli.surfaces.blas import one_thread_for
        from memcli.surfaces.cli import quick  # a read without a daemon: skips Typer

        one_thread_for(env.command)  # before numpy loads
        code = quick.run(env, call)
    return code


def typer_main(env: Env) -> int:
    """Exit code of the command run by the Typer app, with this Env."""
    from typer.main import get_command

    from memcli.surfaces.cli.app import app

    group = get_command(app)
    return int(group.main(env.argv, prog_name="memcli", standalone_mode=False, obj=env) or 0)


def run(argv: list[str], env: Env | None = None) -> int:
    """Exit code of `memcli ARGV` run in this process (the console script's work, which
    then leaves the process)."""
    env = Env(argv) if env is None else env
    code = answered(env)
    return typer_main(env) if code is None else code


PROMPT = ["user-prompt-submit"]


def main() -> None:
    import gc

    env = Env(sys.argv[1:])
    if env.command not in ("hook", "mcp") or env.rest[:1] in (["session-start"], PROMPT):
        # a served command or an in-process read (a prompt hook's too: ≈ 45 ms of
        # collections at 10k entries) answers once and ends: its few cycles die with it,
        # while one collection of the start-up's objects costs ≈ 0.7 ms (the first full
        # collection falls during a served command's imports); the hooks that extract
        # may run for long
        gc.disable()
    code = answered(env)
    if code is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # skip interpreter teardown: nothing else to clean up
    gc.enable()  # the Typer app may run for long (watch, mcp, index)
    leave(typer_main(env))


def leave(code: int) -> None:
    """Exit with `code`. A command that loaded torch (the model's one-time preparation,
    an indexing) ends without the interpreter's teardown of it, seconds of silence after
    its last line: the exit handlers run, the output is flushed, the process ends. The
    usual exit when torch was not loaded or another thread is still at work."""
    import threading

    main_thread = threading.main_thread()
    if "torch" not in sys.modules or any(
        t is not main_thread and not t.daemon for t in threading.enumerate()
    ):
        sys.exit(code)
    import atexit
    import contextlib

    atexit._run_exitfuncs()
    with contextlib.suppress(OSError):  # a reader that went away: as at a normal exit
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
