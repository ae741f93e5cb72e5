"""The files over time: history, undo, doctor."""

from __future__ import annotations

from typing import Any

import typer

from memcli.core.errors import ExitCode
from memcli.surfaces import operations
from memcli.surfaces.cli import complete, render
from memcli.surfaces.cli.base import (
    JsonOpt,
    NoPagerOpt,
    app,
    confirmed,
    memory,
)


@app.command()
def history(
    entry_id: str | None = typer.Argument(
        None, metavar="ID", help="Only this entry's changes.", autocompletion=complete.ids
    ),
    file: str | None = typer.Option(
        None, "--file", "-f", metavar="FILE", help="Only this file (memory.md, …)."
    ),
    removed: bool = typer.Option(
        False, "--removed", help="Entries in no file now whose text the history holds."
    ),
    limit: int = typer.Option(
        20, "--limit", "-n", min=1, metavar="N", help="At most this many versions (default 20)."
    ),
    no_pager: bool = NoPagerOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Past versions of the files (memcli's writes and changes made by others)."""
    mem = memory()
    if removed:
        items = mem.removed()
        if json_out:
            render.emit_json({"removed": items})
            return
        with render.paged(not no_pager):
            _removed_lines(items)
        return
    found = mem.history(entry_id, file=file, limit=limit)
    damage = mem.history_damage()  # versions left out: damaged, not pruned
    if json_out:
        render.emit_json({"versions": [v.to_dict() for v in found], "damaged": damage})
        return
    with render.paged(not no_pager):
        _version_lines(found, entry_id)
    for line in damage:
        render.error(f"a damaged history object, its versions left out: {line}")


def _removed_lines(items: list[dict[str, Any]]) -> None:
    from memcli.services.recovery import when

    if not items:
        render.note("no entry is missing from the files: the history holds none that left")
    for item in items:
        what = _HOW.get(item.get("kind", ""), "removed")
        render.info(f"{item['id']}  {item['file']}  {what} {when(item['t'])}: {item['text']}")
    if items:
        render.note("`memcli restore ID` brings one back")


def _show(report: dict[str, Any], tag: str, own: bool) -> None:
    """The lines of one layer's doctor report, each starting with `tag`."""
    cli = "memcli" if own else f"memcli -w {report['workspace']}"  # its hints run there
    for check in report["checks"]:
        render.info(f"{tag}{check['name']}: {check['detail']}")
    for problem in report["problems"]:
        render.info(f"{tag}problem: {problem}")
    for dup in report["duplicate_ids"]:
        render.info(f"{tag}duplicate: {dup}")
    for both in report["in_both"]:
        render.info(f"{tag}in two places: {both}")
    for item in report["removed_entries"]:
        render.info(
            f"{tag}{_HOW.get(item['kind'], 'removed')}: {item['id']} ({item['file']}): "
            f"{item['text']} — `{cli} restore {item['id']}` brings it back"
        )
    if report["deleted_entries"]:
        render.info(
            f"{tag}{len(report['deleted_entries'])} entries deleted by hand or undone are "
            f"kept in the history: `{cli} history --removed` lists them"
        )
    for conflict in report["merge_conflicts"]:
        render.info(f"{tag}merge conflict: {conflict}")
    for item in report["merged_late_writes"]:
        render.info(f"{tag}merged back bytes an editor wrote late into {item}")
    for item in report.get("late_writes", ()):
        render.info(
            f"{tag}an editor wrote bytes late into {item}: "
            f"`{cli} doctor` merges them back"
        )
    if report.get("own_ok", report["ok"]):  # the workspace's own, whatever its layers
        render.info(f"{tag}{report['workspace']}: ok")
    else:
        render.error(f"{tag}{report['workspace']}: needs attention (the problems above)")


_HOW = {
    "deleted": "deleted by hand",
    "removed": "removed by a stale editor save",
    "reverted": "edit reverted by a stale editor save",
    "undone": "taken back by undo",
    "lost": "lost by an interrupted move",
}


def _version_lines(found: list[Any], entry_id: str | None) -> None:
    from memcli.services.recovery import when

    if not found:
        render.note("no versions in the history" + (f" change {entry_id}" if entry_id else ""))
    for v in found:
        who = f"memcli {v.op}" if v.source == "memcli" else v.source
        if entry_id:
            text = v.text if v.text is not None else "(removed)"
            render.info(f"{when(v.t)}  {v.file}  {who}: {text}")
        else:
            render.info(
                f"{when(v.t)}  {v.file}  {who}  +{len(v.added)} ~{len(v.changed)} "
                f"-{len(v.removed)}  {v.sha[:10]}"
            )


@app.command()
def undo(
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change, write nothing."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Apply without asking."),
    json_out: bool = JsonOpt,
) -> None:
    """Take back the last change: memcli's last operation or a save by hand (changes
    made since are kept)."""
    from memcli.services.recovery import when

    mem = memory()
    plan = mem.plan_undo()
    if not json_out:
        import difflib

        for name, (before, after) in plan.files.items():
            render.diff(
                "".join(
                    difflib.unified_diff(
                        before.splitlines(keepends=True),
                        after.splitlines(keepends=True),
                        f"a/{name}",
                        f"b/{name}",
                    )
                )
            )
        for op in plan.passed:
            render.note(
                f"passed over {op['op']} of {when(op['t'])}: its changes are no longer in "
                "the files"
            )
        render.info(f"undo {plan.op} of {when(plan.t)} ({len(plan.files)} file(s))")
        for entry_id in plan.kept:
            render.note(f"{entry_id} stays as it reads now (`memcli history {entry_id}`)")
        if plan.conflicts:
            render.note(f"{plan.conflicts} place(s) changed since: both versions kept")
    if dry_run:
        if json_out:
            render.emit_json({**plan.to_dict(), "applied": False})
        else:
            render.note("dry run: nothing was written")
        return
    if not confirmed(yes, json_out, "undo", "apply?"):
        return
    mem.undo(plan)
    if json_out:
        render.emit_json({**plan.to_dict(), "applied": True})
    else:
        render.info(f"undid {plan.op}")


@app.command()
def doctor(json_out: bool = JsonOpt) -> None:
    """Check the workspace: damaged entries, duplicate ids, entries an editor's save
    removed, merge conflicts, editor bytes to merge back; the model, its ONNX export, the
    index, the watcher's socket, the git merge driver; and each other layer it reads
    (its files, index, trust), naming the layer. Exit 1 when something needs attention."""
    from memcli.surfaces.daemon.service import watcher_check

    mem = memory()
    report = operations.doctor(mem, extra=[watcher_check(mem.root)])
    if json_out and report["ok"]:
        render.emit_json(report)
    elif json_out:
        message = "the workspace needs attention: see the report's problems"
        render.emit_failure({"code": "unhealthy", "message": message}, report)
    else:  # while several layers are read, each line names its layer
        for one in [report, *report.get("layers", ())]:
            _show(one, f"({one['layer']}) " if "layer" in one else "", one is report)
        sick = [one["layer"] for one in report.get("layers", ()) if not one["ok"]]
        if sick and not report["ok"]:  # which layers the exit code is about
            here = [] if report["own_ok"] else [report["layer"]]
            render.error(f"needs attention: the {', '.join(here + sick)} layer(s)")
    if not report["ok"]:
        raise typer.Exit(ExitCode.ERROR)
