"""Where the index lives (`[index]` backend, uri, token_env, collection, workspace) is
one unit: from a workspace's memcli.toml it applies whole once the workspace is trusted,
and not at all before (issue 28): an unapproved workspace keeps the local index with one
notice naming `memcli trust`."""

from __future__ import annotations

from pathlib import Path

import pytest

from memcli.core.errors import ConfigError
from memcli.services.memory import Memory
from memcli.store import trust

MILVUS = 'backend = "milvus"\nuri = "team.db"\n'

# (case, memcli.toml, the user's config.toml, trusted?, expected [index] backend, uri,
# collection, workspace key, the settings left out)
CASES = [
    (
        "untrusted: backend and uri",
        f"[index]\n{MILVUS}",
        "",
        False,
        ("local", "", "memcli", ""),
        ("index.backend", "index.uri"),
    ),
    (
        "untrusted: backend alone",
        '[index]\nbackend = "milvus"\n',
        "",
        False,
        ("local", "", "memcli", ""),
        ("index.backend",),
    ),
    (
        "untrusted: the whole unit",
        f'[index]\n{MILVUS}collection = "c"\nworkspace = "w"\ntoken_env = "T"\n',
        "",
        False,
        ("local", "", "memcli", ""),
        ("index.backend", "index.uri", "index.collection", "index.workspace", "index.token_env"),
    ),
    (
        "untrusted: a collection alone",
        '[index]\ncollection = "theirs"\n',
        "",
        False,
        ("local", "", "memcli", ""),
        ("index.collection",),
    ),
    (
        "untrusted: backend local alone is harmless",
        '[index]\nbackend = "local"\nbatch_size = 8\n',
        "",
        False,
        ("local", "", "memcli", ""),
        (),
    ),
    (
        "untrusted: backend local with a workspace key",
        '[index]\nbackend = "local"\nworkspace = "w"\n',
        "",
        False,
        ("local", "", "memcli", ""),
        ("index.backend", "index.workspace"),
    ),
    (
        "untrusted: with a model",
        f'[index]\n{MILVUS}model = "someone/model"\n',
        "",
        False,
        ("local", "", "memcli", ""),
        ("index.backend", "index.uri", "index.model"),
    ),
    (
        "untrusted: the user's own Milvus stays",
        '[index]\ncollection = "theirs"\n',
        '[index]\nbackend = "milvus"\nuri = "http://127.0.0.1:19530"\n',
        False,
        ("milvus", "http://127.0.0.1:19530", "memcli", ""),
        ("index.collection",),
    ),
    (
        "trusted: the whole unit",
        f'[index]\n{MILVUS}collection = "c"\nworkspace = "w"\n',
        "",
        True,
        ("milvus", "team.db", "c", "w"),
        (),
    ),
]


@pytest.mark.parametrize(
    ("case", "toml", "user", "trusted", "expected", "left_out"), CASES, ids=[c[0] for c in CASES]
)
def test_index_location_applies_whole_or_not_at_all(
    empty_workspace: Path,
    case: str,
    toml: str,
    user: str,
    trusted: bool,
    expected: tuple[str, str, str, str],
    left_out: tuple[str, ...],
) -> None:
    root = empty_workspace
    (root / "memcli.toml").write_text(toml + "[search]\nlimit = 3\n", encoding="utf-8")
    if user:
        trust.user_config_file().parent.mkdir(parents=True, exist_ok=True)
        trust.user_config_file().write_text(user, encoding="utf-8")
    if trusted:
        trust.trust(root)
    notices: list[str] = []
    memory = Memory(root, notify=notices.append)
    index = memory.settings.index
    assert (index.backend, index.uri, index.collection, index.workspace) == expected
    assert sorted(memory.settings.ignored) == sorted(left_out)
    assert memory.settings.search.limit == 3  # other tables of the file still apply
    if left_out:
        assert len(notices) == 1 and "memcli trust" in notices[0]
        assert all(name in notices[0] for name in left_out)
    else:
        assert notices == []
    # the backend opens as configured: never "backend milvus needs [index] uri"
    opened = type(memory.index_manager.backend).__name__
    assert opened == ("MilvusBackend" if expected[0] == "milvus" else "LocalBackend")


def test_a_trusted_milvus_backend_without_uri_names_the_setting(empty_workspace: Path) -> None:
    (empty_workspace / "memcli.toml").write_text('[index]\nbackend = "milvus"\n', encoding="utf-8")
    trust.trust(empty_workspace)
    memory = Memory(empty_workspace, notify=lambda message: None)
    with pytest.raises(ConfigError, match=r"needs \[index\] uri"):
        _ = memory.index_manager.backend
