"""Every credential rule at its boundary (issue 25): for each prefix or pattern of
memcli.core.credentials.RULES, one text that is just long (or shaped) enough to be
flagged and one near miss that is not. The table must reach every rule and every
trigger: a rule or prefix dropped from the module (`ghs_` forgotten) fails a row."""

from __future__ import annotations

import pytest

from memcli.core.credentials import _TRIGGERS, RULES, find, has_secret

A30 = "aB3" * 10  # 30 letters and digits
GH = "GitHub token"
AWS = "AWS access key id"
PW = "password"

#: (kind flagged, or None, text)
CASES: list[tuple[str | None, str]] = [
    ("private key", "-----BEGIN PRIVATE KEY-----"),
    ("private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"),
    ("private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----"),
    (None, "-----BEGIN PUBLIC KEY-----"),
    (None, "----BEGIN PRIVATE KEY----"),
    ("OpenAI / Anthropic API key", "use sk-" + "a" * 19 + "1"),  # 20 after sk-
    (None, "use sk-" + "a" * 18 + "1"),  # 19
    (None, "use sk-" + "a" * 40),  # no digit
    (None, "use xsk-" + "a" * 19 + "1"),  # not at a word start
]
for prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
    CASES += [(GH, f"use {prefix}{A30}"), (None, f"use {prefix}{A30[:29]}")]
    CASES += [(None, f"use x{prefix}{A30}")]
CASES += [
    (None, f"use ghx_{A30}"),
    (GH, f"github_pat_{A30}"),
    (None, f"github_pat_{A30[:29]}"),
]
for prefix in ("AKIA", "ASIA", "AGPA", "AIDA", "AROA"):
    CASES += [(AWS, f"id {prefix}IOSFODNN7EXAMPLE ok"), (None, f"id {prefix}IOSFODNN7EXAMPL ok")]
    CASES += [(None, f"id {prefix}IOSFODNN7EXAMPLEX ok")]  # 17: no word end after 16
for letter in "abposr":
    CASES += [("Slack token", f"xox{letter}-1234567890"), (None, f"xox{letter}-123456789")]
CASES += [
    (None, "xoxc-1234567890abc"),
    ("Google API key", "AIza" + "x1" * 17 + "y"),  # 35
    (None, "AIza" + "x1" * 17),  # 34
]
for head in ("rk", "sk", "pk"):
    for mode in ("live", "test"):
        CASES += [("Stripe key", f"{head}_{mode}_" + "a1" * 8)]  # 16
        CASES += [(None, f"{head}_{mode}_" + "a1" * 7 + "a")]  # 15
CASES += [
    (None, "xk_live_" + "a1" * 10),
    ("JSON web token", "eyJhbGciOiJ.eyJzdWIiOiJ.abcdefgh"),  # 8 + 8 + 8
    (None, "eyJhbGciOiJ.eyJzdWIiOiJ.abcdefg"),  # 7 in the last part
    (None, "eyJhbGciOi.eyJzdWIiOiJ.abcdefgh"),  # 7 after the first eyJ
    ("bearer token", "Authorization: Bearer abcdefg1"),  # 8, a digit and a letter
    (None, "Authorization: Bearer abcdef1"),  # 7
    (None, "Authorization: Bearer abcdefgh"),  # no digit
    (None, "Authorization: Bearer 12345678"),  # no letter
    ("password in a URL", "https://admin:abc@db.internal/app"),  # 3
    (None, "https://admin:ab@db.internal/app"),  # 2
    (None, "https://admin@db.internal/app"),
]
for word in ("password", "passwd", "passphrase", "pwd", "passcode", "PASSWORD"):
    CASES += [
        (PW, f"the {word} is ab1d"),  # 4 with a digit
        (None, f"the {word} is ab1"),  # 3
        (None, f"the {word} is abcd"),  # no digit or symbol
        (PW, f"the {word} was 'abcd'"),  # quoted: anything of 4
        (None, f"the {word} was 'abc'"),
        (PW, f"{word}: abcd"),  # after a colon, a plain word of 4
        (None, f"{word}: abc"),
        (PW, f"{word}=abcd"),
    ]
CASES += [
    (None, "the password is stored"),
    (None, "password: required"),
    (PW, "password: requires"),
]
for word in ("密码", "口令", "密钥"):
    for sep in ("是", "为", "：", ":", "="):
        CASES += [(PW, f"{word}{sep}ab1d"), (None, f"{word}{sep}ab1")]
CASES += [(None, "密码是什么"), (None, "密码是！！！！")]
for name in (
    "token",
    "api_key",
    "api key",
    "api-key",
    "apikey",
    "secret",
    "secret_key",
    "access_key",
    "access key",
    "auth_key",
    "client_secret",
    "client secret",
):
    CASES += [
        ("token", f"{name}: abcdefg1"),
        (None, f"{name}: abcdef1"),
        (None, f"{name}: 1234567"),
    ]
    CASES += [("token", f"{name}='abcdefg1'"), (None, f"{name} abcdefg1")]  # no : or =


@pytest.mark.parametrize(("kind", "text"), CASES)
def test_each_rule_at_its_boundary(kind: str | None, text: str) -> None:
    found = find(text)
    assert [f.kind for f in found][:1] == ([kind] if kind else []), found
    assert has_secret(text) is (kind is not None)


def test_the_table_reaches_every_rule_and_every_trigger() -> None:
    positives = [text for kind, text in CASES if kind]
    for kind, pattern in RULES:
        assert any(pattern.search(t) for t in positives), f"no row for the rule {kind}: {pattern}"
        assert any(not pattern.search(t) for kind2, t in CASES if kind2 is None)
    for trigger in set(_TRIGGERS) - {"-----begin"}:  # a private key always holds "key"
        # a row with this trigger alone: dropping the trigger fails that row
        alone = [t for t in positives if {x for x in _TRIGGERS if x in t.lower()} == {trigger}]
        assert alone, f"no row for the trigger {trigger!r} without another trigger"
    # and each rule finds its own rows: a rule narrowed (gh[pou]_) fails on them
    kinds = {kind for kind, _ in RULES}
    assert kinds == {kind for kind, _ in CASES if kind}
