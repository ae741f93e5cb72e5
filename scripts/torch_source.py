"""Where scripts/setup.sh takes torch from, and what it says about it (issue 37).

    python scripts/torch_source.py choose   # line 1: what to say; line 2: pip's index args
    python scripts/torch_source.py report   # one line: the torch in this environment

The PyTorch CPU wheel index (MEMCLI_TORCH_INDEX, default the one below) when it answers
within a few seconds: the CPU build, ≈ 200 MB, instead of the CUDA build with its nvidia
packages (several GB) that the default index gives on Linux. Else the default index,
with one line saying so (a local wheel pip finds is taken there too). Standard library
only: it runs before memcli is installed.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: seconds to wait for the index to answer
TIMEOUT = 5.0


def reachable(index: str, timeout: float = TIMEOUT) -> bool:
    """Whether `index` answers for torch's page (PEP 503: INDEX/torch/)."""
    try:
        with urllib.request.urlopen(f"{index.rstrip('/')}/torch/", timeout=timeout) as page:
            return 200 <= page.status < 300
    except (OSError, ValueError):  # no route, no name, refused, a timeout, a 404
        return False


def choose(index: str) -> tuple[str, list[str]]:
    """What setup says, and the index arguments for `pip install torch==…`."""
    if reachable(index):
        return f"torch from the PyTorch CPU index ({index})", ["--index-url", index]
    return (
        f"the PyTorch CPU index ({index}) is not reachable: torch from the default index "
        "(pip's settings; on Linux without a local CPU wheel that is the large CUDA build)",
        [],
    )


def report(site: Path) -> str:
    """The torch in the environment whose site-packages is `site`, and which build it
    is, read from its files (importing torch takes seconds)."""
    versions = list(site.glob("torch-*.dist-info"))
    if not versions:
        return "no torch in this environment"
    version = versions[0].name.removeprefix("torch-").removesuffix(".dist-info")
    cuda = None
    version_file = site / "torch" / "version.py"
    if version_file.is_file():
        for line in version_file.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("cuda"):
                cuda = line.split("=", 1)[1].strip().strip("'\"")
    build = "CPU build" if cuda in (None, "None", "") else f"CUDA {cuda} build"
    return f"torch {version} ({build}) in {site}"


def main(argv: list[str]) -> int:
    index = os.environ.get("MEMCLI_TORCH_INDEX") or CPU_INDEX
    if argv[:1] == ["choose"]:
        said, args = choose(index)
        print(said)
        print(" ".join(args))
        return 0
    if argv[:1] == ["report"]:
        import sysconfig

        print(report(Path(sysconfig.get_paths()["purelib"])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
