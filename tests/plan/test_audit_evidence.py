"""The audits' own comparisons count as change evidence for the plan's rates: a page an
audit's panel saw change between two runs is read as faster than one it saw unchanged,
and a span the crawler already observed is not counted twice (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np

from auditor.crawl.record import record_fetches
from auditor.crawl.records import FetchRecord
from auditor.history import History
from auditor.planner.audits import AuditInterval, audit_intervals, outside_crawl
from auditor.planner.make import plan_site
from auditor.scorer.result import PageObservation
from tests.history.helpers import files, large_inventory, result

SITE = "https://www.example.com"
T0 = datetime(2026, 11, 1, tzinfo=UTC)
WEEK = timedelta(days=7)


def _page(loc: str, sitemap: str, at: datetime, changed: bool | None) -> PageObservation:
    return PageObservation(loc, sitemap, "panel", at, status=200, content_changed=changed)


def _two_audits(history: History, changed: set[int], panel: range) -> list[str]:
    """Two runs a week apart whose panels fetch the pages of ``panel``; the second saw
    those of ``changed`` change. The inventory's URLs."""
    inventory = large_inventory(60).assign(sitemap=f"{SITE}/sitemap.xml")  # one pool
    locs = [str(loc) for loc in inventory["loc"]]
    sitemaps = [str(s) for s in inventory["sitemap"]]
    for at, compared in ((T0, False), (T0 + WEEK, True)):
        fetched = at + timedelta(minutes=1)
        seen = [
            _page(locs[i], sitemaps[i], fetched, (i in changed) if compared else None)
            for i in panel
        ]
        history.save_run(
            result(SITE, started=at, run_id=None), files=files(SITE), entries=inventory, pages=seen
        )
    return locs


def test_a_page_the_audit_saw_change_is_read_faster_than_one_it_saw_unchanged(db_url):
    with History.open(db_url) as history:
        locs = _two_audits(history, changed=set(range(0, 30, 3)), panel=range(30))
        pages = plan_site(history, SITE, T0 + WEEK + timedelta(days=1), walk=False).pages
    rate = dict(zip(pages.locs, pages.rate, strict=True))
    changed = np.array([rate[locs[i]] for i in range(0, 30, 3)])
    quiet = np.array([rate[locs[i]] for i in range(30) if i % 3])
    unseen = np.array([rate[locs[i]] for i in range(30, 60)])
    assert changed.min() > unseen.max() > quiet.max(), (changed, unseen, quiet)


def test_the_crawlers_own_intervals_are_not_counted_twice(db_url):
    """The crawler fetched the panel's pages at the audits' instants: the audits' spans
    are the crawl's, already counted in crawl_state."""
    with History.open(db_url) as history:
        locs = _two_audits(history, changed=set(), panel=range(30))
        for at in (T0, T0 + WEEK):
            records = [FetchRecord(loc, at + timedelta(minutes=2), 200, content_hash="same")
                       for loc in locs]  # fmt: skip
            record_fetches(history, records, now=at + timedelta(minutes=3))
        pages = plan_site(history, SITE, T0 + WEEK + timedelta(days=1), walk=False).pages
        site_id = history.site_id(SITE)
        assert site_id is not None
        states = {s.loc: s for s in history.stream_crawl_states(site_id)}
    assert states[locs[0]].intervals == 1
    rate = dict(zip(pages.locs, pages.rate, strict=True))
    assert rate[locs[0]] == rate[locs[45]]  # audited or not: the same evidence, once


def test_intervals_pair_each_compared_fetch_with_the_fetch_before_it():
    at = [T0 + k * WEEK for k in range(4)]
    rows = [
        ("https://s/a", at[2], True),
        ("https://s/a", at[0], None),
        ("https://s/b", at[1], False),  # compared with a fetch of a run since deleted
        ("https://s/a", at[3], None),  # fetched, not compared (a failed fetch before)
        ("https://s/b", at[3], False),
    ]
    assert audit_intervals(rows) == [
        AuditInterval("https://s/a", at[0], at[2], True),
        AuditInterval("https://s/b", at[1], at[3], False),
    ]


def test_an_interval_inside_the_crawls_observed_span_is_left_out():
    now = T0 + 10 * WEEK
    interval = AuditInterval("https://s/a", T0 + WEEK, T0 + 2 * WEEK, True)
    copy_age = 7.0 * 7  # the crawler's copy: week 3
    # the crawl observed from week 0 to week 3: the audit's weeks 1-2 lie inside
    assert not outside_crawl(interval, now, copy_age, 3 * 7.0, 2)
    # the crawl observed weeks 2-3 only (one interval): weeks 1-2 touch it at an end
    assert outside_crawl(interval, now, copy_age, 7.0, 1)
    # no crawl interval at all: every audit interval counts
    assert outside_crawl(interval, now, copy_age, 0.0, 0)
    later = replace(interval, start=T0 + 8 * WEEK, end=T0 + 9 * WEEK)  # after the copy
    assert outside_crawl(later, now, copy_age, 3 * 7.0, 2)


def test_a_plan_for_many_sites_reads_the_audits_evidence_as_one_site_does(db_url):
    """``plan`` on the stored walks reads its sites in batches: the audits' fetches come
    with them, and the chance of change it gives each page is the one-site read's."""
    from auditor.planner import plan

    later = T0 + WEEK + timedelta(days=10)
    with History.open(db_url) as history:
        locs = _two_audits(history, changed=set(range(0, 30, 3)), panel=range(30))
        copies = [FetchRecord(loc, T0 + WEEK + timedelta(hours=1), 200, content_hash="v")
                  for loc in locs]  # fmt: skip
        record_fetches(history, copies, now=T0 + WEEK + timedelta(hours=2))
        planned = {f.url: f.p_changed for f in plan(history, now=later, budget=60, walk=False)}
        one = plan_site(history, SITE, later, walk=False).pages
    chance = dict(zip(one.locs, -np.expm1(-one.rate * one.copy_age), strict=True))
    changed = [locs[i] for i in range(0, 30, 3)]
    quiet = [locs[i] for i in range(30) if i % 3]
    assert min(planned[loc] for loc in changed) > max(planned.get(loc, 0.0) for loc in quiet)
    assert all(abs(planned[loc] - chance[loc]) < 1e-12 for loc in planned)
