"""record_fetches: the crawler's fetches become each URL's last fetch and evidence."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from auditor.audit import audit_site
from auditor.crawl.record import record_fetches, site_origin
from auditor.crawl.records import FetchRecord
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from auditor.history.crawl import CrawlState
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

        site.clock = first_at + timedelta(seconds=1)  # the site lives on after the crawl:
        changed = set(site.tick(timedelta(days=2)))  # pages edited over two days
        rewalk(history, server.origin, first_at + timedelta(days=2, hours=1))  # a plan's walk
        later = first_at + timedelta(days=3)
        again = crawl(server.origin, _paths(site), later)
        summary = record_fetches(history, [*again, *crawl("http://127.0.0.9:1", [], later)])
        assert summary.recorded == 30
        assert summary.changed == len(changed) and summary.unchanged == 30 - len(changed)
        # the walk before them proved the edited pages' lastmod advanced; the others wait
        assert summary.pending == 30 - len(changed)
        (waiting,) = history.crawl_counts(server.origin, first_at).values()
        assert (waiting.compared, waiting.both, waiting.pending) == (
            len(changed),
            len(changed),
            30 - len(changed),
        )

        rewalk(history, server.origin, later + timedelta(hours=1))  # the next plan's walk
        counts = history.crawl_counts(server.origin, first_at)
        (name,) = counts
        assert counts[name].compared == 30 and counts[name].pending == 0
        assert counts[name].changed == len(changed)
        assert counts[name].both == counts[name].advanced == len(changed)  # accurate lastmod
        assert 0 < counts[name].dated <= 30 and counts[name].agree == counts[name].dated

        states = history.crawl_states(history.site_ids()[server.origin], [r.url for r in again])
        for state in states.values():  # the interval undated, or read from dateModified
            assert (state.intervals, state.observed_days) in ((1, 3.0), (0, 0.0))
            assert state.dated_days > 0  # JSON-LD dateModified on every page
        assert any(s.intervals == 0 for s in states.values())


def _article(modified: str, text: str, published: str = "2026-01-01T00:00:00Z") -> bytes:
    data = f'{{"@type": "Article", "datePublished": "{published}", "dateModified": "{modified}"}}'
    return (
        f'<html><head><script type="application/ld+json">{data}</script></head>'
        f"<body><main><article><h1>A page</h1><p>{text} and a sentence long enough to be"
        " the content of this page</p></article></main></body></html>"
    ).encode()


@contextmanager
def _one_page(db_url: str, name: str) -> Iterator[tuple[History, str, Callable[[], CrawlState]]]:
    """An audited site's history, its first page's URL, and that URL's crawl state (read
    anew at each call)."""
    site = SimulatedSite(name, {"pages": BEHAVIOURS["no-lastmod"]}, 5, seed=3)
    with SiteServer(site) as server, History.open(db_url) as history:
        audit_site(server.origin, history, OPTIONS)
        url = server.origin + _paths(site)[0]
        site_id = history.site_ids()[server.origin]
        yield history, url, lambda: history.crawl_states(site_id, [url])[url]


def test_a_credible_date_modified_dates_the_changes(db_url):
    with _one_page(db_url, "dated") as (history, url, state):
        t0 = datetime(2026, 3, 1, tzinfo=UTC)

        def fetch(days: float, modified: str, text: str) -> None:
            at = t0 + timedelta(days=days)
            record_fetches(history, [FetchRecord(url, at, 200, body=_article(modified, text))])

        fetch(0, "2026-02-27T00:00:00Z", "first")  # changed 2 days before the first fetch
        assert (state().dated_changes, state().dated_days, state().intervals) == (1, 2.0, 0)
        fetch(3, "2026-03-03T00:00:00Z", "second")  # changed, a day before the fetch
        assert (state().dated_changes, state().dated_days) == (2, 3.0)
        fetch(5, "2026-03-03T00:00:00Z", "second")  # unchanged: two days without a change
        assert (state().dated_changes, state().dated_days, state().intervals) == (2, 5.0, 0)
        fetch(6, "2026-03-03T00:00:00Z", "third")  # changed, its date did not move: undated
        found = state()
        assert (found.dated_changes, found.dated_days) == (2, 5.0)
        assert (found.intervals, found.changes, found.observed_days) == (1, 1, 1.0)


def test_a_change_fetched_hours_after_it_dates_nothing(db_url):
    """A crawler that follows lastmod fetches hours after an edit: that span is its own
    reaction time, not the page's pace (a real post read as changing 2.7 times a day)."""
    with _one_page(db_url, "soon") as (history, url, state):
        t0 = datetime(2026, 3, 1, tzinfo=UTC)

        def fetch(days: float, modified: str, text: str) -> None:
            at = t0 + timedelta(days=days)
            record_fetches(history, [FetchRecord(url, at, 200, body=_article(modified, text))])

        fetch(0, "2026-02-28T21:00:00Z", "first")  # edited 3 hours before
        assert (state().dated_changes, state().dated_days, state().intervals) == (0, 0.0, 0)
        fetch(20, "2026-03-20T22:00:00Z", "second")  # edited again, fetched 2 hours after
        found = state()
        assert (found.dated_changes, found.dated_days) == (0, 0.0)
        assert (found.intervals, found.changes, found.observed_days) == (1, 1, 20.0)
        fetch(30, "2026-03-20T22:00:00Z", "second")  # unchanged since: ten days dated
        assert (state().dated_changes, state().dated_days) == (0, 10.0)


def test_a_page_modified_when_published_states_no_change(db_url):
    with _one_page(db_url, "fresh") as (history, url, state):
        at = datetime(2026, 3, 1, tzinfo=UTC)
        day = "2026-02-20T00:00:00Z"
        record_fetches(history, [FetchRecord(url, at, 200, body=_article(day, "x", day))])
        assert (state().dated_changes, state().dated_days) == (0, 9.0)


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
            site.clock = at + timedelta(seconds=1)
            site.tick(timedelta(days=2))
            rewalk(history, server.origin, at + timedelta(days=2, hours=1))
            if crawled:
                record_fetches(history, crawl(server.origin, _paths(site), at + timedelta(days=3)))
            walked = at + timedelta(days=3, hours=1)
            days_later = replace(small, clock=lambda walked=walked: walked)
            second = audit_site(server.origin, history, days_later)  # its walk: after them
        verdicts[crawled] = (first.verdict, second.verdict, second.changes)
    assert verdicts[False][:2] == ("inconclusive", "inconclusive")
    assert verdicts[True][:2] == ("inconclusive", "trusted")
    assert verdicts[True][2] is not None and verdicts[True][2].compared >= 40
