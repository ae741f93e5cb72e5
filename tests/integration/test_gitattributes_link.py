"""`.gitattributes` under the link rule (docs/security.md, Links): `memcli git setup`
and `memcli init` write it, so a cloned `.gitattributes -> ~/.bashrc` must not take
their lines (found by the round-four break session). Integration: setup runs git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcli.store.links import LinkRefused


def _outside(tmp: Path, name: str) -> Path:
    target = tmp / "outside" / name
    target.parent.mkdir(exist_ok=True)
    target.write_text("- elsewhere\n")
    return target


@pytest.mark.parametrize("entry", ["git setup", "init"])
def test_gitattributes_linked_out_of_the_workspace_is_refused(tmp_path: Path, entry: str) -> None:
    """`memcli git setup` and `memcli init` write `.gitattributes`: a cloned
    `.gitattributes -> ~/.bashrc` is refused, the target unchanged, nothing created; a
    link inside the workspace gets the lines in its target, and stays a link."""
    from memcli.services.memory import Memory
    from memcli.store.gitmerge import setup

    ws = tmp_path / "ws"
    ws.mkdir()
    outside = _outside(tmp_path, ".bashrc")
    (ws / ".gitattributes").symlink_to(outside)
    before = sorted(os.listdir(ws))
    run = (lambda: setup(ws)) if entry == "git setup" else (lambda: Memory(ws).init())
    with pytest.raises(LinkRefused, match=r"\.gitattributes: a link to .*\.bashrc"):
        run()
    assert outside.read_text() == "- elsewhere\n"
    assert sorted(os.listdir(ws)) == before
    (ws / ".gitattributes").unlink()
    (ws / "attrs").write_text("*.png binary\n")
    (ws / ".gitattributes").symlink_to("attrs")
    run()
    assert (ws / ".gitattributes").is_symlink()
    assert "/memory.md merge=memcli" in (ws / "attrs").read_text()
