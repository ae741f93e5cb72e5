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
    metavar="[ID[@FINGERPRINT]]...",
    help="Proposals to review, as `memcli review` lists them: ID confirms the version it "
    "showed, ID@FINGERPRINT the version with that fingerprint.",
    autocompletion=complete.ids,
)
AllOpt = typer.Option(
    False, "--all", help="Every proposal the last `memcli review` listed (nothing newer)."
)


@review_app.callback()
def review_list(ctx: typer.Context, json_out: bool = JsonOpt) -> None:
    """List what waits: each proposal as ID@FINGERPRINT with what it asks for (a confirm
    then applies exactly that version)."""
    if ctx.invoked_subcommand is not None:
        return
    from memcli.services.review import as_dict, show
    from memcli.surfaces import operations

    found = [
        (name, p) for name, mem in operations.review_layers(memory()) for p in show(mem.runtime)
    ]
    if json_out:
        rows = [{**as_dict(p), **({"layer": name} if name else {})} for name, p in found]
        render.emit_json({"waiting": rows})
        return
    for name, p in found:
        entry = p.entry
        where = f"({name}) " if name else ""
        render.info(
            f"{entry.id}@{p.fingerprint}  {where}{entry.file}:{entry.line}  "
            f"asks for {p.asked.describe()}"
        )
        render.info(f"    {entry.text.splitlines()[0]}")
        if p.target is not None:
            render.info(f"    yours now: {p.target.text.splitlines()[0]}")
    render.note(
        f"{len(found)} waiting"
        + (
            "; `memcli review confirm ID` confirms the version shown here, `reject ID` "
            "says no"
            if found
            else ""
        )
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
    for raw in ids:
        holder = operations.holder(mem, raw.partition("@")[0])  # the layer holding it
        groups.setdefault(str(holder.root), (holder.runtime, []))[1].append(raw)
    return list(groups.values())


@review_app.command("confirm")
def review_confirm(ids: list[str] = IdsArg, every: bool = AllOpt, json_out: bool = JsonOpt) -> None:
    """Apply exactly the version `memcli review` showed (or ID@FINGERPRINT names) and make
    it yours: its standing, its text in place of your entry it rewrites, or the archive
    it asks for. A proposal that changed since is refused, naming what changed."""
    from memcli.services.review import chosen, confirm

    groups = _per_layer(ids or [], every)
    if not every:
        for rt, group in groups:
            chosen(rt, group, False)  # every layer's ids checked before the first write
    done = [d for rt, group in groups for d in confirm(rt, group, every=every)]
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
    every: bool = typer.Option(False, "--all", help="Every proposal that waits."),
    reason: str | None = typer.Option(None, "--reason", help="Why (kept in archive.md)."),
    json_out: bool = JsonOpt,
) -> None:
    """Archive what a program proposed (restorable with `memcli restore ID`; your entry a
    proposal would rewrite stays as it is); on an entry of yours, drop what the agent
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
        what = "archived" if d.archived else "kept as it was"
        render.info(f"rejected {d.entry.id} {d.entry.text.splitlines()[0]} ({what})")
    render.note(f"{len(done)} rejected")
