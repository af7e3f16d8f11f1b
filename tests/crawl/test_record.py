"""record_fetches: the crawler's fetches become each URL's last fetch and evidence."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from auditor.audit import audit_site
from auditor.crawl.record import record_fetches, site_origin
from auditor.crawl.records import FetchRecord
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from tests.crawl.sites import OPTIONS, crawl, rewalk


def _paths(site: SimulatedSite) -> list[str]:
    return sorted(site.pages)


def test_site_origin_names_sites_as_the_history_does():
    assert site_origin("https://Example.COM/a?b") == "https://example.com"
    assert site_origin("http://example.com:80/") == "http://example.com"
    assert site_origin("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080"
    assert site_origin("ftp://example.com/x") is None
    assert site_origin("not a url") is None


def test_two_crawls_measure_the_changes_between_them(db_url):
    site = SimulatedSite("crawl", {"pages": BEHAVIOURS["accurate-jsonld"]}, 30, seed=3)
    with SiteServer(site) as server, History.open(db_url) as history:
        audit_site(server.origin, history, OPTIONS)
        first_at = datetime.now(UTC) + timedelta(minutes=1)
        summary = record_fetches(history, crawl(server.origin, _paths(site), first_at))
        assert (summary.recorded, summary.unknown_change) == (30, 30)  # nothing to compare to

        changed = set(site.tick())
        rewalk(history, server.origin, first_at + timedelta(hours=1))
        later = first_at + timedelta(days=3)
        again = crawl(server.origin, _paths(site), later)
        summary = record_fetches(history, [*again, *crawl("http://127.0.0.9:1", [], later)])
        assert summary.recorded == 30
        assert summary.changed == len(changed) and summary.unchanged == 30 - len(changed)

        counts = history.crawl_counts(server.origin, first_at)
        (name,) = counts
        assert counts[name].compared == 30
        assert counts[name].changed == len(changed)
        assert counts[name].both == counts[name].advanced == len(changed)  # accurate lastmod
        assert 0 < counts[name].dated <= 30 and counts[name].agree == counts[name].dated

        states = history.crawl_states(history.site_ids()[server.origin], [again[0].url])
        state = states[again[0].url]
        assert state.intervals == 1 and state.observed_days == 3.0


def test_a_log_fed_twice_counts_once_and_strangers_are_counted(db_url):
    site = SimulatedSite("twice", {"pages": BEHAVIOURS["no-lastmod"]}, 10, seed=3)
    with SiteServer(site) as server, History.open(db_url) as history:
        audit_site(server.origin, history, OPTIONS)
        at = datetime.now(UTC) + timedelta(minutes=1)
        records = crawl(server.origin, _paths(site), at, bodies=False)
        stranger = FetchRecord("https://elsewhere.example/a", at, 200)
        first = record_fetches(history, [*records, stranger])
        second = record_fetches(history, records)
    assert (first.recorded, first.unknown_site) == (10, 1)
    assert (second.recorded, second.already_recorded) == (0, 10)


def test_failures_keep_the_copy_and_count_for_backoff(db_url):
    site = SimulatedSite("fails", {"pages": BEHAVIOURS["accurate-jsonld"]}, 5, seed=3)
    with SiteServer(site) as server, History.open(db_url) as history:
        audit_site(server.origin, history, OPTIONS)
        url = server.origin + _paths(site)[0]
        at = datetime.now(UTC) + timedelta(minutes=1)
        hashed = {"url": url, "fetched_at": at, "status": 200, "content_hash": "a"}
        record_fetches(history, [hashed])
        failures = [FetchRecord(url, at + timedelta(days=d), 503) for d in (1, 2)]
        summary = record_fetches(history, failures)
        assert summary.failed == 2
        site_id = history.site_ids()[server.origin]
        state = history.crawl_states(site_id, [url])[url]
        assert (state.failures, state.status, state.content_hash) == (2, 503, "a")
        assert state.ok_fetched_at == at
        recovered = {**hashed, "fetched_at": at + timedelta(days=3), "content_hash": "b"}
        summary = record_fetches(history, [recovered])
        state = history.crawl_states(site_id, [url])[url]
    assert summary.changed == 1
    assert (state.failures, state.intervals, state.changes) == (0, 1, 1)
    assert state.observed_days == 3.0


def test_the_crawlers_fetches_earn_a_verdict_the_audits_sample_alone_cannot(db_url):
    """Four pages a run cannot reach the trust bar; forty crawled pages, twice, do."""
    small = replace(OPTIONS, sample=replace(OPTIONS.sample, sample=4))
    verdicts = {}
    for crawled in (False, True):
        site = SimulatedSite("quiet", {"pages": BEHAVIOURS["accurate-no-structured"]}, 40, seed=2)
        with SiteServer(site) as server, History.open(db_url) as history:  # a new origin each
            first = audit_site(server.origin, history, small)
            at = datetime.now(UTC) + timedelta(minutes=1)
            if crawled:
                record_fetches(history, crawl(server.origin, _paths(site), at))
            site.tick()
            rewalk(history, server.origin, at + timedelta(minutes=1))
            if crawled:
                record_fetches(history, crawl(server.origin, _paths(site), at + timedelta(days=3)))
            second = audit_site(server.origin, history, small)
        verdicts[crawled] = (first.verdict, second.verdict, second.changes)
    assert verdicts[False][:2] == ("inconclusive", "inconclusive")
    assert verdicts[True][:2] == ("inconclusive", "trusted")
    assert verdicts[True][2] is not None and verdicts[True][2].compared >= 40
