"""The history's objects (`.memcli/history/objects/ab/cdef…`): file contents named by
their sha256, each distinct content once.

A content is stored whole (zlib) or, when the version it replaced is at hand and the two
share most of their bytes, as a delta against it: the common start and end are taken
from the base and only the bytes between are kept (`D` + zlib of a JSON header line and
those bytes). An `add` to a 690 KB memory.md then costs a few hundred bytes instead of
the whole file. A chain of deltas is cut every MAX_DEPTH versions by a whole copy, so a
read decompresses at most that many small objects and one whole one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import zlib
from collections import OrderedDict
from pathlib import Path

MAX_DEPTH = 64  # deltas in a row before a whole copy
DELTA_AT_MOST = 0.5  # a delta larger than this share of the content: stored whole
_DELTA = b"D"
_CACHE = 6  # recently read or written contents kept in memory


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DamagedObject(KeyError):  # noqa: N818 - a KeyError: every reader already skips one
    """An object on disk that cannot be read back as what its name says (its bytes do
    not decompress, its delta header is not what memcli writes, a chain loops, or the
    content's sha256 differs): unlike a pruned one, it is reported (`doctor`, `undo`)."""

    def __init__(self, digest: str, why: str) -> None:
        super().__init__(digest)
        self.digest, self.why = digest, why


def _header_problem(head: object) -> str | None:
    """What is wrong with a delta's header, or None: a base's sha256, and the common
    start `p`, common end `s` and depth `n` as non-negative integers."""
    if not isinstance(head, dict):
        return "its delta header is not a JSON object"
    base = head.get("base")
    if not (isinstance(base, str) and len(base) == 64 and not base.strip("0123456789abcdef")):
        return "its delta header names no base object"
    for key in ("p", "s", "n"):
        value = head.get(key)
        if type(value) is not int or value < 0:  # noqa: E721 - a bool is no count
            return f"its delta header's {key!r} is {json.dumps(value)}, not a count"
    return None


class Objects:
    """Content-addressed storage under `root` (the `objects/` directory)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._recent: OrderedDict[str, bytes] = OrderedDict()
        #: damaged objects met by this process: sha -> what is wrong (doctor lists them)
        self.damaged: dict[str, str] = {}

    def _damaged(self, digest: str, why: str) -> DamagedObject:
        self.damaged[digest] = why
        return DamagedObject(digest, why)

    def path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def remember(self, digest: str, data: bytes) -> None:
        """Keep `data` in memory as a likely base for the next delta."""
        self._recent[digest] = data
        self._recent.move_to_end(digest)
        while len(self._recent) > _CACHE:
            self._recent.popitem(last=False)

    def put(self, data: bytes, base: str | None = None) -> tuple[str, int]:
        """Store `data` once (as a delta against `base` when that is cheap); returns its
        sha256 and the bytes written (0 when it was there already, whose time stamp is
        then refreshed: a prune spares young objects)."""
        digest = sha256(data)
        path = self.path(digest)
        self.remember(digest, data)
        if path.exists():
            with contextlib.suppress(OSError):
                os.utime(path)
            return digest, 0
        blob = self._delta(data, base) if base and base != digest else None
        if blob is None:
            blob = zlib.compress(data, 1)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.time_ns()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # a full disk leaves no temp file behind
            raise
        return digest, len(blob)

    def _delta(self, data: bytes, base: str) -> bytes | None:
        try:
            old = self.get(base)
            depth = self.depth(base)
        except KeyError:
            return None
        if depth >= MAX_DEPTH:
            return None
        prefix = _common_prefix(old, data)
        suffix = _common_suffix(old[prefix:], data[prefix:])
        middle = data[prefix : len(data) - suffix]
        if len(middle) > DELTA_AT_MOST * len(data):
            return None
        head = json.dumps({"base": base, "p": prefix, "s": suffix, "n": depth + 1})
        return _DELTA + zlib.compress(head.encode() + b"\n" + middle, 1)

    def get(self, digest: str) -> bytes:
        """The content stored under `digest` (KeyError when pruned or never kept)."""
        cached = self._recent.get(digest)
        if cached is not None:
            return cached
        chain: list[tuple[dict, bytes]] = []
        current = digest
        while True:
            known = self._recent.get(current) if current != digest else None
            if known is not None:  # a version read just before: build on it
                head, body = None, known
                break
            head, body = self._read(current)
            if head is None:
                break
            chain.append((head, body))
            current = head["base"]
            if len(chain) > MAX_DEPTH + 1:
                raise self._damaged(digest, "its chain of deltas loops")
        data = body
        for head, middle in reversed(chain):
            end = len(data) - head["s"]
            data = data[: head["p"]] + middle + data[end:]
        if sha256(data) != digest:  # never hand back a wrong version
            raise self._damaged(digest, "its content does not match its name")
        self.remember(digest, data)
        return data

    def intact(self, digest: str) -> bool:
        """Whether `digest` and every base it is built on are on disk."""
        try:
            for _ in range(MAX_DEPTH + 2):
                head, _ = self._read(digest, header_only=True)
                if head is None:
                    return True
                digest = head["base"]
        except KeyError:
            return False
        return False

    def forget(self, digest: str) -> None:
        """Drop `digest` from memory (and a broken copy from disk) before storing it again."""
        self._recent.pop(digest, None)
        with contextlib.suppress(OSError):
            self.path(digest).unlink()

    def depth(self, digest: str) -> int:
        """How many deltas lie between `digest` and a whole copy (0: it is whole)."""
        head, _ = self._read(digest, header_only=True)
        return 0 if head is None else int(head["n"])

    def base_of(self, digest: str) -> str | None:
        """The object a delta is built on (None for a whole copy or a missing one)."""
        try:
            head, _ = self._read(digest, header_only=True)
        except KeyError:
            return None
        return None if head is None else head["base"]

    def _read(self, digest: str, header_only: bool = False) -> tuple[dict | None, bytes]:
        try:
            raw = self.path(digest).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise KeyError(digest) from None
        try:
            if not raw.startswith(_DELTA):
                return None, b"" if header_only else zlib.decompress(raw)
            payload = zlib.decompress(raw[1:])
            line, _, middle = payload.partition(b"\n")
            head = json.loads(line)
        except (zlib.error, ValueError):
            raise self._damaged(digest, "its bytes do not decompress") from None
        problem = _header_problem(head)
        if problem:
            raise self._damaged(digest, problem)
        return head, middle

    def sizes(self) -> dict[str, tuple[int, float]]:
        """sha -> (bytes on disk, modification time) of every stored object."""
        out: dict[str, tuple[int, float]] = {}
        with contextlib.suppress(FileNotFoundError):
            for sub in os.scandir(self.root):
                if not sub.is_dir():
                    continue
                for item in os.scandir(sub.path):
                    if item.name.startswith("."):
                        continue
                    with contextlib.suppress(OSError):
                        st = item.stat()
                        out[sub.name + item.name] = (st.st_size, st.st_mtime)
        return out

    def temp_files(self) -> list[Path]:
        """Temp files a killed write left behind."""
        found: list[Path] = []
        with contextlib.suppress(FileNotFoundError):
            for sub in os.scandir(self.root):
                if sub.is_dir():
                    found += [Path(i.path) for i in os.scandir(sub.path) if i.name.startswith(".")]
        return found


def changed_span(a: bytes, b: bytes) -> tuple[int, int, int]:
    """(start, end in a, end in b): the bytes of `a` and `b` between their common start
    and their common end."""
    prefix = _common_prefix(a, b)
    suffix = _common_suffix(a[prefix:], b[prefix:])
    return prefix, len(a) - suffix, len(b) - suffix


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common start of a and b (memcmp by halves, not byte by byte)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: bytes, b: bytes) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo
