"""Equal pages are not taken in their sitemap's order: a crawl fetches a site's pages
seconds apart in that order, and those seconds must not decide which of equal pages the
plan fetches (a real site's 24 tied pages lost most of what changed so). Indexes within
1% tie, copies within an hour are as old, and a fixed shuffle of the site decides."""

from __future__ import annotations

import numpy as np

from auditor.planner.schedule import TIE_SHARE, schedule_host
from tests.plan.test_explore import _pages

SECONDS = 1 / 86_400


def _crawled_in_order(n: int, first_age: float) -> np.ndarray:
    """Copy ages of pages crawled one after another in sitemap order, 3 s apart."""
    return first_age - 3 * SECONDS * np.arange(n)


def test_pages_equal_but_for_the_crawls_seconds_are_not_taken_in_sitemap_order():
    n, budget = 60, 12
    pages = _pages(np.full(n, 0.3), _crawled_in_order(n, 2.0), known=np.ones(n, dtype=bool))
    chosen = sorted(c.page for c in schedule_host([pages], budget=budget, horizon_days=1))
    assert len(chosen) == budget
    assert chosen != list(range(budget))  # not the first crawled
    assert sum(page >= n // 2 for page in chosen) >= budget // 4  # from all over the sitemap
    again = sorted(c.page for c in schedule_host([pages], budget=budget, horizon_days=1))
    assert again == chosen  # a fixed shuffle: the same plan from the same state


def test_exploration_of_equal_pages_is_not_in_sitemap_order_either():
    n, budget = 200, 40  # 5% explores: 2 fetches
    pages = _pages(np.full(n, 1 / 365), _crawled_in_order(n, 3.0), known=np.zeros(n, dtype=bool))
    plan = schedule_host([pages], budget=budget, horizon_days=1)
    explored = [c.page for c in plan if c.reason == "explore"]
    assert explored and not set(explored) <= set(range(10))


def test_a_real_difference_still_decides():
    ages = _crawled_in_order(40, 2.0)
    ages[37] = 2.5  # fetched half a day earlier than the rest: the oldest copy
    ages[25] = 2.2  # and a few hours earlier: an index more than TIE_SHARE higher
    pages = _pages(np.full(40, 0.3), ages, known=np.ones(40, dtype=bool))
    p = -np.expm1(-0.3 * ages)
    index = (p + (1 - p) * np.log1p(-p)) / 0.3
    assert index[25] > index[:25].max() * (1 + TIE_SHARE)
    chosen = {c.page for c in schedule_host([pages], budget=2, horizon_days=1)}
    assert chosen == {37, 25}


def test_the_plan_does_not_hang_on_the_order_the_sites_were_given_in():
    """Two sites of one host, equal in all but their URLs: the same fetches, whichever
    site comes first (a plan of a host's sites and its reference listed them apart)."""
    from dataclasses import replace

    def site(name: str):  # type: ignore[no-untyped-def]
        pages = _pages(np.full(25, 1 / 365), np.full(25, 3.0), known=np.zeros(25, dtype=bool))
        origin = f"https://{name}.example"
        return replace(pages, site=origin, locs=[f"{origin}/p/{i}" for i in range(25)])

    a, b = site("a"), site("b")

    def fetched(sites):  # type: ignore[no-untyped-def]
        plan = schedule_host(sites, budget=20, horizon_days=1)  # one explore fetch
        return sorted((sites[c.site].locs[c.page], c.reason) for c in plan)

    assert fetched([a, b]) == fetched([b, a])
