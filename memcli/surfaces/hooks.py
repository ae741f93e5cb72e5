"""`memcli hook EVENT`: answer an agent host's hooks (Claude Code's hook JSON on stdin).

- `session-start` and `user-prompt-submit` print a token-budgeted memory block for the
  prompt and the recent turns of the transcript, as Claude Code's
  `hookSpecificOutput.additionalContext`. A running `memcli watch` answers it (an
  `inject` request over its socket), so a prompt waits tens of milliseconds; without one
  the block is computed in-process, and a watcher is started for the prompts to come
  (memcli.surfaces.daemon.autostart; `[watch] autostart = false` turns that off).
- `pre-compact` and `stop` remember the explicit statements of the transcript
  (`transcript_path`, Claude Code's JSONL: memcli.surfaces.transcript) with the session id
  as `src=`, each part of a transcript once (the offset reached per session:
  memcli.surfaces.hook_positions; the extraction itself: memcli.surfaces.hook_extract).

Claude Code takes a hook's output into the context only up to 10,000 characters (above
that the model gets a 2 KB preview and a file path): a block that would make the answer
longer leaves out its last entries (a line on stderr says how many).

A hook must never hold up or block a person's prompt: whatever goes wrong (no workspace,
a broken file, a dead daemon, the time limit) ends with exit 0, nothing on stdout and one
line on stderr. Exit code 2 would block the prompt in Claude Code, so it is never used.

Builtin modules only up to the daemon hand-off (memcli.surfaces.protocol.ask): the host
waits for this process on every prompt. Exit codes and error lines come from
memcli.surfaces.guard, imported only when something went wrong.
"""

from __future__ import annotations

import os
import sys

from memcli.surfaces.hook_extract import (
    HookError,
    PartlyWritten,
    extract_new,
    unreadable_file,
    unreadable_in_layers,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any


__all__ = ["HookError", "PartlyWritten", "extract_new", "run", "unreadable_file"]

#: event argument -> Claude Code's hook event name
EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "stop": "Stop",
}
INJECT_EVENTS = ("session-start", "user-prompt-submit")
EXTRACT_EVENTS = ("stop", "pre-compact")
#: token budget of the block: a session's start gets more than each prompt
DEFAULT_TOKENS = {"session-start": 1500, "user-prompt-submit": 600}
#: seconds before the hook gives up (exit 0, nothing injected); the installed settings
#: give Claude Code a little more than this
DEFAULT_TIMEOUT = {
    "session-start": 8.0,
    "user-prompt-submit": 8.0,
    "pre-compact": 50.0,
    "stop": 50.0,
}
#: the end of a transcript read for the recent turns
TAIL_BYTES = 256 * 1024
#: recent turns for the context (the last 3 user turns and the replies)
RECENT_TURNS = 3
TURN_CHARS = 1000
CONTEXT_CHARS = 8000
#: the most characters of a hook's output Claude Code puts into the context whole
HOST_OUTPUT_CHARS = 10_000
#: seconds during which a `memcli index` a hook started is taken to be still running
#: (the one-time model preparation and a first indexing take about a minute)
STARTED_FOR = 120.0


