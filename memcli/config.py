"""Settings: flag > MEMCLI_* environment > memcli.toml > defaults. Read once, passed down.

memcli.toml has one table per section below; environment variables are named
MEMCLI_<SECTION>_<KEY> (e.g. MEMCLI_SEARCH_HALF_LIFE_DAYS=14).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcli.errors import ConfigError

CONFIG_FILE = "memcli.toml"


@dataclass(frozen=True)
class SearchSettings:
    """Ranking weights and defaults of `search` (see README for the formula)."""

    mode: str = "hybrid"
    limit: int = 10
    min_score: float = 0.0
    semantic_weight: float = 0.5
    keyword_weight: float = 0.5
    relevance_weight: float = 1.0
    recency_weight: float = 0.05
    importance_weight: float = 0.05
    confidence_weight: float = 0.02
    half_life_days: float = 30.0
    episode_half_life_days: float = 7.0  # episodic notes fade faster
    reflected_penalty: float = 0.5
    neighbour_weight: float = 0.4
    candidate_pool: int = 200
    bm25_k1: float = 0.9
    bm25_b: float = 0.4


@dataclass(frozen=True)
class IndexSettings:
    """Embedding model and vector index shape."""

    model: str = ""  # "" = the bundled all-MiniLM-L6-v2
    onnx: bool = True  # query embeddings through the ONNX export (no torch per process)
    ann_threshold: int = 20000
    hnsw_m: int = 32
    hnsw_ef_search: int = 128
    hnsw_ef_construction: int = 80
    batch_size: int = 64
    progress_threshold: int = 300


@dataclass(frozen=True)
class AddSettings:
    """Behaviour of `add`."""

    dedup_threshold: float = 0.95


@dataclass(frozen=True)
class InjectSettings:
    """Defaults of `inject`."""

    max_tokens: int = 2000
    encoding: str = "cl100k_base"
    similarity_weight: float = 0.6
    confidence_weight: float = 0.4
    reserved_share: float = 0.3


@dataclass(frozen=True)
class LLMSettings:
    """Optional OpenAI-compatible LLM."""

    provider: str = "none"
    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 30.0
    retries: int = 2


@dataclass(frozen=True)
class CompressSettings:
    """`compress`: duplicates, contradictions, forgetting (seed 002), consolidation."""

    duplicate_threshold: float = 0.95
    contradiction_similarity: float = 0.75
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


@dataclass(frozen=True)
class ReflectSettings:
    """`reflect`: when it triggers and how it finds themes (DESIGN §6)."""

    importance_sum: float = 4.0
    min_entries: int = 2
    cooldown_hours: float = 1.0
    theme_similarity: float = 0.55
    max_insights: int = 3
    window: int = 50  # recent entries considered when forced with nothing new
    auto: bool = False  # run after add/extract when the trigger is met


@dataclass(frozen=True)
class Settings:
    search: SearchSettings = field(default_factory=SearchSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    add: AddSettings = field(default_factory=AddSettings)
    inject: InjectSettings = field(default_factory=InjectSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    compress: CompressSettings = field(default_factory=CompressSettings)
    reflect: ReflectSettings = field(default_factory=ReflectSettings)
    #: groups of equivalent words from the [synonyms] table (case-folded)
    synonyms: tuple[tuple[str, ...], ...] = ()


SECTIONS = ("search", "index", "add", "inject", "llm", "compress", "reflect")


def load_settings(
    workspace: Path,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Build Settings for `workspace` from memcli.toml, MEMCLI_* variables and overrides."""
    env = os.environ if env is None else env
    path = workspace / CONFIG_FILE
    table: dict[str, Any] = {}
    if path.is_file():
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}", hint="fix the TOML syntax") from None
    unknown = sorted(set(table) - set(SECTIONS) - {"synonyms"})
    if unknown:
        raise ConfigError(
            f"{path}: unknown table [{unknown[0]}]",
            hint=f"known tables: {', '.join((*SECTIONS, 'synonyms'))}",
        )
    sections: dict[str, Any] = {}
    for section in (f for f in dataclasses.fields(Settings) if f.name in SECTIONS):
        cls = section.default_factory()  # type: ignore[misc]
        values: dict[str, Any] = {}
        given = table.get(section.name, {})
        if not isinstance(given, dict):
            raise ConfigError(f"{path}: [{section.name}] must be a table")
        known = {f.name: f for f in dataclasses.fields(cls)}
        for key, value in given.items():
            if key not in known:
                raise ConfigError(
                    f"{path}: unknown setting {section.name}.{key}",
                    hint=f"known keys of [{section.name}]: {', '.join(known)}",
                )
            values[key] = _coerce(getattr(cls, key), value, f"{path}: {section.name}.{key}")
        for key in known:
            name = f"MEMCLI_{section.name.upper()}_{key.upper()}"
            if name in env:
                values[key] = _coerce(getattr(cls, key), env[name], name)
        for key, value in (overrides or {}).get(section.name, {}).items():
            if value is not None:
                values[key] = value
        sections[section.name] = dataclasses.replace(cls, **values)
    return Settings(**sections, synonyms=_synonym_groups(table.get("synonyms", {}), path))


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


def _coerce(default: Any, value: Any, where: str) -> Any:
    kind = type(default)
    try:
        if kind is bool:
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(value)
        if kind is float:
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {value!r} is not a valid {kind.__name__}") from None
