"""The Stop and PreCompact hooks' extraction (memcli.surfaces.hooks): remember the
explicit statements of the part of a transcript not seen yet, and say exactly what was
written when it fails partway; with the hooks' error types and the not-UTF-8 check
they share.

Builtin modules only at import time: the hooks import this on every prompt.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from memcli.services.memory import Memory


class HookError(Exception):
    """Why memcli cannot answer a hook: one line on stderr, exit 0."""


class PartlyWritten(HookError):
    """An extraction failed after some of its entries were written (the message names
    them and what was not written)."""


def unreadable_file(root: str) -> str | None:
    """Where a curated file (memory.md, …: the workspace's registry) is not UTF-8 text
    (reads leave such a file out) or cannot be read at all (a link memcli does not
    follow, another user's file, above the size limit), or None."""
    from pathlib import Path

    from memcli.core.errors import ConfigError, MemcliError, UnreadableFileError
    from memcli.core.names import CURATED_BUILTIN
    from memcli.store.config_files import load_registry
    from memcli.store.workspace_read import read_workspace_file

    try:
        names = load_registry(Path(root)).names
    except ConfigError:  # a bad [files]: the command that reads the files says so
        names = CURATED_BUILTIN
    for name in names:
        try:  # the rule for links, owners and sizes (memcli.store.links): a bounded read
            read_workspace_file(root, name)
        except OSError:
            continue
        except UnreadableFileError as exc:
            return f"{name}:{exc.line}: {exc.reason}; its memories were left out"
        except MemcliError as exc:
            return exc.message
    return None


def unreadable_in_layers(root: str, written_to: bool = False) -> str | None:
    """unreadable_file of every layer the workspace reads (memcli.services.layers), the
    workspace's own first, or with `written_to` of the layer an extraction writes some
    types to (`[layers] user_types`); a farther layer's file is named with its path."""
    for where in layer_roots(root, written_to):
        problem = unreadable_file(where)
        if problem:
            return problem if where == root else os.path.join(where, problem)
    return None


def layer_roots(root: str, written_to: bool = False) -> list[str]:
    """The directories of the layers the workspace reads (or, with `written_to`, the
    one its extraction writes to besides itself), its own first; only its own when they
    cannot be told."""
    try:
        import contextlib
        import io

        from memcli.services import layers
        from memcli.services.memory import Memory

        with contextlib.redirect_stderr(io.StringIO()):
            mem = Memory(root, notify=lambda message: None)
            if not written_to:
                return [root, *(str(layer.memory.root) for layer in layers.open_layers(mem)[1:])]
            wanted = layers.user_types(mem)
            return [root, *([str(layers.target(mem, None, wanted[0]).root)] if wanted else [])]
    except Exception:  # noqa: BLE001 - only a better message
        return [root]


def extract_new(root: str, payload: dict[str, Any]) -> str:
    """Remember the explicit statements of the part of the transcript not seen yet;
    returns a one-line report."""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise HookError("the hook input has no transcript_path")
    path = os.path.realpath(os.path.expanduser(path))
    if not os.path.exists(path):
        raise HookError(f"{path}: no such transcript")
    problem = unreadable_file(root) or unreadable_in_layers(root, written_to=True)
    if problem:  # its memories cannot be compared or written: later, once it is mended
        raise HookError(problem.replace("were left out", "cannot be updated"))
    from memcli.services.memory import Memory
    from memcli.surfaces import operations, transcript
    from memcli.surfaces.hook_positions import Positions

    session = transcript.session_of(path, payload.get("session_id"))
    memory = Memory(root)
    before: dict[str, str] | None = None  # the entries before the first write
    try:
        with Positions(root) as positions:
            try:  # only a regular file, in chunks: a line over the limit is passed over
                reading = transcript.read_after(
                    path, positions.offset(session, path), positions.line(session, path)
                )
            except transcript.NotRegularFile as exc:
                raise HookError(str(exc)) from None
            messages = transcript.reading_messages(reading)  # a line not JSON: skipped
            if messages:
                before = _entry_texts(memory)
            decisions = operations.extract(memory, messages, source=session) if messages else []
            positions.record(session, path, reading.end, reading.line)
    except Exception as exc:  # after a write (an add, the positions): say what was written
        if before is not None and not isinstance(exc, HookError):
            _partly_written(memory, before, exc)
        raise
    counts: dict[str, int] = {}
    for decision in decisions:
        counts[decision.action] = counts.get(decision.action, 0) + 1
    summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "nothing new"
    new = reading.end - reading.start
    note = reading.skipped.note()
    return f"memcli: {summary} from {new} new bytes of session {session}" + (
        f"\n{note}" if note else ""
    )


def _entry_texts(memory: Memory) -> dict[str, str]:
    """id -> text of the workspace's live entries (memoized by the store: the extract
    that follows reads them anyway; archive.md is left out, where an update puts the
    text it replaced under the same id)."""
    quiet = lambda problem: None  # noqa: E731 - the extract reports them itself
    return {e.id: e.text for e in memory.store.entries(warn=quiet)}


def _partly_written(memory: Memory, before: dict[str, str], exc: Exception) -> None:
    """Raise PartlyWritten naming the entries an extraction that failed with `exc` had
    written already (added or changed); return when it wrote none."""
    from memcli.services.memory import Memory  # noqa: F811 - at run time
    from memcli.surfaces.guard import one_line

    try:
        after = _entry_texts(Memory(memory.store.root))  # read afresh, not memoized
    except Exception:  # noqa: BLE001 - the files cannot be read now: say so, not nothing
        raise PartlyWritten(
            f"{one_line(exc)}; the extraction stopped partway: some of its memories may "
            "have been written (`memcli list` shows them); this part of the session is "
            "read again at the next Stop"
        ) from exc
    added = [i for i in after if i not in before]
    changed = [i for i in after if i in before and after[i] != before[i]]
    if not (added or changed):
        return
    done = ", ".join(
        part
        for part in (
            f"added {len(added)} ({' '.join(added)})" if added else "",
            f"updated {len(changed)} ({' '.join(changed)})" if changed else "",
        )
        if part
    )
    raise PartlyWritten(
        f"{one_line(exc)}; {done} before it failed; the rest of this part of the session "
        "was not written and is read again at the next Stop"
    ) from exc
