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
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support.env import ROOT

pytestmark = pytest.mark.slow


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]


#: the build backend's own call (PEP 517), as pip makes it, without pip's start and its
#: metadata pass; the backend's whole output is seen (pip shows only its warnings)
BUILD = "import sys; from setuptools import build_meta; build_meta.build_wheel(sys.argv[1])"


def test_the_wheel_installs_a_working_memcli(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    checkout = tmp_path / "checkout"  # a clean copy: no build/ left by an earlier build
    shutil.copytree(ROOT / "memcli", checkout / "memcli", ignore=shutil.ignore_patterns("*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, checkout / name)
    quiet = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    built = run(sys.executable, "-c", BUILD, str(tmp_path / "dist"), cwd=checkout, env=quiet)
    assert built.returncode == 0, built.stderr
    assert "warning" not in (built.stdout + built.stderr).lower(), built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("memcli-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        carried = [n for n in archive.namelist() if not n.startswith("memcli-0")]
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "memcli").rglob("*.py")}
    data = {"memcli/surfaces/mcp_snapshot.json"}  # what `memcli mcp` answers at once
    assert set(carried) == modules | data  # the package, nothing else (tests/, bench/)

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
        "--no-index", "--ignore-installed", "--no-compile", str(wheel),
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert (venv / "bin" / "memcli").is_file()

    request.getfixturevalue("exported")  # the session's ONNX export (after the quick checks)
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
