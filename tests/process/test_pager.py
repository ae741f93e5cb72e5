"""Long output for a person goes through a pager (issue 20): on a terminal (a real
pseudo-terminal here) when the output is taller than it, never in a pipe, never with
--no-pager or --json, and $MEMCLI_PAGER before $PAGER."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest


def pager_script(tmp_path: Path) -> tuple[str, Path]:
    """A pager that keeps what it was given in a file (and the terminal it ran on)."""
    kept = tmp_path / "paged.txt"
    script = tmp_path / "pager.py"
    script.write_text(
        "import os, sys\n"
        "data = sys.stdin.read()\n"
        f"open({str(kept)!r}, 'w').write(str(os.isatty(1)) + '\\n' + data)\n"
    )
    return f"{sys.executable} {script}", kept


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HF_HUB_OFFLINE": "1",
        "MEMCLI_NO_DAEMON": "1",
        "TERM": "xterm",
    }
    env.update(extra)
    return env


def on_terminal(
    args: list[str], env: dict[str, str], rows: int = 10, cols: int = 100
) -> tuple[int, str]:
    """Run `memcli ARGS` with stdout and stdin on a pseudo-terminal of rows x cols:
    (exit code, what reached the terminal)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "memcli", *args],
        stdin=child,
        stdout=child,
        stderr=subprocess.PIPE,
        env=env,
        close_fds=True,
    )
    os.close(child)
    shown = b""
    deadline = time.time() + 120
    while time.time() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=30)
    os.close(main)
    return code, shown.decode("utf-8", "replace")


@pytest.mark.slow  # seconds: the whole suite runs it, the fast tier stays under a minute
def test_a_long_listing_on_a_terminal_goes_through_the_pager(
    tmp_path: Path, workspace: Path
) -> None:
    pager, kept = pager_script(tmp_path)
    env = env_for(tmp_path, MEMCLI_PAGER=pager, PAGER="false")
    code, shown = on_terminal(["-w", str(workspace), "list"], env)
    assert code == 0, shown
    on_tty, _, text = kept.read_text().partition("\n")
    assert on_tty == "True"  # the pager itself runs on the terminal
    assert "m8f3a2c1" in text and "Prefers pytest" in text
    assert "m8f3a2c1" not in shown  # the listing reached the terminal only through it
    kept.unlink()
    for args in (["list", "--no-pager"], ["list", "--json"], ["get", "m8f3a2c1", "--no-pager"]):
        code, shown = on_terminal(["-w", str(workspace), *args], env)
        assert code == 0 and "m8f3a2c1" in shown and not kept.exists(), args
    code, shown = on_terminal(["-w", str(workspace), "get", "m8f3a2c1"], env, rows=60)
    assert code == 0 and "m8f3a2c1" in shown and not kept.exists()  # fits: no pager
    code, _ = on_terminal(["-w", str(workspace), "history"], env, rows=2)
    assert code == 0  # (a workspace without history has nothing to page)


@pytest.mark.slow  # a pty and a child per case: the whole suite runs it
@pytest.mark.parametrize("variable", ["MEMCLI_PAGER", "PAGER"])
def test_piped_output_never_starts_a_pager(
    tmp_path: Path, workspace: Path, variable: str
) -> None:
    pager, kept = pager_script(tmp_path)
    env = env_for(tmp_path, **{variable: pager})
    for args in (["list"], ["export", "--format", "markdown"], ["config", "list"]):
        done = subprocess.run(
            [sys.executable, "-m", "memcli", "-w", str(workspace), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("\n") > 10 and not kept.exists(), args
    code, _ = on_terminal(["-w", str(workspace), "list"], env)  # $PAGER alone is used too
    assert code == 0 and kept.exists()


@pytest.mark.slow
def test_without_a_usable_pager_the_output_is_printed(tmp_path: Path, workspace: Path) -> None:
    for pager in ("cat", "", "/nonexistent/pager"):
        code, shown = on_terminal(
            ["-w", str(workspace), "list"], env_for(tmp_path, MEMCLI_PAGER=pager)
        )
        assert code == 0 and "m8f3a2c1" in shown, pager


@pytest.mark.slow
def test_search_pages_on_the_typer_free_path_too(tmp_path: Path, workspace: Path) -> None:
    """`search` runs without Typer (memcli.surfaces.cli.quick) and pages the same way."""
    pager, kept = pager_script(tmp_path)
    env = env_for(tmp_path, MEMCLI_PAGER=pager)
    args = ["-w", str(workspace), "search", "python tests", "-n", "20"]
    code, shown = on_terminal(args, env, rows=5)
    assert code == 0 and "Prefers pytest" in kept.read_text() and "Prefers pytest" not in shown
    kept.unlink()
    code, shown = on_terminal([*args, "--no-pager"], env, rows=5)
    assert code == 0 and "Prefers pytest" in shown and not kept.exists()
