"""Property tests are reproducible in CI (issue 25): unless HYPOTHESIS_PROFILE names
another, the `ci` profile of tests/conftest.py is loaded: derandomised (the same
examples on every run: no red build by luck of the seed) and without a deadline (a
loaded machine never fails a test on time)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings


@pytest.mark.skipif("HYPOTHESIS_PROFILE" in os.environ, reason="another profile was asked for")
def test_the_ci_profile_is_loaded_by_default() -> None:
    current = settings()
    assert current.derandomize is True
    assert current.deadline is None
    assert current.database is None  # nothing remembered from an earlier run decides
    assert settings.get_profile("ci").derandomize is True
