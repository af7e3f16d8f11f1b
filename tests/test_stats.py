"""Wilson intervals and the change-rate estimator."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.scorer.stats import agreeing_needed, change_rate, wilson


def test_known_wilson_values():
    low, high = wilson(16, 16)
    assert low == pytest.approx(0.8064, abs=1e-4) and high == 1.0
    low, high = wilson(24, 25)
    assert low == pytest.approx(0.8046, abs=1e-3)
    low, high = wilson(5, 10)
    assert (low, high) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 0) is None


@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_bounds_contain_the_estimate(successes, trials):
    successes = min(successes, trials)
    low, high = wilson(successes, trials)
    assert 0.0 <= low <= successes / trials <= high <= 1.0


def test_change_rate():
    assert change_rate(10, 0, 7) == 0.0
    # every page changed: finite, and larger than when nine did
    assert math.isfinite(change_rate(10, 10, 1))
    assert change_rate(10, 10, 1) > change_rate(10, 9, 1)
    assert change_rate(0, 0, 1) is None and change_rate(5, 1, 0) is None
    # half the pages changed in a day: about ln 2 a day, slightly less with the correction
    assert change_rate(1000, 500, 1.0) == pytest.approx(math.log(2), rel=0.01)


def test_agreeing_needed_to_clear_the_bar():
    assert agreeing_needed(12, 12, 0.8) == 4  # 16 of 16 clear it
    assert agreeing_needed(16, 16, 0.8) == 0
    assert agreeing_needed(0, 0, 0.8) == 16
    assert agreeing_needed(9, 12, 0.8) == 28  # 37 of 40: 0.801
    assert agreeing_needed(0, 500, 0.8, limit=10) is None


@given(st.integers(0, 60), st.integers(0, 60))
def test_agreeing_needed_is_the_least_that_clears(successes, trials):
    successes = min(successes, trials)
    more = agreeing_needed(successes, trials, 0.8)
    assert wilson(successes + more, trials + more)[0] >= 0.8
    if more:
        assert (wilson(successes + more - 1, trials + more - 1) or (0.0, 0.0))[0] < 0.8
