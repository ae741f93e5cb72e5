"""The generated pages of the documentation site (docs/reference/): the CLI reference
from the Typer app, the MCP tools from the server's own tool list, the settings from the
settings model. They follow the code: a test fails when a committed page differs from
what this package writes.

    python -m memcli.surfaces.docgen          # write the pages
    python -m memcli.surfaces.docgen --check  # list the stale ones (exit 1), write nothing
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from memcli.surfaces.docgen.markdown import REGENERATE


def pages() -> dict[str, Callable[[], str]]:
    """Each generated page (its path under the repository) and the function writing it."""
    from memcli.surfaces.docgen.cli import cli_page
    from memcli.surfaces.docgen.mcp import mcp_page, snapshot_page
    from memcli.surfaces.docgen.modules import modules_page
    from memcli.surfaces.docgen.settings import settings_page

    return {
        "docs/reference/cli.md": cli_page,
        "docs/reference/mcp.md": mcp_page,
        "docs/reference/settings.md": settings_page,
        "docs/reference/modules.md": modules_page,
        "memcli/surfaces/mcp_snapshot.json": snapshot_page,  # for memcli.surfaces.mcp_stdio
    }


def stale(root: Path) -> list[str]:
    """The generated pages under `root` that differ from what the code gives now."""
    out = []
    for path, make in pages().items():
        target = root / path
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current != make():
            out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(__file__).resolve().parents[3]
    if "--check" in args:
        old = stale(root)
        for path in old:
            print(f"{path} is stale: run `{REGENERATE}`", file=sys.stderr)
        return 1 if old else 0
    for path, make in pages().items():
        (root / path).write_text(make(), encoding="utf-8")
        print(f"wrote {path}")
    return 0
