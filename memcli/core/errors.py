"""Domain errors. Each carries a message that says what is wrong, where, and what to do next.

Exit codes are named here (ExitCode); memcli.surfaces.guard is the one place that maps an
error to its code and prints its message (a UsageError: 2, any other MemcliError: 1);
nothing below the surfaces prints or exits.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """memcli's exit codes."""

    OK = 0
    ERROR = 1  # a MemcliError: the message says what is wrong
    USAGE = 2  # a bad option value or combination (UsageError, or the option parser)
    INTERRUPTED = 130  # Ctrl-C


class MemcliError(Exception):
    """Base class of every error memcli reports to a user."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class WorkspaceError(MemcliError):
    """The workspace is missing, not a directory, or unusable."""


class ParseError(MemcliError):
    """A Markdown file holds something memcli cannot read (malformed metadata, bad value)."""

    def __init__(self, path: str, line: int, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"{path}:{line}: {message}", hint=hint)
        self.path = path
        self.line = line
        self.skipped = True  # the entry is left out of reads (False: a warning only)
        self.whole_file = False  # True: the whole file is left out (not UTF-8 text)
        self.blocks_writes = True  # False: a value read with its default (imp=high)


class UnreadableFileError(MemcliError):
    """A workspace file is not UTF-8 text (a byte that does not decode, a NUL): reads
    report it and go on with the other files; writes to it are refused."""

    def __init__(self, path: str, line: int, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"{path}:{line}: {message}", hint=hint)
        self.path = path
        self.line = line
        self.reason = message


class NotFoundError(MemcliError):
    """No entry has the given id."""


class ValidationError(MemcliError):
    """A value given by the user is out of range or of the wrong kind."""


class ConflictError(MemcliError):
    """A file kept changing under a write; the write gave up without changing anything."""


class ConfigError(MemcliError):
    """memcli.toml or a MEMCLI_* variable holds a bad setting."""


class UsageError(MemcliError):
    """A command-line option has a bad value (the CLI exits with code 2, not 1)."""
