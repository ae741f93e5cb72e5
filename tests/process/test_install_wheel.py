"""Installed as a tool (issue 29): the wheel built from a checkout installs into a fresh
environment, puts `memcli` on PATH there, and a new person's first commands work in a
fresh HOME. The build says nothing that is not memcli's business (no deprecation
warnings).

The fresh environment is a venv whose only extra is a path file to the test venv's
packages (memcli's dependencies, torch included, are not downloaded again); memcli
itself comes from the wheel alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.env import ROOT

pytestmark = pytest.mark.slow


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]


def test_the_wheel_installs_a_working_memcli(tmp_path: Path, exported: object) -> None:
    built = run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
        "-w", str(tmp_path / "dist"), str(ROOT),
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert "warning" not in (built.stdout + built.stderr).lower(), built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("memcli-*.whl")

    venv = tmp_path / "tool"
    assert run(sys.executable, "-m", "venv", "--without-pip", str(venv)).returncode == 0
    python = venv / "bin" / "python"
    purelib = run(
        str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ).stdout.strip()
    # the dependencies from the test venv; memcli from the wheel only
    Path(purelib, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = run(
        sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
        "--no-index", "--ignore-installed", str(wheel),
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert (venv / "bin" / "memcli").is_file()

    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],  # the session's ONNX export
        "HF_HUB_OFFLINE": "1",
        "LANG": "C.UTF-8",
    }
    setup = run("bash", "-c", "memcli init && memcli add 'Prefers pytest over unittest'",
                env=env, cwd=home)  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    found = run("bash", "-c", "memcli search pytest --json", env=env, cwd=home)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["data"]["hits"]
    assert [h["entry"]["text"] for h in hits] == ["Prefers pytest over unittest"]
    where = run(
        str(python), "-c", "import memcli; print(memcli.__file__)", env=env, cwd=home
    ).stdout
    assert where.startswith(str(venv)), where  # memcli from the wheel, not the checkout
