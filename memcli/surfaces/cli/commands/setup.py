"""Settings and wiring: config, git, the merge driver, mcp, hook, install / uninstall, trust."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from memcli.core.errors import MemcliError
from memcli.core.names import CONFIG_FILE
from memcli.surfaces.cli import progress, render
from memcli.surfaces.cli.base import (
    HelpGroup,
    JsonOpt,
    NoPagerOpt,
    app,
    env,
    memory,
    usage_error,
)

if TYPE_CHECKING:
    from memcli.surfaces.install import Plan

config_app = typer.Typer(
    cls=HelpGroup,
    help="The settings in effect (alone: `config list`); edit memcli.toml or your config.toml.",
    invoke_without_command=True,
)
app.add_typer(config_app, name="config")


@config_app.callback()
def config_main(ctx: typer.Context) -> None:
    """`memcli config` alone lists the settings in effect, as `memcli config list` does."""
    if ctx.invoked_subcommand is None:
        config_list(no_pager=False, json_out=False)


@config_app.command("list")
def config_list(no_pager: bool = NoPagerOpt, json_out: bool = JsonOpt) -> None:
    """Every setting with the value in effect (defaults, config files, MEMCLI_*)."""
    from memcli.services.configedit import effective

    values = effective(env().settings)
    if json_out:
        render.emit_json(values)
        return
    with render.paged(not no_pager):
        for key, value in values.items():
            render.info(f"{key} = {value!r}" if isinstance(value, str) else f"{key} = {value}")


@config_app.command("get")
def config_get(
    key: str = typer.Argument(..., metavar="SECTION.KEY"), json_out: bool = JsonOpt
) -> None:
    """One setting's value in effect."""
    from memcli.services.configedit import effective, split_key

    split_key(key)
    value = effective(env().settings)[key]
    if json_out:
        render.emit_json({"key": key, "value": value})
    else:
        render.info(str(value).lower() if isinstance(value, bool) else str(value))


