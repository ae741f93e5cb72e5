"""Credential-shaped text (issue 14 §6): the detector's table, and what add, edit, log,
extract and inject do with such text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.core.credentials import describe, find, redact
from memcli.services.memory import Memory
from memcli.surfaces.cli.app import app
from tests.fakes import HashingEmbedder

#: (text, kind found or None)
TABLE = [
    ("my key is sk-proj-abcDEF1234567890abcdefXYZ", "OpenAI / Anthropic API key"),
    ("sk-ant-api03-AbCdEf0123456789xyzXYZ-abc", "OpenAI / Anthropic API key"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "GitHub token"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "GitHub token"),
    ("AWS AKIAIOSFODNN7EXAMPLE for the bucket", "AWS access key id"),
    ("slack bot xoxb-1234567890-abcdefghij", "Slack token"),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "Google API key"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe key"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0",
        "JSON web token",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "private key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "private key"),
    ("curl -H 'Authorization: Bearer abcdef123456789'", "bearer token"),
    ("postgres://admin:s3cret@db.internal:5432/app", "password in a URL"),
    ("The wifi password is hunter2", "password"),
    ("password: swordfish", "password"),
    ('the password is "correct horse"', None),  # a quoted value has no spaces
    ("the password is 'Tr0ub4dor'", "password"),
    ("我的密码是abc12345", "password"),
    ("服务器密码：P@ssw0rd", "password"),
    ("token: abcd1234efgh5678", "token"),
    ("api_key=Zx81kLmn0pQ", "token"),
    ("中文sk-proj-abcDEF1234567890abcdefXYZ", "OpenAI / Anthropic API key"),
    # ordinary prose: not flagged
    ("Use strong passwords and a password manager", None),
    ("The password is stored in 1Password", None),
    ("The password is required for the staging server", None),
    ("The password was changed yesterday", None),
    ("Passwords are rotated every 90 days", None),
    ("Keep the token budget under 2000", None),
    ("max_tokens: 2000 for inject", None),
    ("tokens: 500 per request", None),
    ("secret: 8 characters minimum", None),
    ("密码是什么", None),
    ("密码是必需的", None),
    ("Use sk-learn for classical ML", None),
    ("Prefers pytest over unittest; the API key lives in the vault", None),
    ("Clone git@github.com:org/repo.git over ssh", None),
    ("See https://docs.python.org/3/library/re.html", None),
]


@pytest.mark.parametrize(("text", "kind"), TABLE)
def test_detector_table(text: str, kind: str | None) -> None:
    found = find(text)
    assert (found[0].kind if found else None) == kind
    if kind:
        secret = text[found[0].start : found[0].end]
        assert secret not in redact(text) and f"[redacted {kind}]" in redact(text)
    else:
        assert redact(text) == text


def test_describe_and_long_input() -> None:
    found = find("ghp_abcdefghijklmnopqrstuvwxyz0123456789 and password: hunter22")
    assert describe(found) == "a GitHub token and a password"
    for hostile in ("sk-" * 20000, "a." * 30000, "password is " * 5000, "x" * 65536):
        assert find(hostile) == []  # and quickly: every repetition is bounded


def run(runner: CliRunner, ws: Path, *args: str, input: str | None = None):  # noqa: A002
    return runner.invoke(app, ["-w", str(ws), *args], input=input)


@pytest.fixture(autouse=True)
def _fake_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    def shared(workspace: str | Path | None = None) -> Memory:
        return Memory(workspace, embedder_factory=HashingEmbedder, notify=lambda m: None)

    monkeypatch.setattr("memcli.services.memory.shared_memory", shared)


KEY = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def test_add_refuses_a_credential_unless_allowed(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    before = (ws / "memory.md").read_bytes()
    for args in (["add", f"CI token is {KEY}"], ["log", f"used {KEY}"]):
        result = run(runner, ws, *args)
        assert result.exit_code == 1 and "GitHub token" in result.stderr
        assert "--allow-secret" in result.stderr and KEY not in result.stderr
    assert (ws / "memory.md").read_bytes() == before and not (ws / "episodes").exists()
    added = run(runner, ws, "add", f"CI token is {KEY}", "--allow-secret", "--json")
    assert json.loads(added.stdout)["entry"]["meta"]["secret"] == "ok"
    assert KEY in run(runner, ws, "inject").stdout  # allowed: it may be injected


def test_inject_withholds_unmarked_credentials(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    with (ws / "memory.md").open("a") as handle:
        handle.write(f"- Deploy token {KEY} for CI\n- The token budget is 2000\n")
    for args in (["inject"], ["inject", "-q", "deploy token CI"], ["inject", "-f", "json"]):
        out = run(runner, ws, *args).stdout
        assert KEY not in out and "token budget" in out, args
    entry_id = json.loads(run(runner, ws, "list", "--json").stdout)[0]["id"]
    refused = run(runner, ws, "edit", entry_id, "--text", f"Deploy token {KEY}!")
    assert refused.exit_code == 1 and "GitHub token" in refused.stderr
    assert run(runner, ws, "edit", entry_id, "--allow-secret").exit_code == 0
    assert KEY in run(runner, ws, "inject").stdout


def test_extract_never_adds_a_credential(runner: CliRunner, empty_workspace: Path) -> None:
    ws = empty_workspace
    said = [
        {"role": "user", "content": f"Remember that my GitHub token is {KEY}."},
        {"role": "user", "content": "Remember that the deploy day is Friday."},
    ]
    path = ws.parent / "chat.json"
    path.write_text(json.dumps(said))
    result = run(runner, ws, "extract", "--messages", str(path), "--json")
    decisions = json.loads(result.stdout)
    assert [d["action"] for d in decisions] == ["SKIP", "ADD"]
    assert "GitHub token" in decisions[0]["reason"] and KEY not in result.stdout
    assert KEY not in (ws / "memory.md").read_text()
    plain = run(runner, ws, "extract", "--messages", str(path), "--dry-run").stdout
    assert "SKIP" in plain and "[redacted GitHub token]" in plain and KEY not in plain
