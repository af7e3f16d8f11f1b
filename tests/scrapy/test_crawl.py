"""Real Scrapy spiders against loopback sites of the demo simulator: the crawl held to
the plan, its requests' meta, its fetches recorded as evidence, and Scrapy untouched
where auditor is off. Each crawl runs in a process of its own (tests/scrapy/crawl.py)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

pytest.importorskip("scrapy")

from auditor.audit import audit_site
from auditor.coverage import check_coverage
from auditor.crawl.record import record_fetches
from auditor.crawl.records import FetchRecord
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, PageState, SimulatedSite
from auditor.history import History
from auditor.planner.schedule import EXPLORE_SHARE
from tests.crawl.sites import OPTIONS, tick_now
from tests.scrapy.runs import run_crawl


def _add_page(site: SimulatedSite, path: str) -> None:
    moment = site.clock.replace(microsecond=0)
    site.pages[path] = PageState(path, path.split("/")[1], moment, moment)


def test_on_a_trusted_site_the_second_crawl_asks_for_what_changed_and_what_is_new(tmp_path):
    db = str(tmp_path / "history.sqlite3")
    sections = {"blog": BEHAVIOURS["accurate-jsonld"], "docs": BEHAVIOURS["accurate-jsonld"]}
    site = SimulatedSite("trusted", sections, 40, seed=3)
    with SiteServer(site) as server:
        with History.open(db) as history:
            assert audit_site(server.origin, history, OPTIONS).verdict == "trusted"
        first = run_crawl(server, db, tmp_path)
        assert first.pages == set(site.pages)  # nothing fetched yet: everything is due
        assert {i["auditor"]["reason"] for i in first.items} == {"never-fetched"}

        changed = set(site.tick())
        _add_page(site, "/blog/new-1")
        second = run_crawl(server, db, tmp_path)

    wanted = changed | {"/blog/new-1"}
    assert wanted <= second.pages  # every change and the new page
    reasons = {i["url"].removeprefix(server.origin): i["auditor"]["reason"] for i in second.items}
    assert set(reasons) == second.pages  # each page crawled came with its meta
    assert {reasons[p] for p in changed} == {"lastmod-advanced"}
    assert reasons["/blog/new-1"] == "new-url"
    extra = second.pages - wanted
    assert extra and {reasons[p] for p in extra} == {"verification"}  # a few, to measure recall
    assert len(extra) <= 0.1 * len(site.pages)
    for item in second.items:
        meta = item["auditor"]
        assert meta["verdict"] == "trusted" and meta["lastmod"] is not None
        assert {"reason", "p_changed", "priority", "sitemap", "rank", "due_at"} <= set(meta)
    assert second.stats["auditor/dropped/not_due"] == len(site.pages) - len(second.pages)
    assert second.stats["auditor/recorded/recorded"] == len(second.pages)
    with History.open(db) as history:
        site_id = history.site_ids()[server.origin]
        states = history.crawl_states(site_id, [server.origin + p for p in site.pages])
    assert len(states) == len(site.pages)  # each page's last fetch, from either crawl


def test_a_sub_sitemap_with_nothing_due_is_not_fetched(tmp_path):
    db = str(tmp_path / "history.sqlite3")
    sections = {"blog": BEHAVIOURS["accurate-jsonld"], "docs": BEHAVIOURS["accurate-jsonld"]}
    site = SimulatedSite("pruned", sections, 20, seed=5)
    with SiteServer(site) as server:
        with History.open(db) as history:
            audit_site(server.origin, history, OPTIONS)
        # docs fetched just now, blog never: a budget of 20 is all taken by blog's pages
        now = datetime.now(UTC)
        docs = [server.origin + p for p in site.pages if p.startswith("/docs/")]
        with History.open(db) as history:
            record_fetches(history, [FetchRecord(u, now, 200, content_hash="x") for u in docs])
        crawl = run_crawl(server, db, tmp_path, AUDITOR_BUDGET=20)

    assert crawl.pages == {p for p in site.pages if p.startswith("/blog/")}
    assert "/sitemap-blog.xml" in crawl.paths and "/sitemap-docs.xml" not in crawl.paths
    assert crawl.stats["auditor/pruned/sitemaps"] == 1


def test_on_a_generation_time_site_the_crawl_asks_for_the_pages_due_by_rate(tmp_path):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("gen", {"pages": BEHAVIOURS["generation-time"]}, 40, seed=3)
    paths = sorted(site.pages)
    fast = set(paths[:10])
    with SiteServer(site) as server:
        with History.open(db) as history:
            assert audit_site(server.origin, history, OPTIONS).verdict == "untrusted"
            start = datetime.now(UTC) - timedelta(days=5)
            for day in range(5):  # fast pages changed every day, the others never
                at = start + timedelta(days=day)
                hashes = {p: f"v{day}" if p in fast else "same" for p in paths}
                records = [
                    FetchRecord(server.origin + p, at, 200, content_hash=hashes[p]) for p in paths
                ]
                record_fetches(history, records)
        crawl = run_crawl(server, db, tmp_path, AUDITOR_BUDGET=20)

    assert fast <= crawl.pages and len(crawl.pages) <= 20  # the budget caps the crawl
    reasons = [i["auditor"]["reason"] for i in crawl.items]
    assert set(reasons) == {"rate", "explore"}  # a tenth of the budget explores
    assert reasons.count("explore") == math.ceil(EXPLORE_SHARE * 20)
    assert {i["auditor"]["verdict"] for i in crawl.items} == {"untrusted"}
    by_path = {i["url"].removeprefix(server.origin): i["auditor"] for i in crawl.items}
    assert min(by_path[p]["p_changed"] for p in fast) > 0.5
    assert all(by_path[p]["rank"] < 10 for p in fast)  # first in the plan's order


def test_the_crawls_fetches_count_in_the_next_verdict(db_url, tmp_path):
    """Four sampled pages a run cannot earn trust; the crawl's fetches do: every page once,
    then, moments later, the pages whose lastmod moved meanwhile (explored first)."""
    db = db_url
    small = replace(OPTIONS, sample=replace(OPTIONS.sample, sample=4))
    site = SimulatedSite("quiet", {"pages": BEHAVIOURS["accurate-no-structured"]}, 40, seed=2)
    with SiteServer(site) as server:
        with History.open(db) as history:
            assert audit_site(server.origin, history, small).verdict == "inconclusive"
        first = run_crawl(server, db, tmp_path)
        changed = tick_now(site)  # pages edited after the crawl, their lastmod with them
        second = run_crawl(server, db, tmp_path)
        with History.open(db) as history:
            logged = history.crawl_counts(server.origin, datetime.now(UTC) - timedelta(hours=1))
            again = audit_site(server.origin, history, small)

    assert first.pages == set(site.pages)  # never fetched: every page
    # fetched moments ago, only the pages whose lastmod moved are worth a fetch; the second
    # crawl's plan walked after the edits, so each is judged at once
    assert second.pages == set(changed)
    assert sum(c.compared for c in logged.values()) == sum(c.both for c in logged.values())
    assert sum(c.compared for c in logged.values()) == len(changed) > 0
    assert sum(c.pending for c in logged.values()) == 0
    assert again.verdict == "trusted"
    assert again.changes is not None and again.changes.compared >= len(changed)


def test_with_auditor_disabled_scrapy_crawls_as_without_it(tmp_path):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite(
        "off", {"a": BEHAVIOURS["accurate-jsonld"], "b": BEHAVIOURS["no-lastmod"]}, 10, seed=1
    )
    with SiteServer(site) as server:
        with History.open(db) as history:
            audit_site(server.origin, history, OPTIONS)
            at = datetime.now(UTC)
            record_fetches(history, [FetchRecord(server.origin + p, at, 200) for p in site.pages])
        plain = run_crawl(server, db, tmp_path, mode="plain")
        off = run_crawl(server, db, tmp_path, mode="disabled")
        with History.open(db) as history:
            site_id = history.site_ids()[server.origin]
            states = history.crawl_states(site_id, [server.origin + p for p in site.pages])

    assert Counter(off.paths) == Counter(plain.paths)
    assert sorted(i["url"] for i in off.items) == sorted(i["url"] for i in plain.items)
    assert all(i["auditor"] is None for i in off.items)
    assert not [k for k in off.stats if k.startswith("auditor/")]
    assert {s.fetched_at for s in states.values()} == {at}  # nothing recorded


def test_any_spider_is_held_to_the_plan_and_failures_are_recorded(tmp_path):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("links", {"pages": BEHAVIOURS["accurate-jsonld"]}, 40, seed=3)
    with SiteServer(site) as server:
        with History.open(db) as history:
            assert audit_site(server.origin, history, OPTIONS).verdict == "trusted"
            at = datetime.now(UTC)
            done = sorted(site.pages)[:30]  # fetched just now: not due, but for verification
            record = [FetchRecord(server.origin + p, at, 200, content_hash="x") for p in done]
            record_fetches(history, record)
        crawl = run_crawl(server, db, tmp_path, mode="links", paths=[*sorted(site.pages), "/gone"])

    planned = {
        i["url"].removeprefix(server.origin): i["auditor"] for i in crawl.items if i["auditor"]
    }
    never = set(site.pages) - set(done)
    assert crawl.pages == set(planned) | {"/gone"}  # /gone: no sitemap lists it, not dropped
    assert {planned[p]["reason"] for p in never} == {"never-fetched"}
    assert {planned[p]["reason"] for p in set(planned) - never} == {"verification"}
    assert crawl.stats["auditor/dropped/not_due"] == len(site.pages) - len(planned)
    with History.open(db) as history:
        site_id = history.site_ids()[server.origin]
        gone = history.crawl_states(site_id, [server.origin + "/gone"])
        coverage = check_coverage(history, server.origin)
    assert gone[server.origin + "/gone"].status == 404
    assert coverage.orphans == 1 and coverage.crawled == len(site.pages)  # the crawl, seen
