"""Helpers the tests share (one copy of each): fakes (the hashing embedder, a Memory that
uses it), llm_server (a loopback OpenAI-compatible server), cli (CliRunner calls, file
snapshots), processes (memcli and its watcher as child processes, import probes), and the
benchmark code the tests assert on at CI size (reliability, editors, maintenance,
generate; bench/ keeps thin entry points to them)."""
