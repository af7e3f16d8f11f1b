"""The plan's exploration: a site is never left without fetches while its copies age, a
page whose rate is not known yet is explored (``explore``) within a stated share of the
budget, oldest copy first, and a page fetched moments ago is not planned again."""

from __future__ import annotations

import math

import numpy as np

from auditor.planner.rates import pooled_rates, shrunk_rate
from auditor.planner.schedule import EXPLORE_SHARE, MIN_P_CHANGED, SitePages, schedule_host
from auditor.planner.signal import Signal


def _pages(rate, copy_age, *, known, n_sitemaps: int = 1) -> SitePages:
    n = len(rate)
    return SitePages(
        site="https://site.example",
        locs=[f"https://site.example/p/{i}" for i in range(n)],
        segment=np.zeros(n, dtype=np.intp),
        sitemaps=["https://site.example/sitemap.xml"],
        signals=[Signal("none", verdict="untrusted")],
        lastmods=[None] * n,
        rate=np.asarray(rate, dtype=float),
        copy_age=np.asarray(copy_age, dtype=float),
        fetch_age=np.asarray(copy_age, dtype=float),
        failures=np.zeros(n),
        advanced=np.zeros(n, dtype=bool),
        new=np.zeros(n, dtype=bool),
        known=np.asarray(known, dtype=bool),
    )


def test_a_site_whose_pages_all_look_still_is_still_explored_as_its_copies_age():
    ages = np.linspace(1.0, 3.0, 40)
    pages = _pages(np.full(40, 1 / 365), ages, known=np.ones(40, dtype=bool))
    assert (-np.expm1(-pages.rate * ages) < MIN_P_CHANGED).all()  # no rate says fetch
    plan = schedule_host([pages], budget=24, horizon_days=1)
    assert plan, "a site left with no fetch while its copies age"
    assert {c.reason for c in plan} == {"explore"}
    assert len(plan) <= math.ceil(EXPLORE_SHARE * 24)
    assert max(ages[c.page] for c in plan) == ages.max()  # the oldest copies first


def test_pages_fetched_moments_ago_are_not_planned_again_at_no_chance_of_change():
    ages = np.r_[np.full(30, 0.001), np.full(10, 5.0)]  # 30 just fetched, 10 older copies
    pages = _pages(np.full(40, 1 / 30), ages, known=np.zeros(40, dtype=bool))
    plan = schedule_host([pages], budget=24, horizon_days=1)
    just = [c for c in plan if ages[c.page] < 0.01]
    assert just == [], [(c.reason, c.p_changed) for c in just]
    assert all(c.p_changed >= MIN_P_CHANGED or c.reason == "explore" for c in plan)


def test_exploration_takes_its_share_and_the_rates_the_rest():
    rng = np.random.default_rng(3)
    n = 200
    known = np.r_[np.ones(100, dtype=bool), np.zeros(100, dtype=bool)]
    rate = np.r_[rng.uniform(0.2, 1.0, 100), np.full(100, 1 / 30)]
    pages = _pages(rate, np.full(n, 4.0), known=known)
    plan = schedule_host([pages], budget=20, horizon_days=1)
    reasons = [c.reason for c in plan]
    assert len(plan) == 20
    assert reasons.count("explore") == math.ceil(EXPLORE_SHARE * 20)
    assert all(known[c.page] for c in plan if c.reason == "rate")


def test_one_quiet_day_on_a_few_pages_does_not_rule_out_a_weekly_change():
    """22 pages each seen once, one day apart, unchanged: a day of quiet is what a page
    changing weekly shows six times in seven, so two days on it may well have changed."""
    n = 22
    intervals, changes, days = np.ones(n), np.zeros(n), np.ones(n)
    fallback = shrunk_rate(np.full(n, np.nan), intervals, 1 / 30)
    age = np.full(n, 2.0)
    rate = pooled_rates(intervals, changes, days, fallback, age)
    assert (-np.expm1(-rate * age) >= MIN_P_CHANGED).all(), rate


def test_a_page_whose_lastmod_moved_since_its_copy_is_explored_first_however_young():
    """Where lastmod is not trusted yet, a lastmod that moved since the copy is the
    evidence that can earn it trust: such pages are explored first, even fetched moments
    ago (a plan made after an edit the crawl just missed)."""
    ages = np.r_[np.full(5, 0.01), np.full(35, 5.0)]
    pages = _pages(np.full(40, 1 / 30), ages, known=np.zeros(40, dtype=bool))
    pages.advanced[:3] = True
    budget = math.ceil(3 / EXPLORE_SHARE)  # room to explore three
    plan = schedule_host([pages], budget=budget, horizon_days=1)
    explored = [c.page for c in plan if c.reason == "explore"]
    assert set(explored) == {0, 1, 2}
    assert not {3, 4} & {c.page for c in plan}  # young, lastmod still: not planned
