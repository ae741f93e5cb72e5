"""docs/reference/settings.md: every setting (its default, what it accepts, its
environment variable, whether it needs `memcli trust`) from the settings model
(memcli.store.config, memcli.store.config_rules, memcli.store.trust), with the
meaning of each from the table below, and every other MEMCLI_* variable memcli reads.

A setting added to the model without a line in MEANINGS, or a variable read by the code
without a line in VARIABLES, fails a test (tests/unit/test_docs.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: `section.key` -> what it does, in a few words
MEANINGS: dict[str, str] = {
    "search.mode": "how search finds candidates: hybrid (both sides), semantic or keyword",
    "search.limit": "hits a search returns at most",
    "search.min_score": "hits scoring below this are left out (`--min-score`)",
    "search.semantic_weight": "weight of the cosine side of relevance",
    "search.keyword_weight": "weight of the BM25 side of relevance",
    "search.relevance_weight": "weight of relevance in the score",
    "search.recency_weight": "weight of recency (from `updated`, else `created`) in the score",
    "search.importance_weight": "weight of importance in the score",
    "search.confidence_weight": "weight of confidence in the score",
    "search.half_life_days": "days after which recency counts half",
    "search.episode_half_life_days": "the same for episodes (they fade faster)",
    "search.reflected_penalty": "no longer used: accepted so that older files still load",
    "search.neighbour_weight": "share of an adjacent turn's relevance an entry of an ordered "
    "log (episodes/, conversations/) borrows",
    "search.date_weight": "added to entries created in a period the query names "
    "(\"in August 2023\", \"last week\")",
    "search.correction_weight": "added, times relevance · (1 − relevance), to a correction's "
    "score: it comes before the fact it puts right",
    "search.gloss_vote": "how much the cosine counts, 0 to 1, for a Chinese text the model "
    "reads through its English gloss (index.gloss)",
    "search.candidate_pool": "candidates each side (semantic, keyword) brings",
    "search.keyword_saturation": "where the backend does not know a query's keyword mass "
    "(Milvus): the BM25 score at which the keyword share is 0.5",
    "search.keyword_floor": "keyword share a hit the model does not read needs",
    "search.semantic_lead": "the cosine's weight in relevance's semantic-led blend",
    "search.strong_relevance": "a query whose best hit is less relevant has no strong match: "
    "its three closest are shown as weak, and inject takes none",
    "search.strong_keyword": "the same on the keyword share, for a query the model does not read",
    "search.keyword_cosine": "where the model reads both texts, a shared word counts in full "
    "beside a cosine of at least this, in proportion below it",
    "search.relevance_floor": "hits less relevant than this (absolute, 0 to 1) are not "
    "returned: an off-topic query finds nothing",
    "search.bm25_k1": "BM25 term saturation",
    "search.bm25_b": "BM25 length normalisation",
    "index.backend": "where the index lives: local files in `.memcli/` or Milvus",
    "index.uri": "Milvus: a file path ending .db (Milvus Lite) or http(s)://host:19530",
    "index.token_env": "Milvus: the environment variable holding the server's token",
    "index.collection": "Milvus: the collection (one serves many workspaces)",
    "index.workspace": "Milvus: this workspace's partition key (\"\": folder name + path hash)",
    "index.model": "embedding model: \"\" for the bundled all-MiniLM-L6-v2, or a "
    "sentence-transformers model directory or name (changing it rebuilds the index)",
    "index.onnx": "embed queries without torch: numpy alone (BERT) or the local ONNX export",
    "index.gloss": "a model that reads English only embeds Chinese text as its English "
    "gloss, word by word through CC-CEDICT (a multilingual model reads it as written)",
    "index.ann_threshold": "entries from which the vector index is FAISS HNSW instead of exact",
    "index.hnsw_m": "HNSW graph degree",
    "index.hnsw_ef_search": "HNSW search breadth",
    "index.hnsw_ef_construction": "HNSW build breadth",
    "index.batch_size": "texts embedded per batch while indexing",
    "index.progress_threshold": "not used at present: accepted so that files that set it load",
    "inject.max_tokens": "token budget of the whole block (`--max-tokens`)",
    "inject.encoding": "tiktoken encoding the budget is counted in (offline files only)",
    "inject.similarity_weight": "weight of the search score when ranking candidates",
    "inject.confidence_weight": "weight of confidence when ranking candidates",
    "inject.reserved_share": "share of the budget kept for pinned entries and relevant "
    "corrections",
    "inject.relevance_floor": "cosine to the context at which an entry is relevant",
    "inject.keyword_relevance_floor": "lower cosine that counts when the entry also shares "
    "a word with the context",
    "inject.profile_importance": "preferences this important go into every block "
    "(corrections only where relevant)",
    "inject.prompt_parts": "things a task prompt names searched besides the whole prompt "
    "(0: only the whole)",
    "llm.provider": "none, openai (any OpenAI-compatible server), local (one without a key), "
    "claude-cli or codex-cli (the agent CLI you already run)",
    "llm.base_url": "openai / local: the server, e.g. http://127.0.0.1:11434/v1",
    "llm.model": "the model name (empty: the CLI's own for claude-cli / codex-cli)",
    "llm.api_key_env": "the environment variable holding the API key (never the key itself)",
    "llm.command": "claude-cli / codex-cli: the executable (default claude, codex)",
    "llm.timeout": "seconds an LLM call may take",
    "llm.retries": "retries of a failed LLM call",
    "compress.duplicate_threshold": "0.7·cosine + 0.3·word overlap at which two texts are one "
    "fact (chosen with bench/maintenance.py)",
    "compress.contradiction_similarity": "cosine or overlap a pair needs to be checked as a "
    "contradiction",
    "compress.forget_base": "base of the retention curve",
    "compress.forget_strength": "how much each access slows forgetting",
    "compress.forget_threshold": "retention below which an entry is forgotten (0: never)",
    "compress.episode_decay": "how many times faster episodes fade",
    "compress.consolidate_age_days": "age from which similar entries may be consolidated",
    "compress.consolidate_max_access": "entries accessed more often than this are not "
    "consolidated",
    "compress.consolidate_similarity": "cosine of a group's entries to its central one",
    "compress.consolidate_min_size": "entries a consolidated group needs",
    "compress.episode_age_days": "age from which episode notes move into memory.md / "
    "learnings.md",
    "compress.auto": "run compress after add and extract",
    "reflect.importance_sum": "importance added since the last reflection that triggers one",
    "reflect.min_entries": "entries added since the last reflection that a trigger needs",
    "reflect.cooldown_hours": "hours between two reflections",
    "reflect.theme_similarity": "each member's mean cosine to the rest of its theme",
    "reflect.min_evidence": "entries a theme needs",
    "reflect.max_insights": "insights one reflection writes at most",
    "reflect.window": "recent entries considered when forced with nothing new",
    "reflect.auto": "run reflect after add and extract when the trigger is met",
    "forget.scope": "what fades with age: machine (unconfirmed machine-written entries and "
    "episodes), all, or none",
    "layers.read": "the other layers this workspace reads, comma-separated: user (your "
    "per-user workspace) and paths; \"\" for none",
    "layers.user_types": "entry types whose writes go to the user layer unless told "
    "otherwise, comma-separated (e.g. preference)",
    "watch.autostart": "the prompt hooks and `memcli mcp` start `memcli watch` for their "
    "workspace when none runs (docs/agents.md)",
    "watch.idle_exit_minutes": "a watcher they started leaves after this many minutes "
    "without a request or a change",
}

#: every MEMCLI_* variable memcli reads besides MEMCLI_<SECTION>_<KEY>: name -> meaning
VARIABLES: dict[str, str] = {
    "MEMCLI_WORKSPACE": "the workspace, unless `--workspace` names one",
    "MEMCLI_TORCH_INDEX": "`scripts/setup.sh`: the index it takes torch's CPU build from, "
    "when it answers (default https://download.pytorch.org/whl/cpu)",
    "MEMCLI_NO_DAEMON": "any non-empty value: never ask a running `memcli watch`; work in-process",
    "MEMCLI_NO_QUICK": "any non-empty value: run `search`, `inject` and `get` through the full "
    "CLI, not the quick path (same output; for debugging)",
    "MEMCLI_PAGER": "the pager for long output (then `$PAGER`, then `less -FRX`); `cat` "
    "turns paging off",
    "MEMCLI_MCP_TOKEN": "`memcli mcp --http`: the bearer token, granted the `-w` workspace",
    "MEMCLI_MCP_MAX_CONNECTIONS": "`memcli mcp --http`: connections at once (256)",
    "MEMCLI_MCP_READ_TIMEOUT": "`memcli mcp --http`: seconds a client has to send a request "
    "(10)",
    "MEMCLI_MCP_MAX_BODY_MB": "`memcli mcp --http`: largest request body in MB (4)",
    "MEMCLI_MILVUS_TOKEN": "the Milvus token (the default of `[index] token_env`)",
    "MEMCLI_MAX_FILE_MB": "largest memory file read, in MB (32)",
    "MEMCLI_MAX_TRANSCRIPT_LINE_MB": "longest line of a transcript read, in MB (16)",
    "MEMCLI_LOCK_TIMEOUT": "seconds to wait for another memcli process's file lock (60)",
    "MEMCLI_NO_EXCHANGE": "any non-empty value: write files without Linux's atomic rename exchange "
    "(as on other systems; for tests)",
}


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def settings_rows() -> list[tuple[str, str, Any]]:
    """(section, key, default) of every setting, in the model's order."""
    from memcli.store import config

    rows = []
    for section in dataclasses.fields(config.Settings):
        if section.name in config.SECTIONS:
            table = section.default_factory()  # type: ignore[misc]
            rows += [(section.name, f.name, getattr(table, f.name))
                     for f in dataclasses.fields(table)]  # fmt: skip
    return rows


