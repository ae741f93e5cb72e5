"""Every message that says something is wrong also says what to do (issue 29 item 8):
an error raised without a hint gets its class's next step from the one guard."""

from __future__ import annotations

import pytest

from memcli.core import errors
from memcli.surfaces import guard


@pytest.mark.parametrize(
    "error",
    [
        errors.MemcliError("it broke"),
        errors.WorkspaceError("no workspace"),
        errors.ParseError("memory.md", 3, "bad comment"),
        errors.NotFoundError("no entry m1"),
        errors.ValidationError("importance 2 is above 1"),
        errors.ConflictError("memory.md kept changing"),
        errors.ConfigError("search.limit: 0"),
        errors.UsageError("--limit: 0"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_an_error_without_a_hint_says_what_to_do(error: BaseException) -> None:
    report = guard.describe(error)
    assert report is not None
    assert report["hint"] == guard.NEXT_STEP[str(report["code"])]
    assert str(report["error"]).endswith(f"\n  hint: {report['hint']}")


def test_an_errors_own_hint_wins() -> None:
    report = guard.describe(errors.NotFoundError("no entry m1", hint="try `memcli list`"))
    assert report is not None and report["hint"] == "try `memcli list`"
    assert str(report["error"]).count("hint:") == 1


def test_every_error_code_has_a_next_step() -> None:
    assert set(guard.CODES.values()) | {"not_utf8"} <= set(guard.NEXT_STEP)
