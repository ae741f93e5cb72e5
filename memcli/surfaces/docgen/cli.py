"""docs/reference/cli.md from the Typer app: every command, its help, options and
examples (memcli.surfaces.cli.helptext), in the panels `memcli --help` shows."""

from __future__ import annotations

from typing import Any

from memcli.surfaces.docgen.markdown import HEADER, REGENERATE, escape, paragraphs


def _option_row(param: Any, ctx: Any) -> str:
    """A parameter as `--help` shows it: its names and value, then its help."""
    record = param.get_help_record(ctx)
    if record is None:  # an argument without help
        record = (param.human_readable_name, "required" if param.required else "optional")
    return f"| `{record[0]}` | {escape(record[1])} |"


def _command_section(command: Any, path: str, parent: Any) -> list[str]:
    import click

    from memcli.surfaces.cli import helptext

    ctx = click.Context(command, info_name=path.split()[-1], parent=parent)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## memcli {path}", "", f"```text\nmemcli {path} {usage}\n```", ""]
    if command.help:
        lines += [paragraphs(command.help), ""]
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    if params:
        lines += ["| option | what it does |", "|---|---|"]
        lines += [_option_row(p, ctx) for p in params]
        lines.append("")
    row = helptext.COMMANDS.get(path)
    if row and row[1]:
        lines += ["Examples:", "", "```console"]
        lines += [f"$ {example}    # {what}" for example, what in row[1]]
        lines += ["```", ""]
    for name in getattr(command, "commands", {}):
        sub = command.commands[name]
        if not sub.hidden:
            lines += _command_section(sub, f"{path} {name}", ctx)
    return lines


def cli_page() -> str:
    """docs/reference/cli.md: every command of the Typer app, its help, options, examples."""
    import click
    import typer

    from memcli.surfaces.cli import helptext
    from memcli.surfaces.cli.app import app

    root = typer.main.get_command(app)
    ctx = click.Context(root, info_name="memcli")
    lines = [
        "# CLI reference",
        "",
        HEADER.format(cmd=REGENERATE).rstrip(),
        "",
        paragraphs(root.help or ""),
        "",
        "Global options go before the command: `memcli [OPTIONS] COMMAND [ARGS]...`.",
        "",
        "| option | what it does |",
        "|---|---|",
        *[_option_row(p, ctx) for p in root.params if not getattr(p, "hidden", False)],
        "",
    ]
    names = [n for n in root.list_commands(ctx) if not root.commands[n].hidden]
    for title in helptext.PANELS:
        listed = [n for n in names if helptext.panel(n) == title]
        lines += [f"**{title}**: " + ", ".join(f"[`{n}`](#memcli-{n})" for n in listed), ""]
    for title in (*helptext.PANELS, None):
        for name in names:
            if helptext.panel(name) == title:
                lines += _command_section(root.commands[name], name, ctx)
    return "\n".join(lines).rstrip() + "\n"
