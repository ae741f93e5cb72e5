"""`python -m memcli` runs the CLI (through the daemon fast path when one is up)."""

from memcli.surfaces.cli.fastpath import main

main()
