"""An MCP token file is refused when any user but its owner may read, write or run it
(issue 25): every group and other permission bit on its own, and common modes, for a
one-line token file and a [[grant]] file alike; 0600 and stricter are accepted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memcli.core.errors import ConfigError
from memcli.surfaces.mcp_http import load_grants

TOKEN = "test-token-0123456789abcdef"
ACCEPTED = [0o600, 0o400, 0o700]
#: each bit of group and other alone, then the modes people actually end up with
REFUSED = [0o640, 0o620, 0o610, 0o604, 0o602, 0o601, 0o644, 0o660, 0o664, 0o666, 0o755]
pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def _files(tmp_path: Path, workspace: Path) -> list[Path]:
    single = tmp_path / "token"
    single.write_text(TOKEN + "\n", encoding="utf-8")
    grants = tmp_path / "grants.toml"
    grants.write_text(
        f'[[grant]]\ntoken = "{TOKEN}"\nworkspaces = ["{workspace}"]\n', encoding="utf-8"
    )
    return [single, grants]


@pytest.mark.parametrize("mode", ACCEPTED, ids=oct)
def test_a_token_file_only_its_owner_can_use_is_accepted(
    mode: int, tmp_path: Path, empty_workspace: Path
) -> None:
    for path in _files(tmp_path, empty_workspace):
        path.chmod(mode)
        (grant,) = load_grants(empty_workspace, path, {})
        assert list(grant.workspaces.values()) == [empty_workspace.resolve()]


@pytest.mark.parametrize("mode", REFUSED, ids=oct)
def test_a_token_file_others_can_use_is_refused(
    mode: int, tmp_path: Path, empty_workspace: Path
) -> None:
    for path in _files(tmp_path, empty_workspace):
        path.chmod(mode)
        with pytest.raises(ConfigError, match="other users can read") as caught:
            load_grants(empty_workspace, path, {"MEMCLI_MCP_TOKEN": TOKEN})
        assert str(path) in caught.value.message and "chmod 600" in (caught.value.hint or "")
