"""The only places that speak typer, rich or mcp: the CLI, the watch daemon, MCP, agent hooks."""
