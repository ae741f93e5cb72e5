"""Text that looks like a credential (issue 14 §6): API keys and tokens of known shapes,
private keys, JWTs, and "password is …" / "密码是…" / "token: …" with a concrete value.

Pure and table-driven. Each rule is a shape specific enough that ordinary prose does not
match it: talk about passwords or a "token budget" in general is not flagged; a value
must follow and look like one (digits or symbols mixed in, or a known key format).
`add` refuses such text unless allowed (`--allow-secret`, which marks the entry
`secret=ok`), `extract` never adds it, and inject leaves out unmarked entries holding
one.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memcli.core.records import record

#: a value after "password is": at least 4 characters with a digit or a symbol in them,
#: or anything quoted. Every repetition is bounded: the rules run over whole entries
#: (up to 64 Ki characters), and an unbounded scan per start position would be quadratic.
_SECRET_VALUE = (
    r"(?:[\"'`](?P<quoted>[^\"'`\s]{4,128})[\"'`]"
    r"|(?P<value>(?=[^\s,;]{0,128}[0-9!@#$%^&*_+=/\\|~?-])[^\s,;\"'`]{4,128}))"
)
#: a plain word after "password:" (at least 4 characters)
_WORD_VALUE = r"[\"'`]?(?P<value>[^\s,;\"'`]{4,128})"
#: a token: 8+ characters of letters, digits and -_./+= with at least one digit and letter
_MIXED_VALUE = r"(?=[\w\-./+=]{0,256}[0-9])(?=[\w\-./+=]{0,256}[A-Za-z])[\w\-./+=]{8,256}"
_PASSWORD = r"\b(?:password|passwd|passphrase|pwd|passcode)"

#: (kind, pattern); overlapping findings keep the first. ASCII classes and word
#: boundaries: a key right after a CJK character is still found.
RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[A-Za-z0-9+/=:,\-\s]{0,16384}?"
            r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
            re.A,
        ),
    ),
    (
        "OpenAI / Anthropic API key",
        re.compile(r"\bsk-(?=[\w\-]{0,200}[0-9])[\w\-]{20,200}", re.A),
    ),
    (
        "GitHub token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_\w{30,255})", re.A),
    ),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b", re.A)),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,255}", re.A)),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}", re.A)),
    ("Stripe key", re.compile(r"\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,255}", re.A)),
    (
        "JSON web token",
        re.compile(r"\beyJ[\w\-]{8,2048}\.eyJ[\w\-]{8,8192}\.[\w\-]{8,2048}", re.A),
    ),
    ("bearer token", re.compile(r"\bBearer\s{1,8}" + _MIXED_VALUE, re.A)),
    (
        "password in a URL",
        re.compile(r"\b[a-z][a-z0-9+.\-]{0,15}://[^\s:/@]{1,128}:[^\s:/@]{3,128}@(?=[\w\-])", re.A),
    ),
    (
        "password",
        re.compile(
            _PASSWORD + r"\s{0,8}(?:is|was)\s{0,8}[:=]?\s{0,8}" + _SECRET_VALUE, re.I | re.A
        ),
    ),
    ("password", re.compile(_PASSWORD + r"\s{0,8}[:=]\s{0,8}" + _WORD_VALUE, re.I | re.A)),
    (
        "password",
        re.compile(
            r"(?:密码|口令|密钥)\s{0,8}(?:是|为|：|:|=)\s{0,8}[\"'“「]?"
            r"(?=\S{0,64}[A-Za-z0-9])[!-~]{4,128}"
        ),
    ),
    (
        "token",
        re.compile(
            r"\b(?:token|api[_ \-]?key|secret(?:[_ \-]?key)?|access[_ \-]?key|auth[_ \-]?key"
            r"|client[_ \-]?secret)\s{0,8}[:=]\s{0,8}[\"'`]?" + _MIXED_VALUE,
            re.IGNORECASE | re.ASCII,
        ),
    ),
)

#: what every rule starts with or turns on, lower-cased: text holding none of these is
#: passed in a few substring scans instead of one regex scan per rule (inject asks about
#: hundreds of entries per block)
_TRIGGERS = (
    "-----begin",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "akia",
    "asia",
    "agpa",
    "aida",
    "aroa",
    "aiza",
    "xox",
    "k_live_",
    "k_test_",
    "eyj",
    "bearer",
    "://",
    "pass",
    "pwd",
    "token",
    "key",
    "secret",
    "密码",
    "口令",
    "密钥",
)

#: words after "password is" that describe a password rather than give one
_NOT_VALUES = re.compile(
    r"^(?:required|wrong|incorrect|invalid|expired|too|not|a|an|the|my|your|our|their|"
    r"stored|saved|kept|set|reset|changed|weak|strong|long|short|secret|correct|missing|"
    r"true|false|none|null|yes|no|empty|unknown|here|there|below|above|same)$",
    re.IGNORECASE,
)


@record(frozen=True)
class Finding:
    """A credential-shaped span of a text."""

    kind: str
    start: int
    end: int


def find(text: str) -> list[Finding]:
    """Credential-shaped spans of `text`, in order (overlaps dropped)."""
    found: list[Finding] = []
    folded = text.lower()
    if not any(trigger in folded for trigger in _TRIGGERS):
        return found
    for kind, pattern in RULES:
        for match in pattern.finditer(text):
            value = match.groupdict().get("value") if "value" in pattern.groupindex else None
            if value is not None and _NOT_VALUES.match(value):
                continue
            found.append(Finding(kind, match.start(), match.end()))
    found.sort(key=lambda f: (f.start, -f.end))
    kept: list[Finding] = []
    for finding in found:
        if not kept or finding.start >= kept[-1].end:
            kept.append(finding)
    return kept


@lru_cache(maxsize=65536)
def has_secret(text: str) -> bool:
    """True when `text` holds something credential-shaped (memoized: inject asks for
    every candidate)."""
    return bool(find(text))


def describe(findings: list[Finding]) -> str:
    """The kinds found, in words ("a GitHub token and a password")."""
    kinds = list(dict.fromkeys(f.kind for f in findings))
    named = [("an " if k[0] in "AEIOU" else "a ") + k for k in kinds]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def redact(text: str) -> str:
    """`text` with each credential-shaped span replaced by `[redacted <kind>]`."""
    parts, last = [], 0
    for finding in find(text):
        parts += [text[last : finding.start], f"[redacted {finding.kind}]"]
        last = finding.end
    return "".join(parts) + text[last:]


def allowed(meta: dict[str, str]) -> bool:
    """The entry was stored with --allow-secret (metadata `secret=ok`)."""
    return meta.get("secret", "").lower() == "ok"


def withheld(text: str, meta: dict[str, str]) -> bool:
    """True when an entry must stay out of inject blocks: it looks like it holds a
    credential and nobody allowed that."""
    return not allowed(meta) and has_secret(text)
