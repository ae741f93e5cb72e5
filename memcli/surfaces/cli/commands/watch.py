"""`memcli watch`: the watcher in the foreground or background, its status, its service file."""

from __future__ import annotations

import time
from typing import Any

import typer

from memcli.core.errors import MemcliError
from memcli.surfaces.cli import progress, render
from memcli.surfaces.cli.base import (
    JsonOpt,
    app,
    env,
)

#: what to do when another watcher serves the workspace
_ANOTHER_HINT = (
    "`memcli watch --status` shows it; `memcli watch --stop` stops it (search and inject "
    "already use it)"
)


@app.command()
def watch(
    status: bool = typer.Option(False, "--status", help="Ask a running watcher how it is."),
    background: bool = typer.Option(
        False, "--background", help="Start it as a process of its own (log in .memcli/)."
    ),
    stop: bool = typer.Option(False, "--stop", help="Stop the watcher of this workspace."),
    install_service: bool = typer.Option(
        False, "--install-service", help="Write a systemd user unit / launchd agent for it."
    ),
    uninstall_service: bool = typer.Option(
        False, "--uninstall-service", help="Remove the file --install-service wrote."
    ),
    idle_exit: float | None = typer.Option(
        None,
        "--idle-exit",
        min=0.0,
        metavar="MINUTES",
        help="Leave after this many minutes without a request or a change (the watcher "
        "the agents' hooks start: [watch] idle_exit_minutes).",
    ),
    json_out: bool = JsonOpt,
) -> None:
    """Keep the index current while files change, and answer search/inject/get fast."""
    import signal

    from memcli.surfaces.daemon.service import (
        WatchService,
        query_status,
        start_background,
        stop_running,
    )

    if install_service or uninstall_service:
        from memcli.surfaces.daemon.unitfile import (
            platform_kind,
            service_file,
            start_command,
            stop_command,
        )

        kind = platform_kind()
        path, text = service_file(env().root(), kind)
        if uninstall_service:
            existed = path.exists()
            if existed:
                path.unlink()
            data = {"file": str(path), "removed": existed, "run_first": stop_command(path, kind)}
            message = (
                f"removed {path} (run `{stop_command(path, kind)}` first if it runs)"
                if existed
                else f"{path}: not installed"
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            from memcli.store.files import atomic_write

            atomic_write(path, text)
            data = {"file": str(path), "start": start_command(path, kind)}
            message = f"wrote {path}; start it with: {start_command(path, kind)}"
        if json_out:
            render.emit_json(data)
        else:
            render.info(message)
        return
    if background or stop:
        root = env().memory().root
        try:
            if stop:
                pid = stop_running(root)
                data: dict[str, Any] = {"stopped": pid}
                message = f"stopped memcli watch (pid {pid})" if pid else "none was running"
            elif (running := query_status(root)) is not None:  # idempotent: it runs
                data = {**running, "already": True}
                message = f"memcli watch already runs for {root} (pid {running.get('pid')})"
            else:
                with progress.model_steps() as report:  # the one-time ONNX export, shown
                    env().memory().runtime.prepare_model(report)
                data = start_background(root)
                message = f"memcli watch runs as pid {data['pid']}; its log: {data['log']}"
        except RuntimeError as exc:
            raise MemcliError(str(exc), hint=_ANOTHER_HINT) from None
        if json_out:
            render.emit_json(data)
        else:
            render.info(message)
        return
    if status:
        root = env().memory().root
        info = query_status(root)
        if info is None:
            raise MemcliError(
                f"no memcli watch is running for {root}",
                hint="`memcli watch --background` starts one",
            )
        if json_out:
            render.emit_json(info)
        else:
            render.key_values(info.items())
        return
    idle = None if idle_exit is None else idle_exit * 60
    service = WatchService(env().workspace, log=render.pinned_info(err=json_out), idle_exit_s=idle)

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, terminate)  # also when started with SIGINT ignored (`cmd &`)
    try:
        service.start()
    except RuntimeError as exc:
        raise MemcliError(str(exc), hint=_ANOTHER_HINT) from None
    try:
        while True:  # short naps: a signal the kernel hands to another thread is only
            time.sleep(0.5)  # acted on once this (main) thread runs again
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
    if json_out:  # its log went to stderr
        render.emit_json({"workspace": str(service.root), "stopped": True})
    else:
        render.info("stopped; the index is consistent with the files")
