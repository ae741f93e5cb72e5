"""A file's YAML front matter (docs/file-format.md): the file-level settings memcli reads from the
block between the `---` lines at the top (its format version and the type of items
outside a `##` section). Pure, no I/O."""

from __future__ import annotations

from typing import Any

from memcli.core.errors import ParseError

FORMAT_VERSION = 1  # `memcli: N` in a file's front matter: the entry format it uses
FRONT_MATTER_MAX = 16_384  # bytes of front matter memcli reads; a bigger one is refused


def read_front_matter(
    block: list[str], filename: str, problems: list[ParseError]
) -> dict[str, Any]:
    """File-level settings from the YAML front matter (docs/file-format.md), read with
    python-frontmatter's safe loader; the block itself is kept byte for byte. Known keys:
    `memcli` (the format version: a file written for a newer memcli is read but not
    written) and `type` (the type of items outside a `##` section, e.g. `type: lesson`).
    Other keys are the person's own and are left alone. What cannot be read is reported
    in `problems` (it stops writes, never reads) and gives no settings."""
    text = "".join(block)
    if len(text.encode("utf-8")) > FRONT_MATTER_MAX:
        problems.append(
            _front_problem(
                filename, 1, f"the front matter is larger than {FRONT_MATTER_MAX // 1024} KB"
            )
        )
        return {}
    import frontmatter  # python-frontmatter (+ PyYAML): only files with front matter pay it
    import yaml

    handler = frontmatter.YAMLHandler()
    try:
        yaml_text, _ = handler.split(text)
        settings = handler.load(yaml_text) if yaml_text.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1  # the YAML text starts after '---'
        reason = getattr(exc, "problem", None) or "not valid YAML"
        problems.append(_front_problem(filename, line, f"front matter: {reason}"))
        return {}
    if not isinstance(settings, dict):
        problems.append(_front_problem(filename, 1, "front matter: expected `key: value` lines"))
        return {}
    version = settings.get("memcli", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        problems.append(
            _front_problem(
                filename, 1, f"front matter: memcli: {version!r} is not a format version (1)"
            )
        )
        return {}
    if version > FORMAT_VERSION:
        problems.append(
            _front_problem(
                filename,
                1,
                f"written for memcli format {version}; this memcli knows format {FORMAT_VERSION}",
                hint="upgrade memcli before writing to this file (reading works)",
            )
        )
    entry_type = settings.get("type")
    if entry_type is not None and (not isinstance(entry_type, str) or not entry_type.strip()):
        problems.append(
            _front_problem(filename, 1, f"front matter: type: {entry_type!r} is not a type name")
        )
        settings = {k: v for k, v in settings.items() if k != "type"}
    return settings


def _front_problem(filename: str, line: int, message: str, hint: str | None = None) -> ParseError:
    problem = ParseError(
        filename, line, message, hint=hint or "fix the block between the --- lines at the top"
    )
    problem.skipped = False  # the entries are read; only writes stop
    return problem
