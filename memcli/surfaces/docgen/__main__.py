"""`python -m memcli.surfaces.docgen`: write the generated pages (--check: list stale ones)."""

from memcli.surfaces.docgen import main

raise SystemExit(main())
