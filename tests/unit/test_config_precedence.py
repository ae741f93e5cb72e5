"""Where a setting's value comes from (docs/configuration.md: a flag > MEMCLI_* > the
workspace's memcli.toml > the user's config.toml > the default), as a table (issue 35:
a planted bug putting the user's config above the workspace's was caught only by an
error-message test, by accident)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.store import trust
from memcli.store.config import load_settings

#: (user's config.toml, workspace's memcli.toml, MEMCLI_SEARCH_LIMIT, flag, limit in effect)
ROWS = [
    (None, None, None, None, 10),  # the default
    (4, None, None, None, 4),
    (None, 5, None, None, 5),
    (4, 5, None, None, 5),  # the workspace's over the user's
    (4, None, "6", None, 6),
    (None, 5, "6", None, 6),
    (4, 5, "6", None, 6),
    (4, 5, None, 7, 7),
    (4, 5, "6", 7, 7),
    (None, None, None, 7, 7),
]


@pytest.mark.parametrize(("user", "ours", "env", "flag", "expected"), ROWS)
def test_the_nearest_source_sets_a_setting(
    empty_workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    user: int | None,
    ours: int | None,
    env: str | None,
    flag: int | None,
    expected: int,
) -> None:
    config = trust.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    if user is not None:
        config.write_text(f"[search]\nlimit = {user}\n")
    if ours is not None:
        (empty_workspace / "memcli.toml").write_text(f"[search]\nlimit = {ours}\n")
    if env is not None:
        monkeypatch.setenv("MEMCLI_SEARCH_LIMIT", env)
    overrides = {"search": {"limit": flag}} if flag is not None else None
    assert load_settings(empty_workspace, overrides=overrides).search.limit == expected


#: a trusted-only setting: the workspace's only once the person trusts it
SENSITIVE_ROWS = [(False, "user-model"), (True, "workspace-model")]


@pytest.mark.parametrize(("trusted", "expected"), SENSITIVE_ROWS)
def test_a_trusted_only_setting_of_the_workspace_wins_once_trusted(
    empty_workspace: Path, trusted: bool, expected: str
) -> None:
    config = trust.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[llm]\nmodel = "user-model"\n')
    (empty_workspace / "memcli.toml").write_text('[llm]\nmodel = "workspace-model"\n')
    if trusted:
        trust.trust(empty_workspace)
    assert load_settings(empty_workspace).llm.model == expected