@config_app.command("set")
def config_set(
    key: str = typer.Argument(..., metavar="SECTION.KEY"),
    value: str = typer.Argument(..., metavar="VALUE", help="A TOML value: 10, 0.5, true, text."),
    user: bool = typer.Option(
        False, "--user", help="In your own config.toml (every workspace), not memcli.toml."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Write one setting (comments in the file are kept); checked before it is written.
    `index.model` also gets the model (a hub name is downloaded), prepares it and
    rebuilds the index with it."""
    from memcli.services.configedit import split_key, value_for, with_value

    section, name = split_key(key)
    typed = value_for(key, value)
    path, old = _config_file(user)
    _write_config(path, with_value(old, section, name, typed, str(path)), user)
    shown = str(typed).lower() if isinstance(typed, bool) else str(typed)
    rebuilt = _switch_model(None if user else typed) if key == MODEL_KEY else None
    if json_out:
        render.emit_json(
            {"file": str(path), "key": key, "value": typed}
            | ({"index": rebuilt.to_dict()} if rebuilt is not None else {})
        )
    else:
        render.info(f"{path}: {key} = {shown}")
        _said_rebuilt(rebuilt)


@config_app.command("unset")
def config_unset(
    key: str = typer.Argument(..., metavar="SECTION.KEY"),
    user: bool = typer.Option(False, "--user", help="From your own config.toml, not memcli.toml."),
    json_out: bool = JsonOpt,
) -> None:
    """Remove one setting from the file (it falls back to the user's config or the
    default); comments are kept. `index.model` rebuilds the index with the model that
    applies then."""
    from memcli.services.configedit import split_key, without_key

    section, name = split_key(key)
    path, old = _config_file(user)
    new = without_key(old, section, name, str(path))
    if new is not None:
        _write_config(path, new, user)
    rebuilt = _switch_model(None) if key == MODEL_KEY and new is not None else None
    if json_out:
        render.emit_json(
            {"file": str(path), "key": key, "removed": new is not None}
            | ({"index": rebuilt.to_dict()} if rebuilt is not None else {})
        )
    elif new is None:
        render.info(f"{path}: {key} is not set there; nothing to do")
    else:
        render.info(f"{path}: {key} removed")
        _said_rebuilt(rebuilt)


#: the setting whose change fetches and prepares a model and rebuilds the index
MODEL_KEY = "index.model"


def _switch_model(wanted: str | None) -> Any:
    """After `index.model` changed: the model it now names fetched, prepared (each step
    on stderr) and the index rebuilt with it (memcli.services.models.switch). When the
    workspace's file was set to `wanted` and that does not apply here (the file waits
    for `memcli trust`, or MEMCLI_INDEX_MODEL overrides it), that is said on stderr and
    nothing else is done (None)."""
    from memcli.services import models
    from memcli.services.memory import Memory

    mem = Memory(env().root())  # the settings as they are now
    if wanted is not None and mem.settings.index.model != wanted:
        render.note(
            f"{MODEL_KEY} does not apply to {mem.root} yet (its memcli.toml sets other "
            "settings that wait for your approval, or MEMCLI_INDEX_MODEL overrides it): "
            "`memcli trust` approves the file, then `memcli index --rebuild`"
        )
        return None
    with progress.model_steps() as steps:
        return models.switch(mem, steps, render.note, progress.progress_callback("embedding"))


def _said_rebuilt(report: Any) -> None:
    if report is not None:
        render.info(f"index rebuilt with the new model: {report.total} entries")


def _config_file(user: bool) -> tuple[Path, str]:
    """The settings file `config set/unset` edits, and its text ("" when there is none)."""
    from memcli.store.atomic import decode_text
    from memcli.store.links import read_settings
    from memcli.store.trust import user_config_file

    root = None if user else env().root()
    path = user_config_file() if root is None else root / CONFIG_FILE
    try:  # bounded, by the link rule
        return path, decode_text(read_settings(path, root), path)
    except FileNotFoundError:
        return path, ""


def _write_config(path: Path, new: str, user: bool) -> None:
    """Write a settings file after checking the settings load with it."""
    from memcli.services.configedit import check
    from memcli.store.files import atomic_write

    root = env().root()
    check(root, None if user else new, new if user else None)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, new)
    if not user:
        import tomllib

        from memcli.store import trust

        table = tomllib.loads(new)
        waiting = trust.withheld(table)
        if waiting == [("index", "model")] and not trust.is_trusted(root):
            # the only setting that waits for approval is the model the person just named
            trust.trust(root)
            render.note("memcli.toml approved for its model setting (you set it)")
        elif waiting and not trust.is_trusted(root):
            render.note("memcli.toml changed: `memcli trust` approves its LLM and model settings")


@app.command(name="merge-driver", hidden=True)
def merge_driver(
    base: Path = typer.Argument(..., help="%O: the common ancestor's version."),
    ours: Path = typer.Argument(..., help="%A: our version; the result is written here."),
    theirs: Path = typer.Argument(..., help="%B: their version."),
    pathname: str | None = typer.Argument(None, help="%P: the file's path in the repo."),
) -> None:
    """The git merge driver `memcli git setup` registers (merges entries by id)."""
    from memcli.store.gitmerge import run_driver

    raise typer.Exit(run_driver(base, ours, theirs, pathname))


git_app = typer.Typer(
    cls=HelpGroup, help="Keep a workspace in git: entry-aware merges.", no_args_is_help=True
)
app.add_typer(git_app, name="git")


@git_app.command("setup")
def git_setup(
    path: str | None = typer.Argument(
        None, metavar="PATH", help="The workspace (default: the current one)."
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Register the entry-aware merge driver: .gitattributes, git config, post-merge hook."""
    from memcli.store.gitmerge import setup

    root = env().root(path)
    done = setup(root)
    if json_out:
        render.emit_json({"workspace": str(root), "done": done})
        return
    for line in done:
        render.info(line)
    if not done:
        render.info(f"{root}: already set up")


@app.command()
def mcp(
    http: str | None = typer.Option(
        None,
        "--http",
        metavar="HOST:PORT",
        help="Serve over streamable HTTP at /mcp instead of stdio (host 127.0.0.1 "
        "unless given). A bearer token is required: MEMCLI_MCP_TOKEN or --token-file.",
    ),
    token_file: Path | None = typer.Option(
        None,
        "--token-file",
        metavar="FILE",
        help="The token (one line), or [[grant]] tables naming each token's workspaces.",
    ),
) -> None:
    """Serve memory to MCP hosts over stdio, or over HTTP with --http (search, get, add,
    inject, forget)."""
    if http is None:
        if token_file is not None:
            usage_error("--token-file: only with --http (stdio needs no token)")
        from memcli.surfaces.mcp_stdio import serve
        serve(env().workspace)
        return
    from memcli.surfaces.mcp_http import serve_http

    serve_http(memory().root, http, token_file)


@app.command()
def hook(
    event: str = typer.Argument(
        ..., metavar="EVENT", help="session-start, user-prompt-submit, pre-compact or stop."
    ),
    max_tokens: int | None = typer.Option(
        None,
        "--max-tokens",
        metavar="N",
        help="Budget of the block (1500 at session start, 600 a prompt).",
    ),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="SECONDS",
        help="Seconds before giving up (8 for inject, 50 for extract).",
    ),
) -> None:
    """Answer an agent host's hook (Claude Code: hook JSON on stdin). Session start and
    each prompt get a memory block; pre-compact and stop remember what the transcript
    says. Never blocks a prompt: a failure is one line on stderr and exit 0."""
    from memcli.surfaces import hooks

    args = [event]
    if max_tokens is not None:
        args += ["--max-tokens", str(max_tokens)]
    if timeout is not None:
        args += ["--timeout", str(timeout)]
    raise typer.Exit(hooks.run(env().workspace, args))


