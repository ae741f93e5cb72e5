"""memcli's version (one place: the package, the CLI's --version and the MCP server)."""

VERSION = "0.1.0"
