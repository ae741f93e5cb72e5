"""Click's usage errors in memcli's one style.

Click words a bad command line as "Usage: memcli search [OPTIONS] QUERY / Try 'memcli
search --help' for help. / Error: Invalid value for '--limit' / '-n': …"; memcli's own
checks (a relative date, a type name) say "error: --since: 'soon' is not a date …".
`from_click` turns the first into the second: a UsageError naming the option (its long
name) or argument and the bad value, with a hint pointing at the command's --help, so
every usage error prints one way and exits 2 (memcli.surfaces.guard).
"""

from __future__ import annotations

from typing import Any

from memcli.core.errors import UsageError

try:  # Typer ≥ 0.25 carries its own Click
    from typer._click import exceptions as click
except ImportError:  # pragma: no cover - older Typer on Click itself
    from click import exceptions as click  # type: ignore[no-redef]


def param_name(param: Any) -> str | None:
    """How an error names a parameter: an option by its first long name (`--limit`), an
    argument by its metavar (`QUERY`)."""
    if param is None:
        return None
    if param.param_type_name == "option":
        opts = [*param.opts, *getattr(param, "secondary_opts", [])]
        names = [o for o in opts if o.startswith("--")]
        return str((names or opts)[0])
    return str(param.metavar or (param.name or "argument").upper())


def _sentence(text: str) -> str:
    """Click's sentence as a clause: first letter lowered (unless an acronym), no final
    full stop."""
    text = " ".join(text.strip().split()).removesuffix(".")
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        text = text[0].lower() + text[1:]
    return text


def from_click(exc: click.ClickException, command: str) -> UsageError:
    """The UsageError memcli reports for Click's `exc`, raised while parsing `command`'s
    arguments (`search`, `config set`; "" before a command was named)."""
    ctx = getattr(exc, "ctx", None)
    where = getattr(ctx, "command_path", None) or f"memcli {command}".strip()
    group = ctx is not None and isinstance(getattr(ctx.command, "commands", None), dict)
    hint = f"`{where} --help` lists the {'commands' if group else 'options'}"
    if isinstance(exc, click.NoSuchOption):
        message = f"{exc.option_name}: no such option"
        if exc.possibilities:
            message += f" (did you mean {exc.possibilities[0]}?)"
    elif isinstance(exc, click.MissingParameter):
        name = param_name(exc.param) or _sentence(exc.param_hint or "a parameter")  # type: ignore[arg-type]
        kind = exc.param_type or (exc.param.param_type_name if exc.param else "parameter")
        message = f"{name}: missing {kind}"
    elif isinstance(exc, click.BadParameter):
        name = param_name(exc.param) or exc.param_hint
        reason = _sentence(exc.message).removeprefix("value error, ")
        value = _bad_value(exc)
        if value is not None and repr(value) not in reason:
            reason = f"{value!r} is not valid ({reason})"
        message = f"{name}: {reason}" if name else reason
    elif isinstance(exc, click.BadOptionUsage):
        if "requires an argument" in exc.message:
            message = f"{exc.option_name}: needs a value"
        else:
            message = f"{exc.option_name}: {_sentence(exc.message)}"
    else:  # no such command, an extra argument, …
        message = _sentence(exc.message)
    return UsageError(message, hint=hint)


def _bad_value(exc: BaseException) -> Any:
    """The value a parameter refused, when the error behind it kept it (Typer checks
    values with pydantic, whose errors carry the input)."""
    errors = getattr(exc.__cause__, "errors", None)
    try:
        return errors()[0].get("input") if callable(errors) else None
    except (IndexError, TypeError, AttributeError):
        return None