def run(workspace_flag: str | None, args: list[str], stdin_text: str | None = None) -> int:
    """Run `memcli hook ARGS` and return the exit code (0 unless ARGS are wrong)."""
    try:
        event, max_tokens, timeout = parse_args(args)
    except HookError as exc:
        from memcli.core.errors import ExitCode

        sys.stderr.write(f"memcli hook: {exc}\n")
        return ExitCode.ERROR  # a wrong command line in the settings: shown, never blocks
        # (ExitCode.USAGE, 2, would block the prompt)
    if stdin_text is None:
        stdin_text = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    import _thread

    done = _thread.allocate_lock()
    done.acquire()
    result: list[tuple[str, str]] = []

    def work() -> None:
        try:
            result.append(answer(event, workspace_flag, stdin_text, max_tokens, timeout))
        except PartlyWritten as exc:  # some entries were written: never "nothing"
            result.append(("", f"memcli hook {event}: {exc}\n"))
        except HookError as exc:
            result.append(("", f"memcli hook {event}: {exc}; nothing was added\n"))
        except BaseException as exc:  # noqa: BLE001 - a hook never fails the host's prompt
            from memcli.surfaces.guard import one_line

            result.append(("", f"memcli hook {event}: {one_line(exc)}; nothing was added\n"))
        finally:
            done.release()

    _thread.start_new_thread(work, ())
    if not done.acquire(timeout=max(timeout, 0.001)):
        try:
            warming = _index_in_background(workspace_for(workspace_flag, parse_payload(stdin_text)))
        except Exception:  # noqa: BLE001 - only an attempt
            warming = False
        cut = (  # an extraction cut short may have written some entries already
            "entries it wrote so far stay (`memcli list`), this part of the session is "
            "read again at the next Stop"
            if event in EXTRACT_EVENTS
            else "nothing was added"
        )
        sys.stderr.write(
            f"memcli hook {event}: no answer within {timeout:g} s; {cut}"
            + ("; the index is being brought up to date in the background" if warming else "")
            + "\n"
        )
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(0)  # the worker may be stuck in a read or a model load
    out, err = result[0]
    emit(sys.stdout, out)
    sys.stderr.write(err)
    return 0


def _index_in_background(root: str) -> bool:
    """Start `memcli index` detached (it indexes the workspace and makes the one-time
    ONNX export), so that a first hook that ran out of time or answered from the keyword
    side is not followed by others that wait for the same work."""
    try:
        from memcli.store.links import check_state, follow

        state = os.fspath(check_state(root, follow(root, ".memcli", folder=True)))
        if os.path.exists(os.path.join(state, "daemon.sock")):
            return False  # a watcher keeps it current
        import time

        started = os.path.join(state, "index-started")
        try:
            if time.time() - os.stat(started).st_mtime < STARTED_FOR:
                return True  # one started a moment ago is still at it
        except OSError:
            pass
        os.makedirs(os.path.dirname(started), exist_ok=True)
        with open(started, "w"):
            pass
        import subprocess

        from memcli.surfaces.blas import for_children

        subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", root, "index"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=for_children(os.environ),  # its own BLAS threads (memcli.surfaces.blas)
        )
        return True
    except Exception:  # noqa: BLE001 - only an attempt
        return False


def parse_args(args: list[str]) -> tuple[str, int, float]:
    """(event, max tokens, timeout) of `hook EVENT [--max-tokens N] [--timeout S]`."""
    event = None
    max_tokens: int | None = None
    timeout: float | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in ("--max-tokens", "--timeout"):
            if not eq:
                if i + 1 >= len(args):
                    raise HookError(f"{name} needs a value")
                value = args[i + 1]
                i += 1
            try:
                if name == "--max-tokens":
                    max_tokens = int(value)
                else:
                    timeout = float(value)
            except ValueError:
                raise HookError(f"{name}: {value!r} is not a number") from None
        elif arg.startswith("-") or event is not None:
            raise HookError(f"unexpected argument {arg!r}")
        else:
            event = arg
        i += 1
    if event not in EVENTS:
        raise HookError(
            f"unknown event {event!r}: give one of {', '.join(EVENTS)}"
            if event
            else f"give the event: {', '.join(EVENTS)}"
        )
    if max_tokens is not None and max_tokens < 1:
        raise HookError("--max-tokens must be at least 1")
    if timeout is not None and not timeout > 0:
        raise HookError("--timeout must be more than 0 seconds")
    return (
        event,
        max_tokens or DEFAULT_TOKENS.get(event, 0),
        timeout or DEFAULT_TIMEOUT[event],
    )


