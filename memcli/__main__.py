"""`python -m memcli` runs the CLI (through the daemon fast path when one is up)."""

from memcli.fastpath import main

main()
