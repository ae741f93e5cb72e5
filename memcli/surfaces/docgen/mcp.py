"""docs/reference/mcp.md from the MCP server's own lists: tools (schemas, annotations),
resources and prompts."""

from __future__ import annotations

import json
from typing import Any

from memcli.surfaces.docgen.markdown import HEADER, REGENERATE, escape


def mcp_page() -> str:
    """docs/reference/mcp.md: the tools (schemas, annotations), resources and prompts
    `memcli mcp` serves, read from the server itself."""
    import anyio

    from memcli.surfaces.mcp_server import build_server

    server = build_server("WORKSPACE")  # nothing is read until a tool is called
    tools = anyio.run(server.list_tools)
    resources = anyio.run(server.list_resources)
    templates = anyio.run(server.list_resource_templates)
    prompts = anyio.run(server.list_prompts)
    lines = [
        "# MCP tools",
        "",
        HEADER.format(cmd=REGENERATE).rstrip(),
        "",
        "What `memcli mcp` (stdio) and `memcli mcp --http` serve, as the server lists it.",
        "An argument a tool does not take is an error naming it.",
        "",
        "| tool | read-only | destructive | idempotent |",
        "|---|---|---|---|",
    ]
    for tool in tools:
        hints = tool.annotations
        lines.append(
            f"| [`{tool.name}`](#{tool.name}) | {_yes(hints.read_only_hint)} | "
            f"{_yes(hints.destructive_hint)} | {_yes(hints.idempotent_hint)} |"
        )
    lines.append("")
    for tool in tools:
        lines += [f"## {tool.name}", "", escape(tool.description or ""), ""]
        lines += ["| argument | type | default | what it is |", "|---|---|---|---|"]
        schema = tool.input_schema
        required = set(schema.get("required", ()))
        for name, prop in schema.get("properties", {}).items():
            default = "required" if name in required else f"`{json.dumps(prop.get('default'))}`"
            lines.append(
                f"| `{name}` | {escape(_type(prop))} | {default} | "
                f"{escape(prop.get('description', ''))} |"
            )
        lines += ["", "Input schema:", "", "```json", json.dumps(schema, indent=2), "```", ""]
        if tool.output_schema:
            lines += ["Output schema:", "", "```json", json.dumps(tool.output_schema, indent=2)]
            lines += ["```", ""]
    lines += ["## Resources", "", "| URI | what it is | type |", "|---|---|---|"]
    for item in resources:
        lines.append(f"| `{item.uri}` | {escape(item.description or '')} | {item.mime_type} |")
    for item in templates:
        lines.append(
            f"| `{item.uri_template}` | {escape(item.description or '')} | {item.mime_type} |"
        )
    lines += ["", "## Prompts", ""]
    for prompt in prompts:
        lines += [f"`{prompt.name}`: {escape(prompt.description or '')}", ""]
        lines += ["| argument | what it is |", "|---|---|"]
        lines += [f"| `{a.name}` | {escape(a.description or '')} |" for a in prompt.arguments or ()]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _yes(flag: bool | None) -> str:
    return "yes" if flag else "no"


def _type(prop: dict[str, Any]) -> str:
    """A JSON schema property's type in a few words."""
    if "anyOf" in prop:
        kinds = [_type(p) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(kinds) + " (or null)"
    if "enum" in prop:
        return "one of " + ", ".join(map(str, prop["enum"]))
    if prop.get("type") == "array":
        return "list of " + _type(prop.get("items", {}))
    if prop.get("type") == "object":
        return "object"
    kind = str(prop.get("type", "any"))
    bounds = [f"{word} {prop[key]}" for key, word in (("minimum", "≥"), ("maximum", "≤"))
              if key in prop]  # fmt: skip
    return kind + (f" ({', '.join(bounds)})" if bounds else "")