def answer(
    event: str, workspace_flag: str | None, stdin_text: str, max_tokens: int, timeout: float
) -> tuple[str, str]:
    """(stdout, stderr) of the hook."""
    payload = parse_payload(stdin_text)
    root = workspace_for(workspace_flag, payload)
    if event in INJECT_EVENTS:
        notes: list[str] = []  # a transcript line skipped, a transcript not read
        block, said = inject_block(root, event, payload, max_tokens, timeout, notes)
        said = "".join(f"{note}\n" for note in notes) + (
            f"memcli hook {event}: {said}\n" if said else ""
        )
        if not block:
            return "", said
        out, left_out = fitted_output(EVENTS[event], block, HOST_OUTPUT_CHARS)
        if left_out:
            return out, said + (
                f"memcli hook {event}: {left_out} memories left out to keep the block under "
                f"{HOST_OUTPUT_CHARS} characters (--max-tokens sets a smaller budget)\n"
            )
        return out, said
    return "", extract_new(root, payload) + "\n"


def parse_payload(text: str) -> dict[str, Any]:
    if not text.strip():
        raise HookError("no hook JSON on stdin (the host sends it)")
    try:
        payload = loads(text)
    except ValueError as exc:
        raise HookError(f"the hook input is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookError("the hook input is not a JSON object")
    return payload


def workspace_for(flag: str | None, payload: dict[str, Any]) -> str:
    """The workspace: --workspace, MEMCLI_WORKSPACE, the nearest ancestor of the hook's
    `cwd` holding memory.md or memcli.toml, then the per-user default
    (memcli.store.workspace.existing_root, the one resolver); it must exist."""
    from memcli.store.workspace import existing_root

    cwd = payload.get("cwd")
    if not (isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd)):
        cwd = os.getcwd()
    try:
        root, problem = existing_root(flag, os.environ, cwd)
    except Exception as exc:  # noqa: BLE001 - WorkspaceError, without importing errors
        raise HookError(getattr(exc, "message", str(exc))) from None
    if problem is not None:
        raise HookError(problem)
    return root


# ------------------------------------------------------------------ inject


def inject_block(
    root: str,
    event: str,
    payload: dict[str, Any],
    max_tokens: int,
    timeout: float,
    notes: list[str] | None = None,
) -> tuple[str, str]:
    """The memory block for the prompt and recent turns ('' when no memory fits), and a
    line to say on stderr ('' when there is nothing to say); what the transcript's
    reading left out goes to `notes`.

    In this process, while the embeddings cannot be used yet (the one-time model
    preparation not done, the workspace never indexed: either would outlast the hook's
    time), the block comes from the keyword side alone and `memcli index` is started in
    the background to get them ready."""
    context = hook_context(event, payload, notes) or None
    said = ""
    # memcli.core.requests.InjectRequest in its wire form (that module costs dataclasses)
    wire = {"kind": "InjectRequest", "context": context, "max_tokens": max_tokens}
    answer = None
    if not os.environ.get("MEMCLI_NO_DAEMON"):
        from memcli.surfaces.protocol import ask

        answer = ask(root, lambda: wire, timeout)
    if answer is None:  # no watcher: the same inject in this process
        import contextlib
        import io

        from memcli.core.requests import from_wire
        from memcli.services.memory import Memory
        from memcli.surfaces import operations
        from memcli.surfaces.daemon import autostart

        # a watcher for the prompts to come ([watch] autostart), not waited for
        watcher = autostart.ensure(root)

        with contextlib.redirect_stderr(io.StringIO()):  # the hook says one line itself
            mem = Memory(root)
            if context is None or mem.runtime.embeddings_ready():
                text = operations.inject(mem, from_wire(wire)).text
            else:
                text = operations.inject_keyword_only(mem, from_wire(wire)).text
                said = (
                    "the embeddings are not ready yet (the model's one-time preparation "
                    "or this workspace's first indexing); answered from the keyword side"
                    + (
                        "; `memcli watch` is preparing it"
                        if watcher in ("started", "starting")
                        else "; `memcli index` is preparing it"
                        if _index_in_background(root)
                        else ""
                    )
                )
    elif "error" in answer:
        lines = [line for line in (answer["error"] or "").splitlines() if line.strip()]
        raise HookError(lines[0] if lines else f"exit code {answer['code']}")
    else:
        text = answer["inject"]["block"]
    if has_entries(text):
        return text, said
    problem = unreadable_in_layers(root)
    if problem:  # an empty block because a file cannot be read: say so
        raise HookError(problem)
    return "", said


