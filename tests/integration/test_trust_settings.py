"""Every trusted-only setting (issue 25): each one, set in an untrusted workspace's
memcli.toml, is not applied (and named in `ignored`); after `memcli trust` it is; a
changed memcli.toml needs approving again; the user's own config and the environment
always apply. The table is the specification: memcli.store.trust.SENSITIVE must hold
exactly these (a setting dropped from it, `[index] uri`, fails its row)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.store import trust
from memcli.store.config import Settings, load_settings
from memcli.surfaces.cli.app import app

#: (table, key, a value someone else's repository might set): where memory text goes,
#: which secret is read and sent, which model files are loaded, whose index is used
SENSITIVE_ROWS: list[tuple[str, str, object]] = [
    ("llm", "provider", "openai"),
    ("llm", "base_url", "http://attacker.example/v1"),
    ("llm", "api_key_env", "GITHUB_TOKEN"),
    ("llm", "command", "/tmp/their-script"),
    # issue 35 item 9: an agent CLI's argument, and how long a program runs
    ("llm", "model", "--dangerously-skip-permissions"),
    ("llm", "timeout", 86400.0),
    ("index", "model", "someone/remote-model"),
    ("index", "uri", "http://attacker.example:19530"),
    ("index", "token_env", "GITHUB_TOKEN"),
    ("index", "collection", "someone_elses"),
    ("index", "workspace", "victim-partition"),
    ("layers", "read", "user, ../someone-elses-notes"),
    # issue 35 item 16: a clone's writes (an agent's too) sent to the person's own layer
    ("layers", "user_types", "preference, fact"),
]
#: harmless settings of the same tables: applied whether trusted or not
HARMLESS_ROWS: list[tuple[str, str, object]] = [
    ("llm", "retries", 1),
    ("index", "onnx", False),
    ("index", "gloss", False),  # how Chinese text is embedded: ranking, not a destination
    ("index", "batch_size", 16),
    ("search", "limit", 3),
]


def _toml(table: str, key: str, value: object) -> str:
    if isinstance(value, bool):
        shown = "true" if value else "false"
    elif isinstance(value, str):
        shown = f'"{value}"'
    else:
        shown = str(value)
    return f"[{table}]\n{key} = {shown}\n"


def _value(settings: Settings, table: str, key: str) -> object:
    return getattr(getattr(settings, table), key)


def _default(table: str, key: str) -> object:
    return _value(Settings(), table, key)


def test_the_table_is_exactly_the_sensitive_list() -> None:
    listed = {(table, key) for table, keys in trust.SENSITIVE.items() for key in keys}
    assert listed == {(table, key) for table, key, _ in SENSITIVE_ROWS}


@pytest.mark.parametrize(("table", "key", "value"), SENSITIVE_ROWS)
def test_sensitive_setting_applies_only_once_trusted(
    empty_workspace: Path, table: str, key: str, value: object
) -> None:
    root = empty_workspace
    assert value != _default(table, key)
    (root / "memcli.toml").write_text(_toml(table, key, value))
    untrusted = load_settings(root)
    assert _value(untrusted, table, key) == _default(table, key)
    assert untrusted.ignored == (f"{table}.{key}",)

    approved = CliRunner().invoke(app, ["-w", str(root), "trust"])
    assert approved.exit_code == 0, approved.output
    trusted = load_settings(root)
    assert _value(trusted, table, key) == value and trusted.ignored == ()

    # changed after the approval: not applied until approved again
    (root / "memcli.toml").write_text(_toml(table, key, value) + "# changed\n")
    assert _value(load_settings(root), table, key) == _default(table, key)
    trust.trust(root)
    assert _value(load_settings(root), table, key) == value


@pytest.mark.parametrize(("table", "key", "value"), SENSITIVE_ROWS)
def test_sensitive_setting_from_the_user_or_environment_applies(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch, table: str, key: str, value: object
) -> None:
    user = trust.user_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(_toml(table, key, value))
    assert _value(load_settings(empty_workspace), table, key) == value
    user.unlink()
    monkeypatch.setenv(f"MEMCLI_{table.upper()}_{key.upper()}", str(value))
    assert _value(load_settings(empty_workspace), table, key) == value


@pytest.mark.parametrize(("table", "key", "value"), HARMLESS_ROWS)
def test_harmless_setting_applies_untrusted(
    empty_workspace: Path, table: str, key: str, value: object
) -> None:
    (empty_workspace / "memcli.toml").write_text(_toml(table, key, value))
    settings = load_settings(empty_workspace)
    assert _value(settings, table, key) == value and settings.ignored == ()
    assert not trust.is_trusted(empty_workspace)


def test_every_setting_is_in_one_table() -> None:
    """A new setting of [llm] or [index] must be judged: sensitive or harmless."""
    judged = {(t, k) for t, k, _ in SENSITIVE_ROWS + HARMLESS_ROWS}
    for table in ("llm", "index"):
        cls = type(getattr(Settings(), table))
        for field in dataclasses.fields(cls):
            if (table, field.name) not in judged:
                assert field.name in _UNSENSITIVE[table], f"{table}.{field.name}: not judged"


#: [llm] and [index] settings that only tune behaviour on this machine
_UNSENSITIVE = {
    "llm": set(),
    "index": {
        "backend",
        "ann_threshold",
        "hnsw_m",
        "hnsw_ef_search",
        "hnsw_ef_construction",
        "progress_threshold",
    },
}


def test_an_untrusted_user_types_keeps_a_clones_writes_in_the_clone(tmp_path: Path) -> None:
    """Issue 35 item 16: a cloned memcli.toml's `[layers] user_types` sent the clone's
    writes (an agent's too) into the person's own layer, which every project reads."""
    import os

    from tests.support.cli import invoke
    from tests.support.env import make_workspace

    user = make_workspace(Path(os.environ["XDG_DATA_HOME"]) / "memcli", "mu1", "Likes dark mode")
    clone = make_workspace(tmp_path / "clone", "mc1", "Builds with make")
    (clone / "memcli.toml").write_text('[layers]\nuser_types = "preference, fact"\n')
    mine = (user / "memory.md").read_bytes()
    done = invoke(CliRunner(), clone, "add", "Prefers to obey the README", "--type", "preference")
    assert done.exit_code == 0, done.output
    assert (user / "memory.md").read_bytes() == mine
    assert "Prefers to obey the README" in (clone / "memory.md").read_text()
    trust.trust(clone)  # the person's choice: then the setting applies
    done = invoke(CliRunner(), clone, "add", "Prefers short answers", "--type", "preference")
    assert done.exit_code == 0, done.output
    assert "Prefers short answers" in (user / "memory.md").read_text()
