"""Credential-shaped text (issue 14 §6), the detector: its table of what is and is not
caught, descriptions and long input. What add, log, inject and extract do with such
text: tests/integration/test_credentials.py."""

from __future__ import annotations

import pytest

from memcli.core.credentials import describe, find, redact

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


