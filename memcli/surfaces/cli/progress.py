"""Progress on stderr, never stdout: a bar for big index jobs and the steps of the
embedding model's one-time preparation (memcli.surfaces.cli.render draws the rest)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from memcli.surfaces.cli.render import _console, _line, _plain


def progress_callback(label: str, threshold: int = 300) -> Any:
    """A callback(done, total) drawing a Rich progress bar on stderr for big jobs."""
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if total < threshold:
            return
        if "bar" not in state:
            from rich.progress import Progress

            bar = Progress(console=_console(err=True), transient=True)
            bar.start()
            state["bar"] = bar
            state["task"] = bar.add_task(label, total=total)
        state["bar"].update(state["task"], completed=done)
        if done >= total:
            state.pop("bar").stop()

    return update


class model_steps:  # noqa: N801 - used as `with progress.model_steps() as report:`
    """Report the one-time preparation of the embedding model on stderr (never stdout):
    a Rich status line with a spinner on a terminal, one plain line per step otherwise.
    The reporter takes (step, of, what) (memcli.index.onnx_embedder.Report)."""

    LABEL = "preparing the embedding model, once"

    def __init__(self) -> None:
        self._status: Any = None

    def __enter__(self) -> Callable[[int, int, str], None]:
        return self.report

    def report(self, step: int, of: int, what: str) -> None:
        message = f"{self.LABEL} ({step}/{of}): {what}"
        if _plain(err=True):
            _line(message, err=True)
            sys.stderr.flush()
        elif self._status is None:
            self._status = _console(err=True).status(message)
            self._status.start()
        else:
            self._status.update(message)

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
