"""Settings: flag > MEMCLI_* environment > the workspace's memcli.toml > the user's
config.toml > defaults. Read once, passed down.

memcli.toml and the user's `$XDG_CONFIG_HOME/memcli/config.toml` have one table per
section below; environment variables are named MEMCLI_<SECTION>_<KEY> (e.g.
MEMCLI_SEARCH_HALF_LIFE_DAYS=14). A workspace's memcli.toml sets the settings that could
send data or read secrets (memcli.store.trust.SENSITIVE) only once the user trusts it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from memcli.core.errors import ConfigError, MemcliError
from memcli.core.models import CONFIG_FILE
from memcli.core.records import record
from memcli.store.config_rules import BadValue, convert


@record(frozen=True)
class SearchSettings:
    """Ranking weights and defaults of `search` (see README for the formula)."""

    mode: str = "hybrid"
    limit: int = 10
    min_score: float = 0.0
    semantic_weight: float = 0.55
    keyword_weight: float = 0.45
    #: the cosine's weight in relevance's semantic-led blend (the keyword share has
    #: the rest); relevance is the better of that blend and the balanced one
    semantic_lead: float = 0.65
    relevance_weight: float = 1.0
    recency_weight: float = 0.05
    importance_weight: float = 0.05
    confidence_weight: float = 0.02
    half_life_days: float = 30.0
    episode_half_life_days: float = 7.0  # episodic notes fade faster
    #: no longer used (evidence of a reflection keeps its rank); accepted so a
    #: memcli.toml that sets it still loads
    reflected_penalty: float = 0.0
    #: share of an adjacent entry's relevance an entry of an ordered log borrows
    #: (combined as 1 - (1 - own)(1 - lent): relevance stays at most 1)
    neighbour_weight: float = 0.6
    #: added to entries created within a period the query names ("in August 2023")
    date_weight: float = 0.1
    #: added, times relevance · (1 - relevance), to a correction's score: the fact it
    #: puts right comes after it ("which Go version now": "Correction: all services moved
    #: to Go 1.23" before "written in Go 1.22"); the score stays at most 1 (bench/README.md
    #: "Corrections before what they correct")
    correction_weight: float = 0.15
    #: how much the cosine counts for a Chinese text the model reads through its English
    #: gloss (index.gloss; memcli.index.gloss), 0 to 1: a gloss reads less well than
    #: English written as such (bench/README.md "Chinese through an English gloss")
    gloss_vote: float = 0.75
    candidate_pool: int = 200
    #: where the backend does not know a query's keyword mass (Milvus): the BM25 score at
    #: which the keyword share reaches 0.5 (bm25 / (bm25 + this))
    keyword_saturation: float = 10.0
    #: hits the model reads whose relevance (0..1, see memcli.logic.search) is below this
    #: are not returned: a query about something the memory never mentions finds
    #: nothing. About the cosine floor of before (0.25) on this scale (0.65 × 0.25); on
    #: three personas' notes at most 2 % of answerable queries lose every hit
    #: (bench/README.md "One score")
    relevance_floor: float = 0.15
    #: the same for hits the model does not read (a Chinese query or entry with the
    #: bundled model): the keyword share they need
    keyword_floor: float = 0.06
    #: a query whose best hit is less relevant than this has no strong match: its three
    #: closest hits are shown, marked weak, and inject and the hooks take none
    strong_relevance: float = 0.2
    #: the same for a query the model does not read, on the keyword share
    strong_keyword: float = 0.1
    #: where the model reads both texts, a shared word counts in full beside a cosine of
    #: at least this, in proportion below it: a word two unrelated texts share is a
    #: coincidence ("blood type" / "Types on a split keyboard"; bench/README.md "A shared
    #: word beside an unrelated meaning")
    keyword_cosine: float = 0.2
    bm25_k1: float = 0.9
    bm25_b: float = 0.4


@record(frozen=True)
class IndexSettings:
    """Embedding model and vector index shape."""

    backend: str = "local"  # memcli.index.backend.BACKENDS: where the index lives
    #: backend = "milvus": a file path ending .db (Milvus Lite) or http(s)://host:port
    uri: str = ""
    #: the environment variable holding the Milvus token (never the token itself)
    token_env: str = "MEMCLI_MILVUS_TOKEN"
    collection: str = "memcli"  # one collection serves many workspaces
    workspace: str = ""  # this workspace's partition key ("" = its folder name + path hash)
    model: str = ""  # "" = the bundled all-MiniLM-L6-v2
    onnx: bool = True  # query embeddings without torch (numpy alone or the ONNX export)
    #: a model that reads English only embeds Chinese text as its English gloss
    #: (memcli.index.gloss); a multilingual model reads it as written
    gloss: bool = True
    ann_threshold: int = 20000
    hnsw_m: int = 32
    hnsw_ef_search: int = 128
    hnsw_ef_construction: int = 80
    batch_size: int = 64
    progress_threshold: int = 300


@record(frozen=True)
class InjectSettings:
    """Defaults of `inject`."""

    max_tokens: int = 2000
    encoding: str = "cl100k_base"
    #: weight of a hit's search score; 0.6 until the score became the weighted share of
    #: its parts (÷ 1.22 with the default search weights): 0.73 keeps the balance with
    #: confidence that bench/inject_agent.py was tuned with
    similarity_weight: float = 0.73
    confidence_weight: float = 0.4
    reserved_share: float = 0.3
    #: with a context, an entry is relevant when its cosine similarity to the context is
    #: at least relevance_floor, or at least keyword_relevance_floor while it also shares
    #: a word with it (BM25 > 0); chosen on bench/inject.py's contexts (README "Inject")
    relevance_floor: float = 0.35
    keyword_relevance_floor: float = 0.25
    #: preferences this important apply to every conversation (a correction goes into a
    #: block only where it is relevant)
    profile_importance: float = 0.9
    #: things a task prompt names (noun phrases, clauses) searched besides the whole
    #: prompt, each one more search (0: the whole prompt only)
    prompt_parts: int = 3


#: [llm] provider values (memcli.adapters.llm): none, an OpenAI-compatible endpoint, a
#: local one without a key (Ollama, llama.cpp), the Claude Code or Codex CLI


@record(frozen=True)
class LLMSettings:
    """Optional LLM (memcli.adapters.llm): `provider` one of LLM_PROVIDERS; `base_url`,
    `api_key_env` for openai and local; `command` the executable of claude-cli or
    codex-cli (default `claude`, `codex`); `model` for any (empty: the CLI's own)."""

    provider: str = "none"
    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    command: str = ""
    timeout: float = 30.0
    retries: int = 2


@record(frozen=True)
class CompressSettings:
    """`compress`: duplicates, contradictions, forgetting, consolidation."""

    #: a pair is one fact when 0.7·cosine + 0.3·word overlap (0.3/0.7 in Chinese) reaches
    #: this and nothing structural tells them apart (memcli.logic.similarity); a contradiction
    #: needs the cosine or the overlap ≥ contradiction_similarity. Chosen on
    #: bench/data/*.jsonl (bench/maintenance.py)
    duplicate_threshold: float = 0.6
    contradiction_similarity: float = 0.5
    forget_base: float = 0.9
    forget_strength: float = 1.5
    forget_threshold: float = 0.1
    episode_decay: float = 3.0  # episodes fade this many times faster
    consolidate_age_days: float = 30.0
    consolidate_max_access: int = 1
    consolidate_similarity: float = 0.55
    consolidate_min_size: int = 3
    episode_age_days: float = 7.0
    auto: bool = False  # run after add/extract


FORGET_SCOPES = ("machine", "all", "none")


@record(frozen=True)
class ForgetSettings:
    """What age-based forgetting and consolidation may touch (docs/maintenance.md): "machine"
    (entries a program wrote and nobody confirmed, and episodes), "all" (every entry not
    pinned, not a reflection, importance < 0.9) or "none"."""

    scope: str = "machine"


@record(frozen=True)
class ReflectSettings:
    """`reflect`: when it triggers and how it finds themes (docs/maintenance.md)."""

    importance_sum: float = 4.0
    min_entries: int = 2
    cooldown_hours: float = 1.0
    #: a theme's cohesion: every member's mean cosine similarity to the other members is
    #: at least this (chosen on the tune half of bench/data/reflect_themes.jsonl:
    #: bench/reflect_quality.py; Chinese texts use the overlap of their words instead)
    theme_similarity: float = 0.25
    min_evidence: int = 3  # entries a theme needs before it is a pattern
    max_insights: int = 3
    window: int = 50  # recent entries considered when forced with nothing new
    auto: bool = False  # run after add/extract when the trigger is met


@record(frozen=True)
class LayersSettings:
    """The other layers this workspace reads (docs/layers.md, memcli.services.layers):
    `read` names them, comma-separated: "user" (the per-user workspace) and paths
    (relative to the workspace; a trusted-only setting); "" reads no other layer.
    `user_types`: comma-separated entry types whose writes go to the user layer unless
    told otherwise (e.g. "preference"); "" keeps every write in the nearest layer."""

    read: str = "user"
    user_types: str = ""


@record(frozen=True)
class WatchSettings:
    """The watcher the agents' path starts (memcli.surfaces.daemon.autostart): the prompt
    hooks and `memcli mcp` start `memcli watch` for their workspace when none runs
    (`autostart`), and a watcher started that way leaves after `idle_exit_minutes`
    without a request or a change to the files."""

    autostart: bool = True
    idle_exit_minutes: float = 240.0


@record(frozen=True)
class Settings:
    """Every setting of a workspace, by section (memcli.toml's tables)."""

    search: SearchSettings = field(default_factory=SearchSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    inject: InjectSettings = field(default_factory=InjectSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    compress: CompressSettings = field(default_factory=CompressSettings)
    reflect: ReflectSettings = field(default_factory=ReflectSettings)
    forget: ForgetSettings = field(default_factory=ForgetSettings)
    layers: LayersSettings = field(default_factory=LayersSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    #: groups of equivalent words from the [synonyms] table (case-folded)
    synonyms: tuple[tuple[str, ...], ...] = ()
    #: `section.key` settings of an untrusted memcli.toml that were not applied
    ignored: tuple[str, ...] = ()
    #: values in a settings file that do not fit their setting ("file:line: what"); the
    #: setting keeps its value from the other sources (`doctor` lists them)
    problems: tuple[str, ...] = ()


SECTIONS = (
    "search",
    "index",
    "inject",
    "llm",
    "compress",
    "reflect",
    "forget",
    "layers",
    "watch",
)
#: tables besides the settings: [synonyms] (groups of equivalent words) and [files]
#: (the workspace's curated files, memcli.store.config_files)
TABLES = ("synonyms", "files")

#: settings memcli no longer has, by table: a settings file that still sets them loads
#: (they are ignored); any other key of such a table is an error. `[add]
#: dedup_threshold`: `add` updates an entry with the same normalized text and leaves
#: near-duplicates in other words to `compress` (README "Compress and reflect"), which
#: keeps `add` free of the embedding model.
RETIRED: dict[str, tuple[str, ...]] = {"add": ("dedup_threshold",)}


def load_settings(
    workspace: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    user_config: Path | None = None,
) -> Settings:
    """Build Settings for `workspace` from the user's config.toml (`user_config`, default
    under $XDG_CONFIG_HOME/memcli), memcli.toml (its sensitive settings only when the
    workspace is trusted), MEMCLI_* variables and overrides."""
    from memcli.store import trust

    env = os.environ if env is None else env
    user_path = trust.user_config_file(env) if user_config is None else user_config
    user_table, _ = _read_table(user_path)
    path = workspace / CONFIG_FILE
    table, digest = _read_table(path, workspace)
    if "files" in user_table:
        raise ConfigError(
            f"{user_path}: [files] names a workspace's curated files",
            hint="declare them in the workspace's memcli.toml",
        )
    from memcli.store.config_files import registry_from

    registry_from(table.get("files"), path)  # a bad [files] entry: an error, file:line
    ignored: list[str] = []
    risky = trust.withheld(table)  # [index] where-the-index-lives settings as one unit
    if risky and not trust.is_trusted(workspace, env, trust.sealed(workspace, table, digest or "")):
        for name, key in risky:
            _check_key(name, key, path)
            ignored.append(f"{name}.{key}")
        table = {
            name: {k: v for k, v in given.items() if f"{name}.{k}" not in ignored}
            if isinstance(given, dict)
            else given
            for name, given in table.items()
        }
    sections: dict[str, Any] = {}
    problems: list[str] = []
    for section in (f for f in dataclasses.fields(Settings) if f.name in SECTIONS):
        cls = section.default_factory()  # type: ignore[misc]
        values: dict[str, Any] = {}
        known = {f.name: f for f in dataclasses.fields(cls)}
        for source, where in ((user_table, user_path), (table, path)):
            given = source.get(section.name, {})
            if not isinstance(given, dict):
                raise ConfigError(f"{where}: [{section.name}] must be a table")
            for key, value in given.items():
                _check_key(section.name, key, where)
                full = f"{section.name}.{key}"
                try:
                    values[key] = convert(full, getattr(cls, key), value)
                except BadValue as exc:
                    line = line_of(where, section.name, key)
                    problems.append(
                        f"{where}{f':{line}' if line else ''}: {full} = {_toml(value)} {exc}"
                        f"; using {_toml(values.get(key, getattr(cls, key)))} instead"
                    )
        for key in known:
            name = f"MEMCLI_{section.name.upper()}_{key.upper()}"
            if name in env:
                try:
                    values[key] = convert(f"{section.name}.{key}", getattr(cls, key), env[name])
                except BadValue as exc:
                    raise ConfigError(
                        f"{name}={env[name]!r}: {exc}", hint=f"fix or unset {name}"
                    ) from None
        for key, value in (overrides or {}).get(section.name, {}).items():
            if value is not None:
                values[key] = value
        sections[section.name] = dataclasses.replace(cls, **values)
    synonyms = _synonym_groups(user_table.get("synonyms", {}), user_path)
    synonyms += _synonym_groups(table.get("synonyms", {}), path)
    return Settings(**sections, synonyms=synonyms, ignored=tuple(ignored), problems=tuple(problems))


def line_of(path: Path, section: str, key: str) -> int | None:
    """The line of `path` that sets `key` of `[section]` (None: not found)."""
    import re

    from memcli.store.links import read_settings

    try:
        lines = read_settings(path).decode("utf-8").splitlines()
    except (MemcliError, OSError, UnicodeDecodeError):
        return None
    current = ""
    pattern = re.compile(rf"\s*(?:{re.escape(section)}\s*\.\s*)?[\"']?{re.escape(key)}[\"']?\s*=")
    for number, line in enumerate(lines, 1):
        header = re.match(r"\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1)
            continue
        if pattern.match(line) and (current == section or line.lstrip().startswith(section)):
            return number
    return None


def _toml(value: Any) -> str:
    """A value as it would be written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _read_table(path: Path, root: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """A settings file's tables (checked for unknown ones) and the sha256 of its bytes;
    ({}, None) when there is no such file. `root`: the workspace whose memcli.toml it is
    (read by the link rule, memcli.store.links.read_settings)."""
    import hashlib

    from memcli.store.links import read_settings

    try:
        data = read_settings(path, root)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
    import tomllib  # only where a settings file exists (≈ 5 ms of a cold read otherwise)

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}", hint="fix the TOML syntax") from None
    unknown = sorted(set(table) - set(SECTIONS) - set(TABLES) - set(RETIRED))
    if unknown:
        raise ConfigError(
            f"{path}: unknown table [{unknown[0]}]",
            hint=f"known tables: {', '.join((*SECTIONS, *TABLES))}",
        )
    for name, retired in RETIRED.items():
        given = table.pop(name, {})
        if not isinstance(given, dict):
            raise ConfigError(f"{path}: [{name}] must be a table")
        for key in given:
            if key not in retired:
                raise ConfigError(
                    f"{path}: unknown setting {name}.{key}",
                    hint=f"[{name}] has no settings any more; remove the table",
                )
    return table, hashlib.sha256(data).hexdigest()


def _check_key(section: str, key: str, where: Path) -> None:
    cls = {f.name: f for f in dataclasses.fields(Settings)}[section].default_factory
    known = [f.name for f in dataclasses.fields(cls())]  # type: ignore[misc]
    if key not in known:
        raise ConfigError(
            f"{where}: unknown setting {section}.{key}",
            hint=f"known keys of [{section}]: {', '.join(known)}",
        )


def _synonym_groups(table: Any, path: Path) -> tuple[tuple[str, ...], ...]:
    """`word = ["other", "words"]` lines -> groups of equivalent, case-folded words."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [synonyms] must be a table of word = [synonyms]")
    groups = []
    for word, others in table.items():
        if isinstance(others, str):
            others = [others]
        if not isinstance(others, list) or not all(isinstance(o, str) for o in others):
            raise ConfigError(f"{path}: synonyms.{word} must be a list of words")
        group = tuple(dict.fromkeys(w.strip().casefold() for w in [word, *others] if w.strip()))
        if len(group) > 1:
            groups.append(group)
    return tuple(groups)
