"""A plan's figures per segment: the fetches a day the plan's own policy gives each
sub-sitemap, within the budget, and the mean interval between two fetches of a page."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.planner.figures import plan_figures
from auditor.planner.schedule import SitePages, schedule_host
from auditor.planner.signal import Signal

#: Three sub-sitemaps: pages changing twice a week, once in fifty days, once in ten days.
SIZES, RATES = (60, 100, 40), (0.5, 0.02, 0.1)


def _pages(age: np.ndarray, signals: list[Signal]) -> SitePages:
    n = len(age)
    segment = np.repeat(np.arange(len(SIZES)), SIZES).astype(np.intp)
    return SitePages(
        site="https://site.example",
        locs=[f"https://site.example/p/{i}" for i in range(n)],
        segment=segment,
        sitemaps=[f"https://site.example/s{k}.xml" for k in range(len(SIZES))],
        signals=signals,
        lastmods=[None] * n,
        rate=np.repeat(RATES, SIZES).astype(float),
        copy_age=age,
        fetch_age=age.copy(),
        failures=np.zeros(n),
        advanced=np.zeros(n, dtype=bool),
        new=np.zeros(n, dtype=bool),
        known=np.ones(n, dtype=bool),
    )


def _planned_per_day(budget: int, signals: list[Signal]) -> np.ndarray:
    """Each segment's fetches a day when the plan is made each day for 80 days, fetched
    as planned (the first 40 days to settle)."""
    age = np.random.default_rng(1).uniform(0, 10, sum(SIZES))
    counts, days = np.zeros(len(SIZES)), 0
    for day in range(80):
        pages = _pages(age, signals)
        fetched = np.array([c.page for c in schedule_host([pages], budget, 1.0)], dtype=int)
        if day >= 40:
            counts += np.bincount(pages.segment[fetched], minlength=len(SIZES))
            days += 1
        age = age + 1.0
        age[fetched] = 1.0  # fetched at the day's start: a day old at the next plan
    return counts / days


@pytest.mark.parametrize("budget", [20, 40, 300])
def test_each_segments_fetches_a_day_are_the_plans(budget):
    signals = [Signal("none", verdict="untrusted")] * len(SIZES)
    figures = plan_figures(_pages(np.full(sum(SIZES), 5.0), signals), budget)
    planned = _planned_per_day(budget, signals)

    assert [s.urls for s in figures.segments] == list(SIZES)
    assert sum(s.fetches_per_day for s in figures.segments) == pytest.approx(
        figures.fetches_per_day
    )
    assert figures.fetches_per_day <= budget + 1e-9
    for segment, observed in zip(figures.segments, planned, strict=True):
        assert segment.fetches_per_day == pytest.approx(observed, rel=0.2), (segment, planned)
        assert segment.interval_days == pytest.approx(segment.urls / segment.fetches_per_day)


def test_trusted_pages_alone_past_the_budget_are_scaled_to_it():
    signals = [Signal("trusted", verdict="trusted")] * len(SIZES)
    figures = plan_figures(_pages(np.full(sum(SIZES), 5.0), signals), 10)

    assert figures.fetches_per_day == pytest.approx(10)
    assert all(s.trusted for s in figures.segments)
    fast, slow, _ = figures.segments
    assert fast.interval_days < slow.interval_days


def test_a_segment_given_no_fetch_has_no_interval():
    signals = [Signal("none", verdict="untrusted")] * len(SIZES)
    figures = plan_figures(_pages(np.full(sum(SIZES), 5.0), signals), 0)

    assert all(s.fetches_per_day == 0 and s.interval_days is None for s in figures.segments)
    assert figures.to_dict()["segments"][0] == {
        "sitemap": "https://site.example/s0.xml",
        "group": None,
        "trusted": False,
        "urls": 60,
        "fetches_per_day": 0.0,
        "freshness": 0.0,
        "interval_days": None,
    }
