"""The things an agent's task prompt names, each a query of its own (docs/search.md,
Agent task prompts).

"Add an index to the invoices table and write a migration for it" names a table and a
migration: the lessons about each should reach the block, but one embedding of the whole
prompt sits between them and is close to neither. `prompt_parts` splits a prompt into
its sentences and their clauses (at "and", "then", commas, semicolons; 然后, 顺便, 并且,
，, 、 in Chinese), and finds the noun phrases of each clause (a clause cut at its
prepositions, each piece from its determiner on: "the invoices table", "a migration");
inject searches for the whole prompt and for each part and merges the hits within one
budget (memcli.services.inject).

Pure and cheap (regular expressions, no model, no tagger): it runs for every prompt a
hook sends.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memcli.index.tokenize import STOP_WORDS

if TYPE_CHECKING:
    from memcli.logic.search import Hit

#: hits taken from the search for a part: a part contributes its best few
PART_LIMIT = 50
#: only the start of a long context is split: the prompt comes first in a hook's context
#: (memcli.surfaces.hooks.hook_context), the transcript's turns after it
SPLIT_CHARS = 600
#: a part shorter than this many characters of content is not worth a search
MIN_PART_CHARS = 3

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？；;\n]+")
_CLAUSE = re.compile(
    r",?\s+(?:and\s+then|and\s+also|and|then|but|also|plus|after\s+that)\s+"
    r"|,\s+|[，、：:]|然后|顺便|并且|同时|以及|还要|另外|之后|接着|再把|再",
    re.IGNORECASE,
)
_PREPOSITION = re.compile(
    r"\s+(?:to|for|in|on|into|onto|from|with|without|at|by|about|of|under|over|"
    r"against|across|behind|between|inside|per|via|within|that|which|who)\s+",
    re.IGNORECASE,
)
_DETERMINER = re.compile(
    r"\b(?:the|a|an|this|that|these|those|my|our|your|its|their|his|her|every|each|"
    r"all|some|any)\s+",
    re.IGNORECASE,
)
#: words that carry no topic: a part made of them only is dropped (the keyword index's
#: stop words, and the words of a request that name no thing)
_EMPTY_WORDS = STOP_WORDS | frozenset(
    """please make sure something anything everything thing things one find out there
    here morning today tonight yesterday tomorrow week change changes stuff way""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def prompt_parts(text: str, max_parts: int) -> list[str]:
    """The things `text` names, each worth a search of its own besides the whole: its
    noun phrases, then its clauses (when it has more than one); each once (case aside),
    none equal to the whole, none without a content word; at most `max_parts`, from the
    first SPLIT_CHARS characters only. A prompt that names one thing (one noun phrase,
    or one clause where none is found, as in Chinese) gives []: the whole is that
    thing."""
    head = text[:SPLIT_CHARS].strip()
    clauses = list(
        {_key(c): c for s in _pieces(_SENTENCE_END, head) for c in _pieces(_CLAUSE, s)}.values()
    )
    phrases = _useful([p for c in clauses for p in noun_phrases(c)], _key(text))
    if len(phrases) == 1 or (not phrases and len(clauses) < 2):
        return []
    parts = _useful(phrases + (clauses if len(clauses) > 1 else []), _key(text))
    return parts[:max_parts] if len(parts) > 1 else []


def _useful(parts: list[str], whole: str) -> list[str]:
    """`parts` each once (case aside), without the whole and those with no content."""
    seen = {whole}
    kept = []
    for part in parts:
        key = _key(part)
        if key not in seen and has_content(part):
            seen.add(key)
            kept.append(part)
    return kept


def merge_hits(
    searches: Sequence[tuple[str, Sequence[Hit]]], keep: Callable[[Hit, str], bool]
) -> tuple[list[Hit], set[str]]:
    """One hit per entry from the searches (query, its hits) for a prompt and its parts
    (the whole prompt's first), best first, and the ids of the entries some search
    found relevant: an entry's hit is its best scored one that `keep(hit, query)` takes,
    else its hit for the whole prompt."""
    best: dict[str, Hit] = {}
    kept: set[str] = set()
    for i, (query, hits) in enumerate(searches):
        for hit in hits:
            key = hit.entry.id
            if keep(hit, query):
                if key not in kept or hit.score > best[key].score:
                    best[key] = hit
                    kept.add(key)
            elif i == 0 and key not in best:
                best[key] = hit
    return sorted(best.values(), key=lambda h: -h.score), kept


def noun_phrases(clause: str) -> list[str]:
    """The pieces of `clause` between its prepositions (and relative pronouns), each
    from its determiner on, the first one (where the verb is) only when it has one:
    "Add an index to the invoices table" → "an index", "the invoices table"; "… older
    than three years from Postgres" → "Postgres". None equal to the clause."""
    found = []
    for i, piece in enumerate(_pieces(_PREPOSITION, clause)):
        match = _DETERMINER.search(piece)
        if match is None and i == 0:
            continue
        phrase = piece[match.start() :].strip() if match else piece
        if phrase != clause.strip():
            found.append(phrase)
    return found


def has_content(part: str) -> bool:
    """Whether `part` names something: a word that is not a function word, of
    MIN_PART_CHARS letters or more, or two CJK characters."""
    if len(_CJK.findall(part)) >= 2:
        return True
    return any(
        len(w) >= MIN_PART_CHARS and w.casefold() not in _EMPTY_WORDS for w in _WORD.findall(part)
    )


_LEADING = re.compile(r"^(?:and|then|also|so|but|or)\s+", re.IGNORECASE)
_EDGES = " \t,.;:!?，。"


def _pieces(pattern: re.Pattern[str], text: str) -> list[str]:
    """The non-empty pieces of `text` split at `pattern`, without edge punctuation or a
    leading connective ("Then rotate the keys" → "rotate the keys")."""
    pieces = (_LEADING.sub("", p.strip(_EDGES)).strip(_EDGES) for p in pattern.split(text) if p)
    return [p for p in pieces if p]


def _key(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .!?。")