def has_entries(block: str) -> bool:
    """Whether a block holds an entry (a `- ` item), not only its wrapper and note."""
    return any(line.startswith("- ") for line in block.splitlines())


def hook_context(event: str, payload: dict[str, Any], notes: list[str] | None = None) -> str:
    """The prompt first (the embedding model reads the start of a query), then the recent
    turns of the transcript, each cut to TURN_CHARS; control characters become spaces.
    Lines of the transcript that cannot be read are left out (said in `notes`)."""
    parts = []
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        parts.append(prompt.strip())
    path = payload.get("transcript_path")
    if isinstance(path, str) and path:
        from memcli.surfaces import transcript

        reading = transcript.tail_reading(os.path.expanduser(path), TAIL_BYTES)
        messages = transcript.reading_messages(reading)
        if reading.skipped.note() and notes is not None:
            notes.append(reading.skipped.note())
        turns = transcript.recent_turns(messages, RECENT_TURNS)
        if parts and turns and turns[-1] == parts[0]:
            turns.pop()  # the prompt may already be in the transcript
        parts.extend(t[:TURN_CHARS] for t in turns)
    text = "\n\n".join(parts)[:CONTEXT_CHARS]
    return "".join(c if c >= " " or c in "\n\t" else " " for c in text).strip()


# ------------------------------------------------------------------ the answer


def fitted_output(event_name: str, block: str, limit: int) -> tuple[str, int]:
    """hook_output of `block`, or of the block without its last entries where that would
    be longer than `limit` characters; and how many entries were left out. An entry is
    a `- ` line and the indented lines under it; a heading left without entries goes."""
    out = hook_output(event_name, block)
    if len(out) <= limit:
        return out, 0
    lines = block.splitlines()
    head, body, tail = lines[:1], lines[1:-1], lines[-1:]
    units: list[list[str]] = []  # headings and entries, each with its continuation lines
    for line in body:
        if units and line[:1] in (" ", "\t") and units[-1][0].startswith("- "):
            units[-1].append(line)
        else:
            units.append([line])
    left_out = 0
    while units:
        while units and not units[-1][0].startswith("- "):
            units.pop()  # a heading with nothing under it
        if not units:
            break
        units.pop()
        left_out += 1
        while units and not units[-1][0].startswith("- "):
            units.pop()
        text = "\n".join(head + [line for unit in units for line in unit] + tail)
        out = hook_output(event_name, text)
        if len(out) <= limit:
            return out, left_out
    return "", left_out


# ------------------------------------------------------------------ JSON without `json`


def hook_output(event_name: str, block: str) -> str:
    """Claude Code's JSON answer adding `block` to the context: its characters as they
    are (a model reads 喜欢 better than \\u559c\\u6b22, and it is shorter), only quotes,
    backslashes and control characters escaped; written to stdout as UTF-8 (`emit`)."""
    answer = {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": block}}
    try:
        from _json import encode_basestring, make_encoder
    except ImportError:  # an interpreter without the C accelerator
        import json

        return json.dumps(answer, ensure_ascii=False) + "\n"
    encode = make_encoder({}, str, encode_basestring, None, ": ", ", ", False, False, True)
    return "".join(encode(answer, 0)) + "\n"


def emit(stream: Any, text: str) -> None:
    """Write `text` to `stream` as UTF-8 whatever its locale says (a hook's host reads
    UTF-8 JSON); a character UTF-8 cannot carry (a lone surrogate) as `\\u` escape."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        return
    stream.flush()
    buffer.write(text.encode("utf-8", errors="backslashreplace"))
    buffer.flush()


def loads(text: str) -> Any:
    """json.loads without importing json (memcli.surfaces.protocol.loads)."""
    from memcli.surfaces.protocol import loads

    return loads(text)
