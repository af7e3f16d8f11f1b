"""An audit on an injected clock: every instant it records is on that clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.audit import AuditOptions, audit_site
from auditor.demo.clock import SimulatedClock
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
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
