"""Change-rate estimates and the freshness-optimal allocation, against what they
promise (brute force on small cases, the Lagrangian conditions, known limits)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.planner.rates import (
    MIN_RATE,
    PRIOR_INTERVALS,
    allocate,
    cgm_rate,
    dated_rate,
    freshness,
    pooled_rates,
    shrunk_rate,
)
from auditor.planner.signal import Signal, signal_of


def test_cgm_estimates_a_poisson_rate_from_whether_it_changed():
    rng = np.random.default_rng(1)
    true_rate, interval, n = 0.7, 1.0, 4000
    changed = rng.random(n) < 1 - math.exp(-true_rate * interval)
    (estimate,) = cgm_rate(np.array([n]), np.array([changed.sum()]), np.array([n * interval]))
    assert estimate == pytest.approx(true_rate, rel=0.05)
    # the naive count (changes / time) is biased low: it misses changes within an interval
    assert changed.sum() / (n * interval) < 0.75 * true_rate


def test_cgm_is_finite_when_every_interval_changed_and_nan_without_intervals():
    rates = cgm_rate(np.array([5.0, 0.0]), np.array([5.0, 0.0]), np.array([5.0, 0.0]))
    assert rates[0] == pytest.approx(math.log(11))
    assert math.isnan(rates[1])


def test_a_page_weighs_as_much_as_its_pool_after_the_prior_intervals():
    own = np.array([1.0, np.nan])
    n = np.array([PRIOR_INTERVALS, 0.0])
    assert shrunk_rate(own, n, 0.2) == pytest.approx([0.6, 0.2])


def test_a_dated_change_rate_is_changes_over_exposure():
    # 3 dated changes in 30 days of dated exposure; another page mixes 10 undated days
    # at 0.1 a day (1 change's worth) with 1 dated change in 10 days
    rates = dated_rate(
        np.array([np.nan, 0.1, np.nan]),
        np.array([0.0, 10.0, 0.0]),
        np.array([3.0, 1.0, 0.0]),
        np.array([30.0, 10.0, 0.0]),
    )
    assert rates[:2] == pytest.approx([0.1, 0.1])
    assert math.isnan(rates[2])


def _two_fetches(rng, rates, interval):
    """Each page fetched at 0 and at ``interval``: whether it changed between, the time
    since its last change before the first fetch (exponential at its rate: the backward
    recurrence time) and before the second (from its change events in the interval)."""
    before_first = rng.exponential(1 / rates)
    last = np.full(len(rates), -np.inf)
    for i, rate in enumerate(rates):
        moments = np.cumsum(rng.exponential(1 / rate, size=64))
        inside = moments[moments <= interval]
        if inside.size:
            last[i] = inside[-1]
    changed = np.isfinite(last)
    return changed, before_first, np.where(changed, interval - last, 0.0)


def test_dated_observations_tell_rare_pages_from_regular_ones_at_once():
    # half the pages change yearly, half every three days; one weekly interval each
    rng = np.random.default_rng(7)
    rates = np.repeat([1 / 365, 1 / 3], 200)
    changed, before_first, before_second = _two_fetches(rng, rates, 7.0)
    n, zeros, fallback = np.ones(len(rates)), np.zeros(len(rates)), np.full(len(rates), 0.05)
    undated = pooled_rates(n, changed.astype(float), 7.0 * n, fallback)
    # dated: a change at the first fetch's stated moment, none since; then either a
    # change at the second's (and none after it) or a whole interval without one
    k_d = 1.0 + changed
    t_d = before_first + np.where(changed, before_second, 7.0)
    dated = pooled_rates(zeros, zeros, zeros, fallback, dated_changes=k_d, dated_days=t_d)

    def error(found):
        return float(np.mean(np.abs(np.log(found / rates))))

    assert error(dated) < 0.5 * error(undated)
    assert np.median(dated[rates < 0.01]) < 0.02 and np.median(dated[rates > 0.3]) > 0.15


def _total_freshness(rates, f):
    return float(freshness(np.array(rates), np.array(f)).sum())


@pytest.mark.parametrize("rates", [(3.0, 1.0), (0.1, 0.5, 2.0), (0.05, 0.05, 3.0, 6.0)])
def test_the_allocation_beats_every_allocation_on_a_grid(rates):
    budget = 2.0
    f = allocate(np.array(rates), budget, max_per_day=budget)
    assert f.sum() == pytest.approx(budget, rel=1e-3)
    best = _total_freshness(rates, f)
    steps = np.linspace(0, budget, 41)
    for split in itertools.product(steps, repeat=len(rates) - 1):
        if sum(split) <= budget:
            grid = [*split, budget - sum(split)]
            assert _total_freshness(rates, grid) <= best + 1e-6


def test_pages_that_change_too_fast_get_no_visits():
    rates = np.array([0.1, 0.2, 50.0])
    f = allocate(rates, 0.5)
    assert f[2] == 0.0 and f[:2].sum() == pytest.approx(0.5)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.001, 40.0), min_size=1, max_size=40),
    st.floats(0.01, 50.0),
)
def test_the_allocation_keeps_the_budget_and_the_lagrange_condition(rates, budget):
    lam = np.maximum(np.array(rates), MIN_RATE)
    f = allocate(lam, budget)
    assert (f >= 0).all() and (f <= 1.0 + 1e-12).all()
    assert f.sum() <= budget * (1 + 1e-6) + 1e-9
    if lam.size > budget:  # every page could take more: the whole budget is spent
        assert f.sum() == pytest.approx(budget, rel=1e-3)
    inside = (f > 1e-9) & (f < 1.0 - 1e-9) & (lam / np.maximum(f, 1e-12) < 35.0)
    x = lam[inside] / f[inside]
    marginal = (1 - (1 + x) * np.exp(-x)) / lam[inside]  # dF/df, the same for every page
    if marginal.size > 1:
        assert marginal.max() == pytest.approx(marginal.min(), rel=1e-2)


def test_a_trusted_lastmod_that_advanced_means_its_precision():
    signal = signal_of("trusted", compared=20, changed=5, advanced=5, both=5)
    p = signal.posterior(np.array([0.1, 0.1]), np.array([True, False]))
    assert p[0] == pytest.approx(6 / 7)
    assert p[1] < 0.1  # lastmod stayed put: less likely than the rate alone says


def test_a_bumping_lastmod_is_read_as_a_noisy_indicator():
    # lastmod advanced on every change and on half the unchanged fetches
    signal = signal_of("untrusted", compared=40, changed=10, advanced=25, both=10)
    assert signal.mode == "noisy"
    p = signal.posterior(np.array([0.3, 0.3]), np.array([True, False]))
    assert p[0] > 0.3 > 0.1 > p[1]


@pytest.mark.parametrize(
    ("verdict", "counts"),
    [("no-lastmod", (40, 10, 0, 0)), ("untrusted", (40, 10, 40, 10)), ("untrusted", (4, 2, 2, 2))],
)
def test_a_lastmod_that_tells_nothing_leaves_the_rate_alone(verdict, counts):
    signal = signal_of(verdict, *counts)
    assert signal == Signal("none", verdict=verdict)
    prior = np.array([0.2, 0.7])
    assert signal.posterior(prior, np.array([True, False])) == pytest.approx(prior)
