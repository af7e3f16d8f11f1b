"""A plan's reads of many sites at a time (history.planreads) are what the reads of one
site at a time give: latest run, result, freshest inventory and robots.txt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.audit import audit_site
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.planner import plan
from tests.crawl.sites import OPTIONS
from tests.history.helpers import save


def test_stored_sites_are_what_the_reads_of_one_site_give(db_url):
    saved = "https://saved.example"
    site = SimulatedSite("walked", {"pages": BEHAVIOURS["accurate-jsonld"]}, 12, seed=3)
    other = SimulatedSite("audited", {"pages": BEHAVIOURS["no-lastmod"]}, 8, seed=4)
    with SiteServer(site) as walked, SiteServer(other) as audited, History.open(db_url) as history:
        save(history, saved)
        for server in (walked, audited):
            audit_site(server.origin, history, OPTIONS)
        later = datetime.now(UTC) + timedelta(hours=1)
        list(plan(history, [walked.origin], now=later))  # a plan walk, newer than the run
        origins = [walked.origin, audited.origin, saved, "https://unknown.example"]
        found = history.stored_sites(origins)
        assert set(found) == set(origins[:3])
        for origin, stored in found.items():
            latest = history.latest_run(origin)
            assert stored.latest == latest and stored.site_id == history.site_id(origin)
            assert stored.result == history.result(latest.run_id)
            when, _, blob = history.current_inventory_blob(origin)
            assert (stored.walked_at, stored.inventory) == (when, blob)
            assert stored.robots == history.stored_robots(origin)
        assert found[walked.origin].walked_at > found[walked.origin].latest.started_at
        assert found[walked.origin].robots is not None and found[saved].robots is None
        assert history.stored_sites([]) == {}
