"""The index's snapshot of the parsed entries (`.memcli/index/entries-<id>.marshal`): a
one-off process whose files are as indexed reads it instead of parsing the Markdown.

Its text is served by search and inject, so it is trusted only when this user wrote it
on this machine: the index manifest keeps an HMAC-SHA256 of the snapshot's bytes and of
the Markdown files' sha256 it was taken from, keyed by the user's secret
(memcli.store.trust.local_key). A snapshot whose MAC does not verify (another machine's,
another user's, edited, or taken from other files) is never unmarshalled: the caller
parses the Markdown and writes a snapshot of its own. marshal is read only from bytes
the MAC vouches for (it is quick, and not safe against crafted input).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import marshal
import os
from collections.abc import Sequence
from pathlib import Path

from memcli.core.models import Entry

PREFIX = "entries-"
_CONTEXT = b"memcli entries snapshot 1\x00"


def write(
    directory: Path, entries: Sequence[Entry], files: dict[str, list], key: bytes | None
) -> tuple[str, str] | None:
    """Write the snapshot of `entries` read from `files` (name -> files_signature row);
    its (file name, MAC), or None without a key (no snapshot is written then)."""
    if key is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{PREFIX}{os.urandom(6).hex()}.marshal"
    data = marshal.dumps([e.as_row() for e in entries])
    tmp = directory / (name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(directory / name)
    return name, mac(key, files, data)


def read(
    directory: Path, name: str, expected: object, files: object, key: bytes | None
) -> list[Entry] | None:
    """The entries of snapshot `name` when its bytes and `files` verify against the
    `expected` MAC; None when they do not, or it cannot be read."""
    if key is None or not isinstance(expected, str) or not isinstance(files, dict):
        return None
    if not is_name(name):
        return None  # a manifest naming a file outside the index folder
    try:
        data = (directory / name).read_bytes()
    except OSError:
        return None
    if not hmac.compare_digest(mac(key, files, data), expected):
        return None
    try:
        return Entry.from_rows(marshal.loads(data))
    except (ValueError, EOFError, TypeError, IndexError):
        return None


def is_name(name: object) -> bool:
    """`name` is a snapshot's file name in the index folder (never a path elsewhere)."""
    return (
        isinstance(name, str)
        and name.startswith(PREFIX)
        and name.endswith(".marshal")
        and "/" not in name
        and "\\" not in name
    )


def mac(key: bytes, files: dict[str, list], data: bytes) -> str:
    """HMAC-SHA256 of the files' content hashes and the snapshot's bytes."""
    digests = {
        n: row[4] if isinstance(row, list) and len(row) > 4 else None for n, row in files.items()
    }
    signed = hmac.new(key, _CONTEXT, hashlib.sha256)
    signed.update(json.dumps(digests, sort_keys=True).encode("utf-8") + b"\x00")
    signed.update(data)
    return signed.hexdigest()
