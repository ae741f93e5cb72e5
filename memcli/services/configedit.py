"""`memcli config list | get KEY | set KEY VALUE | unset KEY [--user]`: the settings in
effect, and editing memcli.toml (or the user's config.toml) without losing its comments
(tomlkit).

A value goes through the same rules as the files (memcli.store.config_rules: type,
range, choices) and the settings are loaded with it before anything is written; a key
must be one memcli knows (`section.key`), and a near miss is suggested.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from memcli.core.errors import ConfigError, UsageError
from memcli.core.names import CONFIG_FILE
from memcli.store.config import SECTIONS, Settings, load_settings
from memcli.store.config_rules import BadValue, convert


def effective(settings: Settings) -> dict[str, Any]:
    """Every `section.key` with the value in effect."""
    out: dict[str, Any] = {}
    for section in SECTIONS:
        table = getattr(settings, section)
        for f in dataclasses.fields(table):
            out[f"{section}.{f.name}"] = getattr(table, f.name)
    return out


def split_key(key: str) -> tuple[str, str]:
    """(`section`, `name`) of a known setting, else a UsageError suggesting the nearest
    known ones."""
    import difflib

    section, _, name = key.partition(".")
    known = effective(Settings())
    if key not in known:
        near = difflib.get_close_matches(key, list(known), n=2, cutoff=0.8)
        if not near:  # the right name under another section, or no section
            near = [k for k in known if k.split(".", 1)[1] == (name or section)]
        if near:
            hint = "did you mean " + " or ".join(near) + "?"
        elif section in SECTIONS:
            hint = f"keys of [{section}]: " + ", ".join(
                k.split(".", 1)[1] for k in known if k.startswith(section + ".")
            )
        else:
            hint = f"sections: {', '.join(SECTIONS)}; `memcli config list` shows every key"
        raise UsageError(f"unknown setting {key!r}", hint=hint)
    return section, name


def parse_value(raw: str) -> Any:
    """A TOML value (`10`, `0.5`, `true`, `"text"`), or the raw text as a string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def value_for(key: str, raw: str) -> Any:
    """The value `raw` (command-line text) gives setting `key`, as its type (a boolean
    from true/false/yes/no/on/off/1/0, a number, text), checked against its rule; a
    UsageError naming the key and what it accepts, otherwise."""
    default = effective(Settings())[key]
    parsed = parse_value(raw)
    if isinstance(default, str) and not isinstance(parsed, str):
        parsed = raw  # text settings take the text as typed
    try:
        return convert(key, default, parsed)
    except BadValue as exc:
        raise UsageError(f"{key} {exc} (got {raw})", hint="nothing was written") from None


def _document(text: str, where: str) -> Any:
    """`text` parsed by tomlkit (comments kept); ConfigError naming `where` (the file it
    was read from) when it is not TOML, never tomlkit's traceback."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text) if text.strip() else tomlkit.document()
    except ParseError as exc:
        raise ConfigError(
            f"{where}: {exc}", hint="fix the TOML syntax; nothing was written"
        ) from None


def with_value(
    text: str, section: str, name: str, value: Any, where: str = "the settings file"
) -> str:
    """`text` (a TOML document read from `where`) with `[section] name = value`,
    comments kept."""
    import tomlkit

    doc = _document(text, where)
    if section not in doc:
        doc[section] = tomlkit.table()
    doc[section][name] = value  # type: ignore[index]
    return tomlkit.dumps(doc)


def without_key(
    text: str, section: str, name: str, where: str = "the settings file"
) -> str | None:
    """`text` (read from `where`) without `[section] name` (comments kept; a table left
    empty goes too), or None when the text does not set it."""
    import tomlkit

    doc = _document(text, where)
    table = doc.get(section)
    if not isinstance(table, dict) or name not in table:
        return None
    del table[name]
    if not table:
        del doc[section]
    return tomlkit.dumps(doc)


def check(workspace: Path, workspace_text: str | None, user_text: str | None) -> None:
    """Load the settings as they would be with these file texts (None: as they are);
    raises ConfigError when a value does not fit."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if workspace_text is not None:
            (root / CONFIG_FILE).write_text(workspace_text, encoding="utf-8")
        else:
            from memcli.store.links import read_settings

            with contextlib.suppress(FileNotFoundError):  # bounded, by the link rule
                data = read_settings(workspace / CONFIG_FILE, workspace)
                (root / CONFIG_FILE).write_bytes(data)
        user = root / "user.toml"
        if user_text is not None:
            user.write_text(user_text, encoding="utf-8")
        try:
            load_settings(root, env={}, user_config=user if user_text is not None else None)
        except ConfigError as exc:
            raise ConfigError(
                exc.message.replace(str(root / CONFIG_FILE), CONFIG_FILE).replace(
                    str(user), "config.toml"
                ),
                hint="nothing was written",
            ) from None