def settings_page() -> str:
    from memcli.store import trust
    from memcli.store.config_rules import kind_name, rule_of
    from memcli.surfaces.docgen.markdown import HEADER, REGENERATE, escape

    lines = [
        "# Settings reference",
        "",
        HEADER.format(cmd=REGENERATE).rstrip(),
        "",
        "Every key of `memcli.toml` (in the workspace) and of your own",
        "`~/.config/memcli/config.toml` (`$XDG_CONFIG_HOME`); the same tables in both.",
        "Each can also be set as the environment variable shown. **trust**: from a",
        "workspace's `memcli.toml` the setting applies only once you approve the file with",
        "`memcli trust` (see [Security](../security.md)).",
        "",
    ]
    current = None
    for section, key, default in settings_rows():
        if section != current:
            if current is not None:
                lines.append("")
            current = section
            lines += [f"## [{section}]", "", "| key | default | accepts | environment | "
                      "what it does |", "|---|---|---|---|---|"]  # fmt: skip
        name = f"{section}.{key}"
        rule = rule_of(name, default)
        accepts = kind_name(default)
        if rule.choices or rule.low is not None or rule.high is not None:
            accepts += ", " + rule.describe()
        sensitive = key in trust.SENSITIVE.get(section, ()) or key in trust.UNITS.get(section, ())
        meaning = escape(MEANINGS.get(name, "")) + (" **trust**" if sensitive else "")
        env = f"`MEMCLI_{section.upper()}_{key.upper()}`"
        lines.append(f"| `{key}` | {_value(default)} | {accepts} | {env} | {meaning} |")
    lines += [
        "",
        "## [synonyms]",
        "",
        "Words a keyword search treats as one: `word = [\"other\", \"words\"]`, e.g.",
        '`k8s = ["kubernetes"]`. They expand keyword queries and `--keyword` filters.',
        "",
        "## Environment variables",
        "",
        "Every `MEMCLI_*` variable memcli reads. Each setting above is also",
        "`MEMCLI_<SECTION>_<KEY>` (e.g. `MEMCLI_SEARCH_LIMIT=5`); booleans accept",
        "`1 true yes on` and `0 false no off`, any case, and any other value is an error.",
        "",
        "| variable | what it does |",
        "|---|---|",
        *[f"| `{name}` | {escape(what)} |" for name, what in VARIABLES.items()],
        "| `MEMCLI_<SECTION>_<KEY>` | one setting, as in the tables above |",
        "",
    ]
    return "\n".join(lines).rstrip() + "\n"

