"""Output: Rich tables on a terminal, plain text in a pipe, JSON for --json.

User text is printed without markup interpretation, and with control characters as
visible escapes (`\x1b`): an escape sequence stored in a memory, or given in an argument
an error message repeats, never reaches the terminal as one (--json output is escaped by
JSON itself).

Everything goes to the streams of the command's environment (memcli.surfaces.cli.env.
Env, bound with `using` by the entry point; sys.stdout and sys.stderr outside a
command), which also says the command's name and whether it asked for --json.

Rich is imported only when a stream is a terminal (or the environment asks for colour):
in a pipe a line is written as Rich would write it (a test compares the two), so the
daemon's client renders served answers with these very functions without paying for
Rich. Builtin modules and memcli.core.text only at import time.

Long output for a person (list, search, get, history, export, config list) goes through
a pager (`paged`) when stdout is a terminal and the output is taller than it:
$MEMCLI_PAGER, else $PAGER, else `less -FRX`; never in a pipe, for --json, or with
--no-pager.
"""

from __future__ import annotations

import os
import sys

from memcli.core.text import dumps, escape_controls
from memcli.surfaces.cli.env import plain_stream

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from rich.console import Console
    from rich.text import Text

    from memcli.core.models import Entry
    from memcli.surfaces.cli.env import Env

_env: Env | None = None  # the command's environment (`using`)
_out: Console | None = None  # Rich consoles on its streams, made when a terminal needs one
_err: Console | None = None


class using:  # noqa: N801 - used as `with render.using(env):`
    """Print to `env`'s streams, for its command and --json, until the block ends."""

    def __init__(self, env: Env) -> None:
        self.env = env

    def __enter__(self) -> Env:
        global _env, _out, _err
        self._saved = (_env, _out, _err)
        _env, _out, _err = self.env, None, None
        return self.env

    def __exit__(self, *exc: object) -> None:
        global _env, _out, _err
        _env, _out, _err = self._saved


def _stream(err: bool = False) -> Any:
    """The command's stdout (or stderr)."""
    if _env is None:
        return sys.stderr if err else sys.stdout
    return _env.stderr if err else _env.stdout


def write(text: str) -> None:
    """Text on the command's stdout as is (an inject block, an export)."""
    _stream().write(text)


def _console(err: bool = False) -> Console:
    global _out, _err
    if (_err if err else _out) is None:
        from rich.console import Console

        if _env is None:  # outside a command: whatever sys.stdout / sys.stderr are then
            console = Console(stderr=err, highlight=False, soft_wrap=True)
        else:
            console = Console(file=_stream(err), highlight=False, soft_wrap=True)
        if err:
            _err = console
        else:
            _out = console
    return _err if err else _out  # type: ignore[return-value]


def _plain(err: bool = False) -> bool:
    """Whether Rich would write to this stream as to a file (env.plain_stream)."""
    return plain_stream(_stream(err))


def is_terminal() -> bool:
    """Whether stdout is a terminal (as Rich sees it)."""
    return not _plain() and _console().is_terminal


def _line(message: str, style: str = "", *, err: bool = False, label: str = "") -> None:
    """`label` (bold red) and `message` (in `style`), control characters escaped, as one
    printed line; a tab (which Rich expands by cell width) leaves it to Rich."""
    text = escape_controls(message)
    if _plain(err) and "\t" not in text and "\t" not in label:
        _stream(err).write(label + text + "\n")
        return
    from rich.text import Text

    line = Text(text, style=style)
    if label:
        line = Text(label, style="bold red") + line
    _console(err).print(line)


def wants_json() -> bool:
    """Whether the command's output is the --json envelope."""
    return _env is not None and _env.json


def command() -> str:
    """The command being run as its messages name it (`search`, `config set`)."""
    return "" if _env is None else _env.name


