"""Helpers the tests share, one copy of each:

- env: the sample workspace, fixtures, one-entry workspaces, the isolated environment
- fakes: the hashing embedder (unit tests), a Memory that uses it
- llm_server: a loopback OpenAI-compatible server that answers, fails or stalls
- cli: the CLI through CliRunner, snapshots of a workspace's Markdown
- processes: memcli and its watcher as child processes, what a fresh interpreter imports
- samples: conversations and a CLAUDE.md that several tests read
- merging: the cases of the git merge driver
- reliability, editors, maintenance, extract_quality, generate: benchmark code the tests
  run at CI size (run the first two as scripts for the full figures; bench/maintenance.py
  and bench/extract_quality.py are the entry points of the next two; bench/ imports
  generate)
"""
