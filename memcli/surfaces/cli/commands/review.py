"""`memcli review`: what an agent wrote that waits for the person (list, confirm, reject)."""

from __future__ import annotations

from typing import Any

import typer

from memcli.surfaces.cli import complete, render
from memcli.surfaces.cli.base import HelpGroup, JsonOpt, app, memory

review_app = typer.Typer(
    cls=HelpGroup,
    help="What an agent asked for (a correction, a pin, importance ≥ 0.9, forgetting an "
    "entry of yours, its rewrite of one) that waits for you: list it, confirm it or "
    "reject it.",
    invoke_without_command=True,
)
app.add_typer(review_app, name="review")

IdsArg = typer.Argument(
    None,
    metavar="[ID]...",
    help="Entries to review (`memcli review` lists them).",
    autocompletion=complete.ids,
)
AllOpt = typer.Option(False, "--all", help="Every entry that waits.")


@review_app.callback()
def review_list(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """List what waits: each entry with what its agent asked for."""
    if ctx.invoked_subcommand is not None:
        return
    from memcli.services.review import waiting
    from memcli.surfaces import operations

    found = [
        (name, w) for name, mem in operations.review_layers(memory()) for w in waiting(mem.runtime)
    ]
    if json_out:
        rows = [{**w.to_dict(), **({"layer": name} if name else {})} for name, w in found]
        render.emit_json({"waiting": rows})
        return
    for name, w in found:
        entry, row = w.entry, w.to_dict()
        where = f"({name}) " if name else ""
        render.info(f"{entry.id}  {where}{entry.file}:{entry.line}  asks for {row['asked']}")
        render.info(f"    {entry.text.splitlines()[0]}")
        if w.was is not None:
            render.info(f"    was: {w.was.text.splitlines()[0]}")
    render.note(
        f"{len(found)} waiting" + ("; `memcli review confirm ID` or `reject ID`" if found else "")
    )


def _per_layer(ids: list[str], every: bool) -> list[tuple[Any, list[str]]]:
    """(a layer's runtime, its ids) for each layer holding one of `ids`, or every layer
    (--all); every id checked before anything is written (services.review.chosen)."""
    from memcli.services.review import chosen
    from memcli.surfaces import operations

    mem = memory()
    if every == bool(ids):
        chosen(mem.runtime, ids, every)  # both, or neither: the error says which
    if every:
        return [(m.runtime, []) for _, m in operations.review_layers(mem)]
    groups: dict[str, tuple[Any, list[str]]] = {}
    for entry_id in ids:
        holder = operations.holder(mem, entry_id)  # the layer holding it
        groups.setdefault(str(holder.root), (holder.runtime, []))[1].append(entry_id)
    for rt, group in groups.values():
        chosen(rt, group, False)
    return list(groups.values())


@review_app.command("confirm")
def review_confirm(ids: list[str] = IdsArg, every: bool = AllOpt, json_out: bool = JsonOpt) -> None:
    """Apply what the agent asked for and make the entries yours (forget: archive them)."""
    from memcli.services.review import confirm

    done = [
        d for rt, group in _per_layer(ids or [], every) for d in confirm(rt, group, every=every)
    ]
    if json_out:
        render.emit_json({"confirmed": [d.to_dict() for d in done]})
        return
    for d in done:
        entry, what = d.entry, " (archived)" if d.archived else ""
        render.info(f"confirmed {entry.id} [{entry.type}] {entry.text.splitlines()[0]}{what}")
    render.note(f"{len(done)} confirmed")


@review_app.command("reject")
def review_reject(
    ids: list[str] = IdsArg,
    every: bool = AllOpt,
    reason: str | None = typer.Option(None, "--reason", help="Why (kept in archive.md)."),
    json_out: bool = JsonOpt,
) -> None:
    """Archive what an agent wrote (restorable with `memcli restore ID`); an entry of
    yours a program rewrote gets your text back; on an entry of yours, drop what the agent
    asked and keep it as it is."""
    from memcli.services.review import reject

    done = [
        d
        for rt, group in _per_layer(ids or [], every)
        for d in reject(rt, group, every=every, reason=reason)
    ]
    if json_out:
        render.emit_json({"rejected": [d.to_dict() for d in done]})
        return
    for d in done:
        what = "archived" if d.archived else "your text back" if d.restored else "kept as it was"
        render.info(f"rejected {d.entry.id} {d.entry.text.splitlines()[0]} ({what})")
    render.note(f"{len(done)} rejected")
