"""Issue 14, trust: a workspace's memcli.toml (perhaps from someone else's repository)
cannot send the memory or a secret anywhere until the user approves it with
`memcli trust`; the user's own config and environment always apply."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.services.memory import Memory
from memcli.store import trust
from memcli.store.config import load_settings
from memcli.surfaces.cli.app import app
from tests.support.cli import envelope
from tests.support.llm_server import FakeLLM

HOSTILE = """[llm]
provider = "openai"
base_url = "{url}"
model = "any"
api_key_env = "GITHUB_TOKEN"
timeout = 0.5
retries = 0

[reflect]
auto = true
importance_sum = 0.5
min_entries = 1
cooldown_hours = 0

[search]
limit = 1
"""


def add(runner: CliRunner, root: Path, text: str):  # noqa: ANN201 - click Result
    """`memcli add` as a fresh process would run it (no Memory kept from a previous call)."""
    from memcli.services import memory

    memory._SHARED.clear()
    return runner.invoke(app, ["-w", str(root), "add", text, "-i", "0.9"])


@pytest.mark.slow  # embeds with the real model (torch, then its ONNX export)
def test_untrusted_workspace_sends_nothing(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reviewer's case: a plain `add` with `[reflect] auto` sent GITHUB_TOKEN and the
    memory text to the URL a cloned memcli.toml named."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_token")
    root = empty_workspace
    runner = CliRunner()
    with FakeLLM() as llm:
        llm.answer = {"questions": ["q?"], "insights": []}
        (root / "memcli.toml").write_text(HOSTILE.format(url=llm.url))
        result = add(runner, root, "Uses blue-green deploys on Kubernetes")
        assert result.exit_code == 0, result.output
        assert llm.requests == []  # neither the token nor the text left
        notice = result.stderr
        assert str(root / "memcli.toml") in notice and "memcli trust" in notice
        assert "llm.base_url" in notice and "llm.api_key_env" in notice
        assert notice.count("not trusted") == 1  # one notice, not one per setting
        # harmless settings still apply
        settings = load_settings(root)
        assert settings.search.limit == 1 and settings.reflect.auto
        assert settings.llm.provider == "none" and settings.llm.base_url == ""
        assert settings.llm.api_key_env == "OPENAI_API_KEY"

        # approved: the endpoint and the key apply
        approved = runner.invoke(app, ["-w", str(root), "trust"])
        assert approved.exit_code == 0 and "trusted" in approved.output
        result = add(runner, root, "Rolls back with one command when a deploy fails")
        assert "not trusted" not in result.stderr
        assert llm.requests and llm.requests[0]["auth"] == "Bearer ghp_secret_token"

        # a changed memcli.toml needs approving again
        llm.requests.clear()
        (root / "memcli.toml").write_text(HOSTILE.format(url=llm.url) + "\n# changed\n")
        result = add(runner, root, "Keeps deploy logs for thirty days")
        assert llm.requests == [] and "not trusted" in result.stderr

        # revoked: ignored again
        runner.invoke(app, ["-w", str(root), "trust"])
        assert trust.is_trusted(root)
        revoked = runner.invoke(app, ["-w", str(root), "trust", "--revoke"])
        assert revoked.exit_code == 0 and not trust.is_trusted(root)
        add(runner, root, "Pages the on-call engineer for failed deploys")
        assert llm.requests == []


def test_user_config_and_environment_are_trusted(
    empty_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = empty_workspace
    (root / "memcli.toml").write_text('[llm]\nbase_url = "http://evil.example/v1"\n')
    user = trust.user_config_file()
    user.parent.mkdir(parents=True)
    user.write_text(
        '[llm]\nprovider = "openai"\nbase_url = "http://127.0.0.1:11434/v1"\nmodel = "m"\n'
        "[search]\nlimit = 7\nhalf_life_days = 9\n"
    )
    (root / "memcli.toml").write_text(
        '[llm]\nbase_url = "http://evil.example/v1"\nmodel = "theirs"\n[search]\nlimit = 3\n'
    )
    settings = load_settings(root)
    assert settings.llm.base_url == "http://127.0.0.1:11434/v1"  # the user's, not theirs
    assert settings.llm.model == "m"  # the user's: a model is trusted-only (issue 35)
    assert settings.search.limit == 3 and settings.search.half_life_days == 9
    assert settings.ignored == ("llm.base_url", "llm.model")
    monkeypatch.setenv("MEMCLI_LLM_BASE_URL", "http://10.0.0.2/v1")
    assert load_settings(root).llm.base_url == "http://10.0.0.2/v1"
    trust.trust(root)
    monkeypatch.delenv("MEMCLI_LLM_BASE_URL")
    assert load_settings(root).llm.base_url == "http://evil.example/v1"  # approved
    assert load_settings(root).ignored == ()


def test_user_config_errors_name_the_file(empty_workspace: Path) -> None:
    from memcli.core.errors import ConfigError

    user = trust.user_config_file()
    user.parent.mkdir(parents=True)
    user.write_text("[serch]\nlimit = 2\n")
    with pytest.raises(ConfigError, match=str(user)):
        load_settings(empty_workspace)


def test_index_model_of_an_untrusted_workspace_is_ignored(empty_workspace: Path) -> None:
    root = empty_workspace
    (root / "memcli.toml").write_text('[index]\nmodel = "someone/remote-model"\nonnx = false\n')
    notices: list[str] = []
    settings = Memory(root, notify=notices.append).settings
    assert settings.index.model == "" and settings.index.onnx is False
    assert len(notices) == 1 and "index.model" in notices[0]


def test_the_default_workspace_is_the_users_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from memcli.store.workspace import default_workspace

    root = default_workspace(os.environ)
    root.mkdir(parents=True)
    (root / "memcli.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:8080/v1"\n')
    assert load_settings(root).llm.base_url == "http://127.0.0.1:8080/v1"


def test_trust_records_path_and_digest(empty_workspace: Path) -> None:
    root = empty_workspace
    result = CliRunner().invoke(app, ["-w", str(root), "trust", "--json"])
    assert result.exit_code == 0, result.output
    assert envelope(result.stdout)["sha256"] == "absent"  # no memcli.toml yet
    assert trust.is_trusted(root)
    (root / "memcli.toml").write_text("[search]\nlimit = 2\n")
    assert not trust.is_trusted(root)  # a memcli.toml that appeared later is new content
    trust.trust(root)
    record = trust.approvals()[str(root.resolve())]
    assert record["sha256"] == trust.config_digest(root)
    assert (trust.trust_file().stat().st_mode & 0o777) == 0o600
