"""Pure building blocks, no I/O and no environment: models, errors, requests, checks, filters."""
