"""Unit tests: pure logic in this process, the hashing embedder (tests/support/fakes.py)
instead of the real model (a fixture in conftest.py refuses to load it), no child
processes, no CLI runner; milliseconds each."""
