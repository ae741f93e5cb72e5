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


def snapshot_page() -> str:
    """memcli/surfaces/mcp_snapshot.json: what the server answers to `initialize` and
    `tools/list` in each protocol version with a handshake, for the stdio front that
    answers them before the server is built (memcli.surfaces.mcp_stdio)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    versions = {}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        answers = _answers(
            [
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": version,
                        "capabilities": {},
                        "clientInfo": {"name": "docgen", "version": "0"},
                    },
                },
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            ]
        )
        if "result" in answers.get(1, {}) and "result" in answers.get(2, {}):
            versions[version] = {
                "initialize": answers[1]["result"],
                "tools/list": answers[2]["result"],
            }
    snapshot = {"generated": REGENERATE, "versions": versions}
    return json.dumps(snapshot, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def _answers(messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """The server's answers (by id) to `messages`, sent over its stdio transport as a
    host sends them, each request once the one before is answered, and read byte for
    byte as the server writes them."""
    import threading

    import anyio
    from mcp.server.stdio import stdio_server

    from memcli.surfaces.mcp_server import build_server

    server = build_server("WORKSPACE")
    low = server._lowlevel_server  # noqa: SLF001 - as MCPServer.run_stdio_async does
    answered: dict[Any, dict[str, Any]] = {}
    changed = threading.Condition()

    class Host:  # the host's end: readline (the server's stdin) and write (its stdout)
        def __init__(self) -> None:
            self.waiting: list[Any] = []

        def readline(self) -> str:
            with changed:  # the request before answered first (at most 60 s)
                changed.wait_for(lambda: all(i in answered for i in self.waiting), 60)
            if not messages:
                return ""
            message = messages.pop(0)
            if "id" in message:
                self.waiting.append(message["id"])
            return json.dumps(message) + "\n"

        def write(self, text: str) -> int:
            for line in text.splitlines():
                if line.strip():
                    answer = json.loads(line)
                    with changed:
                        answered[answer.get("id")] = answer
                        changed.notify_all()
            return len(text)

        def flush(self) -> None:
            pass

    host = Host()

    async def main() -> None:
        streams = stdio_server(anyio.wrap_file(host), anyio.wrap_file(host))
        async with streams as (read_stream, write_stream):
            await low.run(read_stream, write_stream, low.create_initialization_options())

    anyio.run(main)
    return answered
