"""Integration tests: real components together — the bundled model, FAISS, the Markdown
store, the watcher, the MCP client — and the CLI through Typer's CliRunner."""
