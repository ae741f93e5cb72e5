"""The one place where errors become exit codes and messages (httpie's `ExitStatus` idea).

The Typer app, the Typer-free quick path, the daemon (whose client prints what it
answers) and the hooks all ask `outcome`; nothing else decides an exit code for an
error. A UsageError is 2, any other MemcliError 1, text that is not UTF-8 1, Ctrl-C 130,
a closed pipe 0 (the reader went away: nothing to report). `describe` gives the same
error as data: what the --json envelope's `error` holds and the daemon answers.
"""

from __future__ import annotations

from memcli.core.errors import ExitCode, MemcliError, UsageError

NOT_UTF8 = "the input is not valid UTF-8 text ({reason}); nothing was written"


def outcome(exc: BaseException) -> tuple[ExitCode, str | None] | None:
    """(exit code, message to print as an error or None) for an error memcli reports,
    or None for one it does not know (a bug: the caller lets it propagate)."""
    if isinstance(exc, UsageError):  # a bad option value the parser could not see
        return ExitCode.USAGE, str(exc)
    if isinstance(exc, MemcliError):
        return ExitCode.ERROR, str(exc)
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED, None
    if isinstance(exc, BrokenPipeError):
        return ExitCode.OK, None
    if isinstance(exc, UnicodeError):  # text that is not UTF-8 the checks did not catch
        return ExitCode.ERROR, NOT_UTF8.format(reason=getattr(exc, "reason", exc))
    return None


#: the --json envelope's error codes, by the class of memcli.core.errors the error is
#: (an error class elsewhere has its base's code)
CODES = {
    "UsageError": "usage",
    "NotFoundError": "not_found",
    "ParseError": "parse",
    "ValidationError": "invalid",
    "ConflictError": "conflict",
    "ConfigError": "config",
    "WorkspaceError": "workspace",
    "MemcliError": "error",
}


#: what to do next, for an error raised without a hint of its own: every message that
#: says something is wrong also says what to do (by the envelope's code)
NEXT_STEP = {
    "usage": "`memcli COMMAND --help` lists the options",
    "not_found": "`memcli list` shows the ids in use; `memcli history --removed` lists "
    "entries a save removed",
    "parse": "fix that line in your editor (`memcli doctor` lists every problem)",
    "invalid": "check the value named above; `memcli COMMAND --help` says what is allowed",
    "conflict": "the file kept changing: run the command again once the other writer is done",
    "config": "`memcli config list` shows each setting and where it comes from; "
    "`memcli doctor` checks them",
    "workspace": "`memcli init PATH` creates a workspace; -w PATH or MEMCLI_WORKSPACE picks one",
    "error": "`memcli doctor` checks the workspace; --traceback shows where it failed",
    "not_utf8": "save the input as UTF-8 text and run the command again",
}


def describe(exc: BaseException) -> dict[str, object] | None:
    """An error memcli reports as data, or None (as `outcome`): `error` the text printed
    after "error: " (None: nothing to print), `exit` the exit code, and the envelope's
    `code` (CODES, "not_utf8", "interrupted", "broken_pipe"), `message` and `hint`."""
    result = outcome(exc)
    if result is None:
        return None
    exit_code, text = result
    hint = None
    if isinstance(exc, MemcliError):
        code = next(
            CODES[cls.__name__]
            for cls in type(exc).__mro__
            if cls.__module__ == MemcliError.__module__ and cls.__name__ in CODES
        )
        message, hint = exc.message, exc.hint or NEXT_STEP[code]
        if not exc.hint:
            text = f"{message}\n  hint: {hint}"
    elif isinstance(exc, KeyboardInterrupt):
        code, message = "interrupted", "interrupted"
    elif isinstance(exc, BrokenPipeError):
        code, message = "broken_pipe", "the reader went away"
    else:
        code, message, hint = "not_utf8", text or "", NEXT_STEP["not_utf8"]
        text = f"{message}\n  hint: {hint}"
    return {"error": text, "exit": int(exit_code), "code": code, "message": message, "hint": hint}


def shown(exc: BaseException) -> bool:
    """Whether --traceback would show this error's stack (those with a message)."""
    result = outcome(exc)
    return result is not None and result[1] is not None


def one_line(exc: BaseException) -> str:
    """An error as one line for a place that never fails (the hooks): the errors of
    memcli.core.errors say it all; anything else is named by its type."""
    text = str(exc).strip()
    message = text.splitlines()[0] if text else ""
    if type(exc).__module__ == MemcliError.__module__:
        return message
    return f"{type(exc).__name__}: {message}"