class _Screen:
    """A terminal's stand-in while paged output is collected: Rich writes to it as to
    the terminal (colours, the terminal's width), the pager gets its text."""

    def __init__(self, real: Any) -> None:
        import io

        self._buffer = io.StringIO()
        self.encoding = getattr(real, "encoding", "utf-8")
        self._fileno = real.fileno

    def write(self, text: str) -> int:
        return self._buffer.write(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fileno()

    def getvalue(self) -> str:
        return self._buffer.getvalue()


def pager_command() -> list[str] | None:
    """The pager: $MEMCLI_PAGER, else $PAGER, else `less -FRX`; None when set to
    nothing or `cat`."""
    import shlex

    raw = os.environ.get("MEMCLI_PAGER", os.environ.get("PAGER", "less -FRX"))
    try:
        parts = shlex.split(raw)
    except ValueError:
        return None
    return None if not parts or parts == ["cat"] else parts


class paged:  # noqa: N801 - used as `with render.paged(...)`
    """Collect what a command prints on a terminal and, when it is taller than the
    terminal, show it through the pager instead (stdout a terminal, no --json, not
    turned off); otherwise print it as is."""

    def __init__(self, enabled: bool = True) -> None:
        self.on = (
            enabled
            and not wants_json()
            and _isatty(_stream())
            and pager_command() is not None
        )

    def __enter__(self) -> paged:
        global _env, _out
        if self.on:
            from memcli.surfaces.cli.env import Env

            self._saved, self._console = _env, _out
            self._real = _stream()
            self._screen = _Screen(self._real)
            _env, _out = (_env or Env([])).writing_to(self._screen), None
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        global _env, _out
        if not self.on:
            return
        _env, _out = self._saved, self._console
        text = self._screen.getvalue()
        if kind is not None or not text or text.count("\n") < _terminal_lines(self._real):
            self._real.write(text)  # fits (or went wrong): as is
            return
        _page(text, self._real)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _terminal_lines(stream: Any) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).lines
    except (AttributeError, OSError, ValueError):
        return 24


def _page(text: str, out: Any) -> None:
    """Run the pager on `text`; if it cannot start, print the text."""
    import subprocess

    command = pager_command() or []
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # as git: quit if one screen, colours, no clearing
    try:
        pager = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
    except OSError:
        out.write(text)
        return
    out.flush()
    try:
        assert pager.stdin is not None
        pager.stdin.write(text.encode(getattr(out, "encoding", None) or "utf-8", "replace"))
        pager.stdin.close()
    except BrokenPipeError:  # the person quit the pager early
        pass
    while True:
        try:
            pager.wait()
            return
        except KeyboardInterrupt:  # Ctrl-C belongs to the pager (less ignores it)
            continue


def emit_json(data: Any) -> None:
    """A command's result as the one --json envelope: one JSON document on stdout,
    `{"ok": true, "command": ..., "data": ...}`, nothing else."""
    write(dumps({"ok": True, "command": command(), "data": data}) + "\n")


def fail(report: dict[str, Any], data: Any = None) -> None:
    """An error (memcli.surfaces.guard.describe's form) reported: `error: ...` on stderr
    and, for --json, the envelope `{"ok": false, "command": ..., "error": {"code",
    "message", "hint"}}` on stdout (with the command's `data` when it has some, as
    doctor's report). Nothing to report (Ctrl-C, a closed pipe): nothing printed."""
    if report.get("error") is None:
        return
    if wants_json():
        emit_failure(report, data)
    error(report["error"])


def emit_failure(report: dict[str, Any], data: Any = None) -> None:
    """The --json envelope of a failed command: its error's `code`, `message` and `hint`
    (and the command's `data` when it has some)."""
    envelope: dict[str, Any] = {"ok": False, "command": command()}
    if data is not None:
        envelope["data"] = data
    envelope["error"] = {
        "code": report["code"],
        "message": report["message"],
        "hint": report.get("hint"),
    }
    write(dumps(envelope) + "\n")


def _text(message: str, style: str = "") -> Text:
    """Rich text of `message`, control characters escaped."""
    from rich.text import Text

    return Text(escape_controls(message), style=style)


def info(message: str) -> None:
    """A human-readable line on stdout."""
    _line(message)


def pinned_info(err: bool = False) -> Callable[[str], None]:
    """`info` bound to the command's stdout (or stderr), for as long as it runs (the
    watcher's log lines)."""
    from rich.console import Console

    console = Console(file=_stream(err), highlight=False, soft_wrap=True)

    def log(message: str) -> None:
        console.print(_text(message))

    return log


def note(message: str) -> None:
    """A side note on stderr (never mixed into --json output)."""
    if _plain(err=True):
        _line(message, err=True)
    else:
        _console(err=True).print(_text(message), style="dim")


def error(message: str) -> None:
    _line(message, err=True, label="error: ")


def diff(text: str) -> None:
    """A unified diff: coloured on a terminal, as is in a pipe."""
    if not is_terminal():
        write(escape_controls(text))
        return
    styles = {"+": "green", "-": "red", "@": "cyan"}
    for line in text.splitlines():
        style = "bold" if line.startswith(("+++", "---")) else styles.get(line[:1], "")
        _console().print(_text(line, style))


