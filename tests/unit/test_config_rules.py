"""Every setting's rule (issue 29): type, range and choices, the same for the files, the
MEMCLI_* environment and `memcli config set`; a bad value in a file names file:line and
the setting keeps its default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memcli.core.errors import ConfigError, UsageError
from memcli.services.configedit import effective, split_key, value_for
from memcli.store.config import FORGET_SCOPES, Settings, load_settings
from memcli.store.config_rules import BOOLEAN_WORDS, RULES, BadValue, convert, rule_of

DEFAULTS = effective(Settings())
KEYS = sorted(DEFAULTS)


def test_every_rule_names_a_setting_and_fits_its_default() -> None:
    assert set(RULES) <= set(DEFAULTS)
    assert RULES["forget.scope"].choices == FORGET_SCOPES
    for key, default in DEFAULTS.items():
        assert convert(key, default, default) == default, key


def wrong_types(default: Any) -> list[Any]:
    if isinstance(default, bool):
        return ["ture", "True!", 2, 0.5, "", [True]]
    if isinstance(default, int):
        return ["ten", 1.5, True, "", [1], float("nan")]
    if isinstance(default, float):
        return ["half", True, "", [0.5], float("inf")]
    return [5, 0.5, True, ["a"]]


@pytest.mark.parametrize("key", KEYS)
def test_every_key_rejects_the_wrong_type(key: str) -> None:
    for value in wrong_types(DEFAULTS[key]):
        with pytest.raises(BadValue):
            convert(key, DEFAULTS[key], value)


def boundary_cases(key: str, default: Any) -> list[tuple[Any, bool]]:
    """(value, accepted) at the edges of the key's rule."""
    rule = rule_of(key, default)
    if isinstance(default, bool):
        return [(True, True), (False, True)]
    if rule.choices:
        return [(c, True) for c in rule.choices] + [("nonsense", False), ("", False)]
    if isinstance(default, str):
        return [("", True), ("any text", True)]
    step = 1 if isinstance(default, int) else 1e-6
    cases: list[tuple[Any, bool]] = []
    if rule.low is not None:
        low = type(default)(rule.low)
        if rule.low_open:
            cases += [(low, False), (low + step, True)]
        else:
            cases += [(low, True), (low - step, False)]
    if rule.high is not None:
        high = type(default)(rule.high)
        cases += [(high, True), (high + step, False)]
    return cases


@pytest.mark.parametrize("key", KEYS)
def test_every_key_accepts_its_range_and_nothing_past_it(key: str) -> None:
    default = DEFAULTS[key]
    cases = boundary_cases(key, default)
    assert cases, key
    for value, accepted in cases:
        if accepted:
            assert convert(key, default, value) == value, (key, value)
        else:
            with pytest.raises(BadValue, match="must be"):
                convert(key, default, value)


@pytest.mark.parametrize(
    "key, low",
    [("search.limit", "1"), ("search.candidate_pool", "1"), ("inject.max_tokens", "1")],
)
def test_counts_start_at_one(key: str, low: str) -> None:
    with pytest.raises(BadValue, match="at least 1"):
        convert(key, DEFAULTS[key], 0)
    assert convert(key, DEFAULTS[key], low) == 1


@pytest.mark.parametrize("word, value", [*BOOLEAN_WORDS.items(), ("TRUE", True), (" Off ", False)])
def test_environment_booleans_take_the_documented_spellings(word: str, value: bool) -> None:
    settings = load_settings(Path("/nonexistent"), env={"MEMCLI_INDEX_ONNX": word})
    assert settings.index.onnx is value


@pytest.mark.parametrize("word", ["ture", "y", "enable", "2", "", "truee"])
def test_other_environment_booleans_are_an_error_naming_the_variable(word: str) -> None:
    with pytest.raises(ConfigError, match="MEMCLI_COMPRESS_AUTO"):
        load_settings(Path("/nonexistent"), env={"MEMCLI_COMPRESS_AUTO": word})


@pytest.mark.parametrize(
    "name, raw", [("MEMCLI_SEARCH_LIMIT", "0"), ("MEMCLI_SEARCH_MODE", "fuzzy")]
)
def test_environment_values_out_of_range_are_an_error(name: str, raw: str) -> None:
    with pytest.raises(ConfigError, match=name):
        load_settings(Path("/nonexistent"), env={name: raw})


@pytest.mark.parametrize(
    "toml, key, line, kept",
    [
        ("[search]\nmode = 'keyword'\n\nlimit = 0\n", "search.limit", 4, 10),
        ("# a\n[index]\nonnx = 'maybe'\n", "index.onnx", 3, True),
        ("[forget]\nscope = 'everything'\n", "forget.scope", 2, "machine"),
        ("[inject]\nreserved_share = 1.5\n", "inject.reserved_share", 2, 0.3),
        ("search.limit = -3\n", "search.limit", 1, 10),
    ],
)
def test_a_bad_value_in_a_file_names_file_and_line_and_keeps_the_default(
    tmp_path: Path, toml: str, key: str, line: int, kept: Any
) -> None:
    (tmp_path / "memcli.toml").write_text(toml)
    settings = load_settings(tmp_path, env={})
    assert effective(settings)[key] == kept
    (problem,) = settings.problems
    assert problem.startswith(f"{tmp_path / 'memcli.toml'}:{line}: {key} = ")
    assert "must be" in problem


def test_the_user_file_value_stays_when_the_workspace_one_is_bad(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text("[search]\nlimit = 4\n")
    (tmp_path / "memcli.toml").write_text("[search]\nlimit = 0\n")
    settings = load_settings(tmp_path, env={}, user_config=user)
    assert settings.search.limit == 4 and "using 4 instead" in settings.problems[0]


@pytest.mark.parametrize(
    "key, raw, typed",
    [
        ("index.onnx", "True", True),
        ("index.onnx", "off", False),
        ("search.limit", "12", 12),
        ("search.half_life_days", "7", 7.0),
        ("index.model", "123", "123"),
        ("llm.model", '"gpt-4o"', "gpt-4o"),
    ],
)
def test_config_set_values_get_their_type(key: str, raw: str, typed: Any) -> None:
    value = value_for(key, raw)
    assert value == typed and type(value) is type(typed)


@pytest.mark.parametrize(
    "key, raw, words",
    [
        ("search.limit", "0", "search.limit must be at least 1"),
        ("index.onnx", "maybe", "index.onnx must be a boolean"),
        ("search.mode", "fuzzy", "one of hybrid, semantic, keyword"),
        ("inject.reserved_share", "2", "between 0 and 1"),
        ("search.gloss_vote", "1.5", "search.gloss_vote must be between 0 and 1"),
        ("index.gloss", "maybe", "index.gloss must be a boolean"),
        ("search.limit", "lots", "a whole number"),
    ],
)
def test_config_set_rejects_with_the_key_and_what_it_accepts(
    key: str, raw: str, words: str
) -> None:
    with pytest.raises(UsageError, match=words):
        value_for(key, raw)


@pytest.mark.parametrize(
    "key, suggestion",
    [("search.limt", "search.limit"), ("limit", "search.limit"), ("search.onnx", "index.onnx")],
)
def test_unknown_keys_get_a_suggestion(key: str, suggestion: str) -> None:
    with pytest.raises(UsageError) as caught:
        split_key(key)
    assert suggestion in (caught.value.hint or "")