ScopeProjectOpt = typer.Option(False, "--project", help="This project's settings files.")
ScopeUserOpt = typer.Option(False, "--user", help="Your own settings files (the default).")
DryRunOpt = typer.Option(False, "--dry-run", help="Show the changes as a diff, write nothing.")


def _install(
    host: str, project: bool, user: bool, dry_run: bool, json_out: bool, remove: bool
) -> None:
    from memcli.surfaces import install as installer

    if project and user:
        usage_error("--project, --user: give one of them, not both")
    plan = installer.plan(
        host, "project" if project else "user", remove=remove, workspace=env().workspace
    )
    written = [] if dry_run else installer.apply(plan)
    stopped: list[tuple[str, int]] = []
    if remove and not dry_run:  # the watchers the hooks and `memcli mcp` started
        from memcli.surfaces.daemon.autostart import stop_started

        stopped = stop_started()
    if not json_out:  # what was written first, then the preparation's steps
        _show_plan(plan, dry_run, remove)
        for root, pid in stopped:
            render.info(f"stopped memcli watch (pid {pid}) of {root}, started for an agent")
        env().stdout.flush()  # seen before the wait, in a pipe too
    if not (dry_run or remove):
        _ready_for_hooks()
    if json_out:
        data = {**plan.to_dict(), "written": [str(p) for p in written]}
        if remove:
            data["stopped"] = [{"workspace": root, "pid": pid} for root, pid in stopped]
        render.emit_json(data)


def _show_plan(plan: Plan, dry_run: bool, remove: bool) -> None:
    """What install or uninstall wrote (or would write, with dry_run), and its notes."""
    for change in plan.changes:
        if dry_run and change.changed:
            render.diff(change.diff())
        for line in change.did:
            render.info(f"{change.path}: {would(line) if dry_run else line}")
        if not change.did:
            state_ = "nothing of memcli's there" if remove else "already set up"
            render.info(f"{change.path}: {state_}")
    for note in plan.notes:
        render.note(note)
    if dry_run:
        render.note("dry run: nothing was written")


#: how a dry run says what install or uninstall did (memcli.surfaces.install's verbs)
WOULD = {"added": "would add", "removed": "would remove", "updated": "would update"}


def would(line: str) -> str:
    """`line` of what a change did, as a dry run says it ("would add …", not "added …")."""
    verb, _, rest = line.partition(" ")
    return f"{WOULD[verb]} {rest}" if verb in WOULD else f"would have: {line}"


def _ready_for_hooks() -> None:
    """Do now what the first hook would otherwise wait for: the one-time ONNX export
    and, when the workspace exists, its index (progress on stderr)."""
    import contextlib

    from memcli.core.errors import WorkspaceError

    mem = memory()
    with progress.model_steps() as report:
        mem.runtime.prepare_model(report)
    # no workspace yet: `memcli init` makes one (and its first search indexes it)
    with contextlib.suppress(WorkspaceError):
        mem.index(progress=progress.progress_callback("indexing"))


@app.command()
def install(
    host: str = typer.Argument(..., metavar="HOST", help="claude-code, cursor or codex."),
    project: bool = ScopeProjectOpt,
    user: bool = ScopeUserOpt,
    dry_run: bool = DryRunOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Wire memcli into an agent host: Claude Code hooks (+ MCP with --project), the MCP
    server for Cursor and Codex. Merges into the settings files; running it again
    changes nothing."""
    _install(host, project, user, dry_run, json_out, remove=False)


@app.command()
def uninstall(
    host: str = typer.Argument(..., metavar="HOST", help="claude-code, cursor or codex."),
    project: bool = ScopeProjectOpt,
    user: bool = ScopeUserOpt,
    dry_run: bool = DryRunOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Remove what `memcli install HOST` added (and nothing else)."""
    _install(host, project, user, dry_run, json_out, remove=True)


@app.command(name="trust")
def trust_(
    path: str | None = typer.Argument(
        None, metavar="PATH", help="The workspace (default: the current one)."
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Withdraw the approval."),
    json_out: bool = JsonOpt,
) -> None:
    """Approve this workspace's memcli.toml as it is now: its [llm] endpoint, API key
    variable and [index] model apply (until the file changes)."""
    from memcli.store import trust

    root = env().root(path)
    config = root / CONFIG_FILE
    if revoke:
        done = trust.revoke(root)
        if json_out:
            render.emit_json({"workspace": str(root), "trusted": False, "revoked": done})
        else:
            render.info(f"{root}: " + ("approval withdrawn" if done else "was not trusted"))
        return
    if not root.is_dir():
        raise MemcliError(f"{root}: no such directory", hint="`memcli init PATH` creates it")
    digest = trust.trust(root)
    if json_out:
        render.emit_json({"workspace": str(root), "trusted": True, "sha256": digest})
        return
    what = f"{config} (sha256 {digest[:12]})" if config.is_file() else f"{root} (no memcli.toml)"
    render.info(f"trusted {what}; a changed memcli.toml needs `memcli trust` again")
