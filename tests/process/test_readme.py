"""The README's "first ten minutes" is what memcli prints: each `$ command` of its console
blocks runs, in order, in a fresh home directory with the real model, and prints the
lines shown under it (ids, times, pids and scores aside). The docs' getting-started page
shows the same blocks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.env import ROOT

#: the section of README.md whose console blocks run
SECTION = "## The first ten minutes"
#: the home directory as the README writes it
HOME = "/home/you"
#: what differs from run to run, and what stands for it
VOLATILE = [
    (re.compile(r"\b[a-z][0-9a-f]{12,16}\b"), "<id>"),  # minted ids, ids derived from text
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\dZ?"), "<time>"),
    (re.compile(r"\bpid \d+"), "pid <n>"),
    (re.compile(r"^(\d+)\. \d\.\d{3} "), r"\1. <score> "),  # search's score (pipe format)
]
#: lines only the very first run on a machine prints (the model's one-time preparation)
FIRST_RUN_ONLY = "preparing the embedding model, once"


def console_blocks(text: str, section: str) -> list[str]:
    """The ```console blocks of `section` (up to the next `## ` heading) in `text`."""
    lines = text[text.index(section) + len(section) :].splitlines(keepends=True)
    body, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            break
        body.append(line)
    return re.findall(r"```console\n(.*?)```", "".join(body), flags=re.DOTALL)


def steps(block: str) -> list[tuple[str, list[str]]]:
    """(command, the lines it prints) of each `$ ` line of a console block."""
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def normal(lines: list[str]) -> list[str]:
    kept = []
    for line in lines:
        if line.startswith(FIRST_RUN_ONLY):
            continue
        for pattern, stand_in in VOLATILE:
            line = pattern.sub(stand_in, line)
        kept.append(line.rstrip())
    return kept


def test_steps_and_normalising() -> None:
    block = "$ memcli add x\nadded m0123456789ab to memory.md (fact)\n$ echo\n$ memcli search x\n"
    assert steps(block) == [
        ("memcli add x", ["added m0123456789ab to memory.md (fact)"]),
        ("echo", []),
        ("memcli search x", []),
    ]
    assert normal(["1. 0.724 l95342f82f05c6f09 [lesson] Run", "runs as pid 2837",
                   "undo add of 2026-11-26 13:03:26 (1 file(s))",
                   "preparing the embedding model, once (1/4): loading"]) == [
        "1. <score> <id> [lesson] Run", "runs as pid <n>", "undo add of <time> (1 file(s))"
    ]  # fmt: skip


def test_getting_started_shows_the_readme_blocks() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    blocks = console_blocks(readme, SECTION)
    assert len(blocks) >= 2
    assert console_blocks(page, SECTION) == blocks


@pytest.mark.slow
def test_the_first_ten_minutes_print_what_the_readme_shows(tmp_path: Path, exported) -> None:
    home = tmp_path / "home"
    bin_dir = tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    shim = bin_dir / "memcli"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memcli "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMCLI_", "XDG_DATA", "XDG_CONFIG"))}  # fmt: skip
    env.update(HOME=str(home), PATH=f"{bin_dir}:{env['PATH']}", PYTHONPATH=str(ROOT))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    try:
        for block in console_blocks(readme, SECTION):
            for command, shown in steps(block):
                done = subprocess.run(
                    ["bash", "-c", command + " 2>&1"],
                    cwd=home, env=env, capture_output=True, text=True, timeout=180,
                )  # fmt: skip
                printed = done.stdout.replace(str(home), HOME).splitlines()
                assert done.returncode == 0, f"$ {command}\n{done.stdout}"
                assert normal(printed) == normal(shown), f"$ {command}"
    finally:
        subprocess.run(["bash", "-c", "memcli watch --stop"], cwd=home, env=env,
                       capture_output=True, timeout=60)  # fmt: skip
