"""A crawler's fetch answered with a bot wall is a failed fetch: the copy it had stays,
and it is never counted as a change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from auditor.audit import audit_site
from auditor.crawl.record import record_fetches
from auditor.crawl.records import FetchRecord
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from tests.crawl.sites import OPTIONS, crawl
from tests.loopback import FIXTURES

WALL = (FIXTURES / "walls" / "datadome-captcha.html").read_bytes()


def test_a_wall_answered_to_the_crawler_keeps_the_copy_and_changes_nothing(db_url):
    site = SimulatedSite("walls", {"pages": BEHAVIOURS["accurate-jsonld"]}, 6, seed=3)
    with SiteServer(site) as server, History.open(db_url) as history:
        audit_site(server.origin, history, OPTIONS)
        at = datetime.now(UTC) + timedelta(minutes=1)
        paths = sorted(site.pages)
        record_fetches(history, crawl(server.origin, paths, at))
        site_id = history.site_ids()[server.origin]
        urls = [server.origin + p for p in paths]
        before = history.crawl_states(site_id, urls)
        walled = [
            FetchRecord(
                u, at + timedelta(days=1), status, body=WALL, headers={"Content-Type": "text/html"}
            )
            for u, status in zip(urls, (200, 200, 403, 200, 200, 200), strict=True)
        ]
        summary = record_fetches(history, walled)
        after = history.crawl_states(site_id, urls)

    assert summary.recorded == 6 and summary.failed == 6
    assert summary.blocked == 5  # the 403 is a failure by its status alone
    assert summary.changed == 0 and summary.unchanged == 0
    for url in urls:
        assert after[url].fp_exact == before[url].fp_exact  # the good copy stays
        assert after[url].ok_fetched_at == before[url].ok_fetched_at
        assert after[url].failures == 1
