"""memcli's tests, by kind: unit/ (pure logic, the fake embedder, milliseconds each),
integration/ (the real model, FAISS, watcher, MCP client; the CLI through CliRunner),
process/ (child processes: kill -9, concurrency, editors, fresh interpreters); support/
holds the helpers they share."""
