"""Output: Rich tables on a terminal, plain text in a pipe, JSON for --json.

User text is printed without markup interpretation, and with control characters as
visible escapes (`\x1b`): an escape sequence stored in a memory, or given in an argument
an error message repeats, never reaches the terminal as one (--json output is escaped by
JSON itself).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memcli.core.models import Entry
from memcli.core.validate import dumps_json, escape_controls

_out = Console(highlight=False, soft_wrap=True)
_err = Console(stderr=True, highlight=False, soft_wrap=True)


def emit_json(data: Any) -> None:
    """Machine-readable output: one JSON document on stdout, nothing else."""
    sys.stdout.write(dumps_json(data) + "\n")


def _text(message: str, style: str = "") -> Text:
    """Rich text of `message`, control characters escaped."""
    return Text(escape_controls(message), style=style)


def info(message: str) -> None:
    """A human-readable line on stdout."""
    _out.print(_text(message))


def pinned_info() -> Callable[[str], None]:
    """`info` bound to the stdout of this moment: a watcher's log lines must not land in
    the output of a request the daemon answers meanwhile (it swaps `_out` per request)."""
    # the file itself: a Console without one prints to whatever sys.stdout is then,
    # and a request's redirect_stdout swaps that
    console = Console(file=sys.stdout, highlight=False, soft_wrap=True)

    def log(message: str) -> None:
        console.print(_text(message))

    return log


def note(message: str) -> None:
    """A side note on stderr (never mixed into --json output)."""
    _err.print(_text(message), style="dim")


def error(message: str) -> None:
    _err.print(Text("error: ", style="bold red") + _text(message))


def diff(text: str) -> None:
    """A unified diff: coloured on a terminal, as is in a pipe."""
    if not _out.is_terminal:
        sys.stdout.write(escape_controls(text))
        return
    styles = {"+": "green", "-": "red", "@": "cyan"}
    for line in text.splitlines():
        style = "bold" if line.startswith(("+++", "---")) else styles.get(line[:1], "")
        _out.print(_text(line, style))


def _raw(line: str) -> None:
    """A line on stdout as is (no tab expansion, wrapping or cutting): for pipes."""
    _out.file.write(escape_controls(line) + "\n")


def entries_table(entries: Sequence[Entry], title: str | None = None) -> None:
    """Entries: a table on a terminal; in a pipe `id<TAB>type<TAB>text`, the whole text,
    each further line of a multi-line entry as `<TAB><TAB>line` (`cut -f3` gives texts)."""
    if not entries:
        note("no entries")
        return
    if not _out.is_terminal:
        for e in entries:
            first, *more = e.text.split("\n")
            _raw(f"{e.id}\t{e.type}\t{first}")
            for line in more:
                _raw(f"\t\t{line}")
        return
    table = Table(title=title, show_lines=False)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("type", style="magenta")
    table.add_column("imp", justify="right")
    table.add_column("text")
    for e in entries:
        table.add_row(_text(e.id), _text(e.type), f"{e.importance:.2f}", _text(e.text))
    _out.print(table)


def entry_detail(data: dict[str, Any]) -> None:
    """One entry for a person: its text, then its metadata as `  key: value` lines (yes/no,
    "never")."""
    info(f"{data['id']}  ({data['type']}, {data['file']}:{data['line']})")
    info(data["text"])
    optional = ("keywords", "created", "updated", "source")
    for key in ("importance", "confidence", *optional, "pinned", "access_count"):
        value = data.get(key)
        if key not in optional or value not in (None, [], ""):
            info(f"  {_label(key)}: {plain(value, key)}")
    info(f"  last accessed: {plain(data.get('last_accessed'), 'last_accessed')}")
    extra = {
        k: v
        for k, v in data.get("meta", {}).items()
        if k not in ("id", "imp", "conf", "kw", "created", "updated", "src", "pin")
    }
    for key, value in extra.items():
        info(f"  {key}: {value}")


_LABELS = {
    "access_count": "accesses",
    "by_type": "by type",
    "by_file": "by file",
    "uptime_s": "uptime (s)",
}


def _label(key: str) -> str:
    return _LABELS.get(key, key.replace("_", " "))


def plain(value: Any, key: str = "") -> str:
    """A value as a person reads it: yes/no, "never" for a time that did not happen yet,
    lists joined with commas, numbers without needless digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "never" if key.startswith("last") or key in ("updated", "expires") else "none"
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def key_values(pairs: Iterable[tuple[str, Any]], indent: int = 0) -> None:
    """`key: value` lines; a nested mapping (counts by type, the last batch) as indented
    lines under its key."""
    pad = " " * indent
    for key, value in pairs:
        label = _label(key) if indent == 0 else key
        if isinstance(value, dict) and value:
            info(f"{pad}{label}:")
            key_values(value.items(), indent + 2)
        else:
            info(f"{pad}{label}: {plain(value if value != {} else None, key)}")


def _one_line(text: str, width: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def hits_table(hits: Sequence[Any], explain: bool = False) -> None:
    """Search results; with explain, one line of score components under each."""
    if not hits:
        note("no matches")
        return
    for rank, hit in enumerate(hits, 1):
        e = hit.entry
        if _out.is_terminal:
            line = Text(f"{rank:>2}. ", style="bold") + Text(f"{hit.score:.3f} ", style="green")
            line += _text(f"{e.id} ", "cyan") + _text(f"[{e.type}] ", "magenta")
            line += _text(_one_line(e.text))
            _out.print(line)
        else:  # a pipe: the whole text, further lines of a multi-line entry indented
            first, *more = e.text.split("\n")
            _raw(f"{rank}. {hit.score:.3f} {e.id} [{e.type}] {first}")
            for text_line in more:
                _raw(f"      {text_line}")
        if explain:
            parts = "  ".join(
                f"{k}={v:.0f}" if k == "accesses" else f"{k}={v:.3f}"
                for k, v in hit.components.items()
            )
            info(f"      {parts}")


def progress_callback(label: str, threshold: int = 300) -> Any:
    """A callback(done, total) drawing a Rich progress bar on stderr for big jobs."""
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if total < threshold:
            return
        if "bar" not in state:
            from rich.progress import Progress

            bar = Progress(console=_err, transient=True)
            bar.start()
            state["bar"] = bar
            state["task"] = bar.add_task(label, total=total)
        state["bar"].update(state["task"], completed=done)
        if done >= total:
            state.pop("bar").stop()

    return update
