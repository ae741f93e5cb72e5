"""What each setting accepts: its type (from the default in memcli.store.config), a
range or a list of choices. The settings files, the MEMCLI_* environment and
`memcli config set` all go through `convert`, so a value one of them accepts the others
accept too.

Booleans: true/false in TOML; from text (the environment, `config set`) one of
BOOLEAN_WORDS, any case. A number setting with no rule here must be ≥ 0.
"""

from __future__ import annotations

import math
from typing import Any

from memcli.core.records import record
from memcli.core.requests import MODES

#: memcli.adapters.llm's providers: an OpenAI-compatible server (openai, local: no key)
#: or the agent CLI a person already runs (claude-cli, codex-cli)
LLM_PROVIDERS = ("none", "openai", "local", "claude-cli", "codex-cli")

#: the spellings of a boolean in text, any case
BOOLEAN_WORDS: dict[str, bool] = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}


@record(frozen=True)
class Rule:
    """The values a setting accepts: low ≤ value (low < value when low_open) ≤ high, or
    one of `choices`."""

    low: float | None = 0.0
    high: float | None = None
    low_open: bool = False
    choices: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.low is not None and self.high is not None:
            return f"between {_num(self.low)} and {_num(self.high)}"
        if self.low is not None:
            return f"{'above' if self.low_open else 'at least'} {_num(self.low)}"
        if self.high is not None:
            return f"at most {_num(self.high)}"
        return "any value"

    def allows(self, value: Any) -> bool:
        if self.choices:
            return value in self.choices
        if isinstance(value, str | bool):
            return True
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or value <= self.high


UNIT = Rule(0.0, 1.0)
POSITIVE = Rule(0.0, low_open=True)
AT_LEAST_1 = Rule(1.0)

#: `section.key` -> its rule (number settings not named here: ≥ 0; text: anything)
RULES: dict[str, Rule] = {
    "search.mode": Rule(choices=MODES),
    "search.limit": AT_LEAST_1,
    "search.half_life_days": POSITIVE,
    "search.episode_half_life_days": POSITIVE,
    "search.candidate_pool": AT_LEAST_1,
    "search.bm25_b": UNIT,
    "search.keyword_saturation": POSITIVE,
    "search.relevance_floor": UNIT,
    "search.keyword_floor": UNIT,
    "search.strong_relevance": UNIT,
    "search.strong_keyword": UNIT,
    "search.keyword_cosine": UNIT,
    "search.correction_weight": UNIT,
    "search.gloss_vote": UNIT,  # a share of the cosine's vote
    "search.semantic_lead": UNIT,
    "index.backend": Rule(choices=("local", "milvus")),
    "index.hnsw_m": Rule(2.0),
    "index.hnsw_ef_search": AT_LEAST_1,
    "index.hnsw_ef_construction": AT_LEAST_1,
    "index.batch_size": AT_LEAST_1,
    "inject.max_tokens": AT_LEAST_1,
    "inject.reserved_share": UNIT,
    "inject.relevance_floor": UNIT,
    "inject.keyword_relevance_floor": UNIT,
    "inject.profile_importance": UNIT,
    "llm.provider": Rule(choices=LLM_PROVIDERS),
    "llm.timeout": POSITIVE,
    "compress.duplicate_threshold": UNIT,
    "compress.contradiction_similarity": UNIT,
    "compress.forget_base": Rule(0.0, 1.0, low_open=True),
    "compress.forget_threshold": UNIT,
    "compress.episode_decay": POSITIVE,
    "compress.consolidate_similarity": UNIT,
    "compress.consolidate_min_size": Rule(2.0),
    "forget.scope": Rule(choices=("machine", "all", "none")),
    "reflect.min_entries": AT_LEAST_1,
    "reflect.theme_similarity": UNIT,
    "reflect.min_evidence": AT_LEAST_1,
    "reflect.max_insights": AT_LEAST_1,
    "reflect.window": AT_LEAST_1,
}


def rule_of(key: str, default: Any) -> Rule:
    """The rule of `section.key` whose default value is `default`."""
    found = RULES.get(key)
    if found is not None:
        return found
    return Rule(None) if isinstance(default, str | bool) else Rule()


def kind_name(default: Any) -> str:
    return {bool: "a boolean", int: "a whole number", float: "a number"}.get(type(default), "text")


class BadValue(ValueError):
    """A value a setting does not accept; the message says what it accepts."""


def convert(key: str, default: Any, value: Any) -> Any:
    """`value` as the type of `default`, checked against the rule of `key`; text (from
    the environment or the command line) is parsed. Raises BadValue."""
    kind = type(default)
    rule = rule_of(key, default)
    result: Any
    if kind is bool:
        if isinstance(value, bool):
            result = value
        elif isinstance(value, str) and value.strip().lower() in BOOLEAN_WORDS:
            result = BOOLEAN_WORDS[value.strip().lower()]
        else:
            raise BadValue(f"must be a boolean: true or false (or {'/'.join(BOOLEAN_WORDS)})")
    elif kind is int:
        result = _number(value, int)
    elif kind is float:
        result = _number(value, float)
    else:
        if not isinstance(value, str):
            raise BadValue("must be text (in quotes in TOML)")
        result = value
    if not rule.allows(result):
        raise BadValue(f"must be {rule.describe()}")
    return result


def _number(value: Any, kind: type) -> Any:
    what = "a whole number" if kind is int else "a number"
    if isinstance(value, bool):
        raise BadValue(f"must be {what}, not a boolean")
    if isinstance(value, str):
        try:
            value = float(value.strip()) if kind is float else int(value.strip())
        except ValueError:
            raise BadValue(f"must be {what}") from None
    if not isinstance(value, int | float) or isinstance(value, float) and not math.isfinite(value):
        raise BadValue(f"must be {what}")
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise BadValue(f"must be {what}")
        return int(value)
    return float(value)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
