"""An audit on an injected clock: every instant it records is on that clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.clock import SimulatedClock
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import DEFAULT_RECHECK_DAYS, History
from auditor.sampler import SampleOptions

WEEK = timedelta(days=7)


@pytest.fixture
def history(tmp_path):
    with History.open(tmp_path / "history.sqlite3") as opened:
        yield opened


def _site(behaviour: str, start: datetime) -> SimulatedSite:
    return SimulatedSite(behaviour, {"pages": BEHAVIOURS[behaviour]}, seed=3, clock=start)


def test_an_audit_records_its_instants_on_its_clock(history):
    start = datetime.now(UTC) - timedelta(days=30)
    clock = SimulatedClock(start)
    options = AuditOptions(sample=SampleOptions(sample=20, delay=0.0), seed=1, clock=clock.now)
    with SiteServer(_site("generation-time", start), clock.now) as server:
        result = audit_site(server.origin, history, options)

    (run,) = history.runs(server.origin)
    assert start <= result.started_at < start + timedelta(minutes=5)
    assert run.started_at == result.started_at and run.finished_at < start + timedelta(minutes=5)
    pages = history.pages(run.run_id)
    assert pages and all(run.started_at <= p.fetched_at <= run.finished_at for p in pages)
    files = history.sitemap_files(run.run_id)
    assert all(run.started_at <= f["fetched_at"] <= run.finished_at for f in files)
    assert result.verdict == "untrusted"  # the site's generation moment is the clock's too
    assert "generation-time" in {r.code for r in result.reasons}


def test_two_runs_a_week_apart_read_as_a_real_site(history):
    """The across-runs route on a simulated week: a change rate per day a real site has."""
    start = datetime.now(UTC) - WEEK
    clock = SimulatedClock(start)
    options = AuditOptions(sample=SampleOptions(sample=50, delay=0.0), seed=1, clock=clock.now)
    site = _site("accurate-no-structured", start)
    with SiteServer(site, clock.now) as server:
        audit_site(server.origin, history, options)
        clock.advance(WEEK)
        site.tick(WEEK)
        second = audit_site(server.origin, history, options)

    first_run, second_run = history.runs(server.origin)
    assert WEEK <= second_run.started_at - first_run.started_at < WEEK + timedelta(minutes=5)
    assert second.verdict == "trusted", second.reasons
    (segment,) = second.segments
    assert 0.01 < segment.change_rate < 0.2  # a quarter of the pages changed in a week
    assert segment.recheck_days > 1.0


def test_a_site_a_nightly_fleet_reached_late_is_due_at_next_times_cron(history):
    """A cron at 02:00 whose fleet reached the site at 07:00: the next cron of its due day
    (02:00, or half a minute early) re-verifies it, and the day before's does not."""
    midnight = (datetime.now(UTC) - timedelta(days=60)).replace(hour=0, minute=0, second=0)
    cron = midnight.replace(hour=2, microsecond=0)
    clock = SimulatedClock(cron + timedelta(hours=5))  # the fleet's earlier sites took 5 h
    options = AuditOptions(sample=SampleOptions(sample=20, delay=0.0), seed=1, clock=clock.now)
    with SiteServer(_site("generation-time", clock.now()), clock.now) as server:
        audit_site(server.origin, history, options)

    (site,) = history.sites()
    days = timedelta(days=site.recheck_days or DEFAULT_RECHECK_DAYS)
    assert days >= timedelta(days=1) and days % timedelta(days=1) == timedelta()
    assert site.due_at == site.last_started_at + days  # from the start: 07:00 on its due day
    assert history.due_sites(cron + days - timedelta(days=1)) == []
    for fired in (cron + days, cron + days - timedelta(seconds=30)):
        assert [s.origin for s in history.due_sites(fired)] == [server.origin], fired
