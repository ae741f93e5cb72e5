"""memcli as a plugin of Simon Willison's `llm` CLI (`pip install 'memcli[llm]'`; the entry
point `memcli = "memcli.surfaces.llm_plugin"` in the `llm` group of pyproject.toml).

- Fragment loader `memcli:`: `llm -f memcli:"How should I write the tests?" "…"` puts the
  memory block for that query (token-budgeted, as `memcli inject -q`) before the prompt.
  `memcli:` alone gives the most important memories. The workspace is memcli's usual one
  (MEMCLI_WORKSPACE, else the nearest one above the current directory, else the default).
- Tools `memcli_search` and `memcli_remember` (`llm -T memcli_search …`): a model with
  tool support looks things up and remembers what the user states.

`llm` loads every plugin on each run: this module imports only `llm`; memcli is imported
when a loader or tool is used.
"""

from __future__ import annotations

import llm

#: the block's budget for a fragment (the inject default is meant for a whole prompt)
FRAGMENT_TOKENS = 1500


def memcli_fragment(argument: str) -> llm.Fragment:
    """The memory block for the query `argument` (the text after `memcli:`)."""
    from memcli.core.errors import MemcliError
    from memcli.core.requests import InjectRequest
    from memcli.services.memory import shared_memory
    from memcli.surfaces import operations

    request = InjectRequest(argument.strip() or None, max_tokens=FRAGMENT_TOKENS)
    try:
        packed = operations.inject(shared_memory(None), request)
    except MemcliError as exc:
        raise ValueError(f"memcli: {exc}") from None  # what llm expects of a loader
    return llm.Fragment(packed.text, f"memcli:{argument}")


def memcli_search(query: str, limit: int = 5) -> str:
    """Search the user's long-term memory (preferences, facts about them and their
    projects, lessons from past work). Returns one memory per line: id, type, text."""
    from memcli.core.requests import SearchQuery
    from memcli.services.memory import shared_memory
    from memcli.surfaces import operations

    request = SearchQuery(query, limit=max(1, min(int(limit), 20)))
    hits = operations.search(shared_memory(None), request)
    if not hits:
        return "no memories found"
    return "\n".join(f"{h.entry.id} [{h.entry.type}] {h.entry.text}" for h in hits)


def memcli_remember(statement: str, memory_type: str = "fact") -> str:
    """Remember something lasting the user said: a preference, a fact about them or their
    work, a correction, a skill or a lesson (memory_type). The same statement again
    updates the existing memory."""
    from memcli.core.requests import AddRequest
    from memcli.services.memory import shared_memory
    from memcli.surfaces import operations

    request = AddRequest(statement, type=memory_type, source="llm")
    result = operations.add(shared_memory(None), request)
    return f"{result.action} {result.entry.id} ({result.entry.type})"


@llm.hookimpl
def register_fragment_loaders(register) -> None:  # noqa: ANN001 - llm's register callback
    register("memcli", memcli_fragment)


@llm.hookimpl
def register_tools(register) -> None:  # noqa: ANN001 - llm's register callback
    register(memcli_search)
    register(memcli_remember)
