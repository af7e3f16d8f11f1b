"""The page budget goes where doubt is: sequential sampling through real audits on loopback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.clock import SimulatedClock
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.sampler import SampleOptions
from auditor.sampler.choose import CONFIRM_CONDEMNED

WEEK = timedelta(days=7)


@pytest.fixture
def history(tmp_path):
    with History.open(tmp_path / "history.sqlite3") as opened:
        yield opened


def _options(sample: int, **kwargs) -> AuditOptions:
    return AuditOptions(sample=SampleOptions(sample=sample, delay=0.0, **kwargs), seed=7)


def test_an_accurate_and_a_generation_time_sub_sitemap_stay_partial_run_after_run(history):
    sections = {"products": BEHAVIOURS["generation-time"], "blog": BEHAVIOURS["accurate-jsonld"]}
    start = datetime.now(UTC) - 3 * WEEK
    site = SimulatedSite("mixed", sections, seed=5, clock=start)
    clock = SimulatedClock(start)
    options = AuditOptions(sample=SampleOptions(sample=40, delay=0.0), seed=7, clock=clock.now)
    with SiteServer(site, clock.now) as server:
        for _ in range(4):
            result = audit_site(server.origin, history, options)
            by_name = {s.sitemap.rsplit("/", 1)[1]: s for s in result.segments}
            products, blog = by_name["sitemap-products.xml"], by_name["sitemap-blog.xml"]

            assert result.verdict == "partial", result.reasons
            assert (products.verdict, blog.verdict) == ("untrusted", "trusted")
            assert products.requested == CONFIRM_CONDEMNED  # condemned by its lastmod alone
            assert result.sample.requested < 40  # the blog stopped once decided
            clock.advance(WEEK)
            site.tick(WEEK)


def test_a_clear_cut_site_costs_fewer_pages_than_the_budget_an_unclear_one_all_of_it(history):
    clear = SimulatedSite("clear", {"pages": BEHAVIOURS["accurate-jsonld"]}, seed=2)
    unclear = SimulatedSite("unclear", {"pages": BEHAVIOURS["accurate-no-structured"]}, seed=2)
    with SiteServer(clear) as a, SiteServer(unclear) as b:
        decided = audit_site(a.origin, history, _options(50))
        undecided = audit_site(b.origin, history, _options(50))

    assert decided.verdict == "trusted" and decided.sample.requested == 16  # 16 of 16: 0.806
    assert undecided.verdict == "inconclusive" and undecided.sample.requested == 50


def test_fixed_sampling_spends_the_whole_budget(history):
    site = SimulatedSite("clear", {"pages": BEHAVIOURS["accurate-jsonld"]}, seed=2)
    with SiteServer(site) as server:
        result = audit_site(server.origin, history, _options(50, sequential=False))

    assert result.verdict == "trusted" and result.sample.requested == 50


def test_a_trusted_sub_sitemap_that_starts_failing_is_sampled_until_it_is_called_out(history):
    """Frozen lastmod: trusted on run 1 from 16 pages; on run 2 its pages disagree, doubt
    keeps it open and the run says so (degraded), on fewer pages than the budget."""
    start = datetime.now(UTC) - WEEK
    site = SimulatedSite("frozen", {"pages": BEHAVIOURS["frozen"]}, seed=2, clock=start)
    clock = SimulatedClock(start)
    options = AuditOptions(sample=SampleOptions(sample=50, delay=0.0), seed=7, clock=clock.now)
    with SiteServer(site, clock.now) as server:
        first = audit_site(server.origin, history, options)
        clock.advance(WEEK)
        site.tick(WEEK)
        second = audit_site(server.origin, history, options)

    assert (first.verdict, first.sample.requested) == ("trusted", 16)
    assert second.verdict == "untrusted" and second.degraded
    assert second.sample.requested < 50