def _raw(line: str) -> None:
    """A line on stdout as is (no tab expansion, wrapping or cutting): for pipes."""
    write(escape_controls(line) + "\n")


def entries_table(
    entries: Sequence[Entry], title: str | None = None, layers: Sequence[str] | None = None
) -> None:
    """Entries: a table on a terminal; in a pipe `id<TAB>type<TAB>text`, the whole text,
    each further line of a multi-line entry as `<TAB><TAB>line` (`cut -f3` gives texts).
    With `layers` (one name per entry: several layers were read) each says its layer: a
    column, or `<TAB>layer` after the first line of its text in a pipe."""
    if not entries:
        note("no entries")
        return
    if not is_terminal():
        for i, e in enumerate(entries):
            first, *more = e.text.split("\n")
            where = "" if layers is None else f"\t{layers[i]}"
            _raw(f"{e.id}\t{e.type}\t{first}{where}")
            for line in more:
                _raw(f"\t\t{line}")
        return
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("type", style="magenta")
    table.add_column("imp", justify="right")
    table.add_column("text")
    if layers is not None:
        table.add_column("layer", style="green")
    for i, e in enumerate(entries):
        cells = [_text(e.id), _text(e.type), f"{e.importance:.2f}", _text(e.text)]
        table.add_row(*cells, *([] if layers is None else [_text(layers[i])]))
    _console().print(table)


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


def hit_row(hit: Any) -> dict[str, Any]:
    """A search hit as the renderers take it (and the daemon sends it): the entry's
    dict, the exact score and its components."""
    row = {"entry": hit.entry.to_dict(), "score": hit.score, "components": hit.components}
    if getattr(hit, "weak", False):
        row["weak"] = True
    layer = getattr(hit, "layer", None)  # several layers were read (services.layers)
    return row if layer is None else {**row, "layer": layer}


def hits_json(rows: Sequence[dict[str, Any]], explain: bool = False) -> list[dict[str, Any]]:
    """The --json form of search results (scores rounded to 6 digits)."""
    data = []
    for row in rows:
        item = {"id": row["entry"]["id"], "score": round(row["score"], 6), "entry": row["entry"]}
        if row.get("weak"):
            item["weak"] = True
        if "layer" in row:
            item["layer"] = row["layer"]
        if explain:
            item["components"] = {k: round(v, 6) for k, v in row["components"].items()}
        data.append(item)
    return data


def hits_table(rows: Sequence[dict[str, Any]], explain: bool = False) -> None:
    """Search results (`hit_row`s); with explain, one line of score components under each."""
    if not rows:
        note("no matches")
        return
    if all(row.get("weak") for row in rows):
        note("no strong match; closest:")
    terminal = is_terminal()
    for rank, row in enumerate(rows, 1):
        e, score = row["entry"], row["score"]
        where = f"({row['layer']}) " if "layer" in row else ""  # only when several layers
        if terminal:
            from rich.text import Text

            weak = " (weak)" if row.get("weak") else ""
            line = Text(f"{rank:>2}. ", style="bold") + Text(f"{score:.3f}{weak} ", style="green")
            line += _text(f"{e['id']} ", "cyan") + _text(f"[{e['type']}] ", "magenta")
            line += _text(where, "green") + _text(_one_line(e["text"]))
            _console().print(line)
        else:  # a pipe: the whole text, further lines of a multi-line entry indented
            first, *more = e["text"].split("\n")
            weak = " (weak)" if row.get("weak") else ""
            _raw(f"{rank}. {score:.3f}{weak} {e['id']} [{e['type']}] {where}{first}")
            for text_line in more:
                _raw(f"      {text_line}")
        if explain:
            parts = "  ".join(
                f"{k}={v:.0f}" if k == "accesses" else f"{k}={v:.3f}"
                for k, v in row["components"].items()
            )
            if "layer" in row:
                parts = f"layer={row['layer']}  {parts}"
            info(f"      {parts}")


def decisions(found: Sequence[Any], dry_run: bool) -> None:
    """Extract's decisions, one line each (`extract`, a conversation's import)."""
    if not found:
        info("no explicit statements to remember")
    for d in found:
        layer = f"({d.layer}) " if getattr(d, "layer", None) else ""  # several layers read
        line = f"{d.action:6} {d.entry_id or '-':9} [{d.candidate.type}] {layer}{d.candidate.text}"
        info(line + (f"  ({d.reason})" if d.action == "SKIP" else ""))
    if dry_run:
        note("dry run: nothing was written")
