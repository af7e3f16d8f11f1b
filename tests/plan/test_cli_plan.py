"""auditor plan through the command line, on loopback sites and a real history
(SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from math import ceil

from auditor.audit import audit_site
from auditor.cli import main
from auditor.crawl.record import record_fetches
from auditor.crawl.records import FetchRecord
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, PageState, SimulatedSite
from auditor.history import History
from auditor.planner.schedule import (
    EXPLORE_SHARE,
    MIN_P_CHANGED,
    VERIFY_DAILY_SHARE,
    VERIFY_SHARE,
)
from tests.crawl.sites import OPTIONS


def _plan(capsys, db_url: str, *args: str) -> list[dict]:
    assert main(["plan", *args, "--db", db_url, "--format", "jsonl"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _crawled(history: History, origin: str, paths, at: datetime, hashes=None) -> None:
    records = [
        FetchRecord(origin + p, at, 200, content_hash=(hashes or {}).get(p, "same")) for p in paths
    ]
    record_fetches(history, records)


def _add_page(site: SimulatedSite, path: str) -> None:
    moment = site.clock.replace(microsecond=0)
    site.pages[path] = PageState(path, "pages", moment, moment)


def test_a_trusted_sites_plan_is_its_advanced_and_new_urls_and_a_few_checks(db_url, capsys):
    site = SimulatedSite("trusted", {"pages": BEHAVIOURS["accurate-jsonld"]}, 80, seed=3)
    with SiteServer(site) as server:
        with History.open(db_url) as history:
            assert audit_site(server.origin, history, OPTIONS).verdict == "trusted"
            _crawled(history, server.origin, site.pages, datetime.now(UTC) - timedelta(days=3))
        changed = set(site.tick())
        _add_page(site, "/pages/new-1")
        _add_page(site, "/pages/new-2")
        planned = _plan(capsys, db_url, server.origin)

    by_reason: dict[str, set[str]] = {}
    for fetch in planned:
        by_reason.setdefault(fetch["reason"], set()).add(fetch["url"].removeprefix(server.origin))
    assert by_reason["lastmod-advanced"] == changed
    assert by_reason["new-url"] == {"/pages/new-1", "/pages/new-2"}
    must = len(changed) + 2
    still = 80 - len(changed)  # trusted pages whose lastmod stayed put
    wanted = max(ceil(VERIFY_SHARE * must), 1, ceil(VERIFY_DAILY_SHARE * still))
    assert len(by_reason["verification"]) == wanted
    assert not by_reason["verification"] & changed
    assert set(by_reason) == {"lastmod-advanced", "new-url", "verification"}
    news = [f for f in planned if f["reason"] == "new-url"]
    assert all(f["p_changed"] == 1.0 for f in news)
    assert {f["verdict"] for f in planned} == {"trusted"}
    priorities = [f["priority"] for f in planned]
    assert priorities == sorted(priorities, reverse=True)
    assert all(datetime.fromisoformat(f["due_at"]).tzinfo is not None for f in planned)


def test_a_generation_time_sites_plan_follows_the_pages_rates(db_url, capsys):
    site = SimulatedSite("gen", {"pages": BEHAVIOURS["generation-time"]}, 40, seed=3)
    paths = sorted(site.pages)
    fast = set(paths[:10])
    with SiteServer(site) as server:
        with History.open(db_url) as history:
            assert audit_site(server.origin, history, OPTIONS).verdict == "untrusted"
            start = datetime.now(UTC) - timedelta(days=5)
            for day in range(5):  # fast pages change every day, the others never
                hashes = {p: f"v{day}" for p in fast}
                _crawled(history, server.origin, paths, start + timedelta(days=day), hashes)
        planned = _plan(capsys, db_url, server.origin, "--budget", "20")

    ranked = [f["url"].removeprefix(server.origin) for f in planned]  # highest priority first
    assert set(ranked[:10]) == fast  # the budget goes first to the pages that change
    reasons = [f["reason"] for f in planned]
    assert len(planned) <= 20 and set(reasons) == {"rate", "explore"}
    assert reasons.count("explore") == ceil(EXPLORE_SHARE * 20)  # the oldest copies
    assert {f["verdict"] for f in planned} == {"untrusted"}
    by_url = {f["url"].removeprefix(server.origin): f["p_changed"] for f in planned}
    slow = [v for u, v in by_url.items() if u not in fast]
    assert min(by_url[p] for p in fast) > 0.5 > max(slow, default=0.0)


def test_the_budget_binds_per_host_and_failures_back_off(db_url, capsys):
    site = SimulatedSite("budget", {"pages": BEHAVIOURS["no-lastmod"]}, 30, seed=3)
    paths = sorted(site.pages)
    with SiteServer(site) as server:
        with History.open(db_url) as history:
            audit_site(server.origin, history, OPTIONS)
            at = datetime.now(UTC) - timedelta(hours=20)
            failed = [FetchRecord(server.origin + p, at, 503) for p in paths[:3]]
            for days in (1, 0):  # a URL that failed twice: next try 2 days after
                then = at - timedelta(days=days)
                failed += [FetchRecord(server.origin + paths[3], then, 503)]
            record_fetches(history, failed)
        planned = _plan(capsys, db_url, server.origin, "--budget", "10")
        everything = _plan(capsys, db_url, server.origin, "--budget", "100")

    assert len(planned) == 10
    reasons = {f["url"].removeprefix(server.origin): f["reason"] for f in everything}
    assert {reasons[p] for p in paths[:3]} == {"retry"}  # one failure: tried the next day
    assert paths[3] not in reasons  # two failures, the last 20 hours ago: waits 2 days
    assert {reasons[p] for p in paths[4:]} == {"never-fetched"}


def test_plan_text_and_csv_and_a_site_not_in_the_history(db_url, capsys, tmp_path):
    site = SimulatedSite("formats", {"pages": BEHAVIOURS["no-lastmod"]}, 5, seed=3)
    with SiteServer(site) as server:
        with History.open(db_url) as history:
            audit_site(server.origin, history, OPTIONS)
        assert main(["plan", "--db", db_url, "--format", "text"]) == 0
        lines = capsys.readouterr().out.split()
        assert sorted(lines) == sorted(server.origin + p for p in site.pages)
        assert main(["plan", server.origin, "--db", db_url, "--format", "csv", "--no-walk"]) == 0
        rows = capsys.readouterr().out.splitlines()
        assert rows[0].split(",")[:5] == ["url", "site", "sitemap", "due_at", "reason"]
        assert len(rows) == 6
    assert main(["plan", "https://never-audited.example", "--db", db_url]) == 2
    assert "not in the history" in capsys.readouterr().err


def test_a_generation_time_site_with_one_quiet_day_keeps_being_crawled(db_url, capsys):
    """The issue's Scrapy case: a site whose every copy was seen unchanged after a day
    (24 one-day intervals, no change) is not left without fetches while they age."""
    site = SimulatedSite("quiet", {"pages": BEHAVIOURS["generation-time"]}, 24, seed=4)
    with SiteServer(site) as server:
        with History.open(db_url) as history:
            assert audit_site(server.origin, history, OPTIONS).verdict == "untrusted"
            now = datetime.now(UTC)
            for days in (3, 2):  # the first crawl, then a quiet day
                _crawled(history, server.origin, site.pages, now - timedelta(days=days))
        planned = _plan(capsys, db_url, server.origin, "--budget", "24")

    assert planned, "nothing planned two days after a quiet day"
    assert len(planned) <= 24
    assert {f["reason"] for f in planned} <= {"rate", "explore"}


def test_pages_just_fetched_are_not_planned_again_at_no_chance_of_change(db_url, capsys):
    """The issue's first look: right after a crawl of every page was recorded, the plan
    listed half of them again at p_changed 0.0. Pages fetched moments ago have nothing
    to tell; the plan goes to the others, each with a chance of change worth a fetch."""
    site = SimulatedSite("just", {"pages": BEHAVIOURS["no-lastmod"]}, 40, seed=5)
    with SiteServer(site) as server:
        with History.open(db_url) as history:
            audit_site(server.origin, history, OPTIONS)
            now = datetime.now(UTC)
            paths = sorted(site.pages)
            _crawled(history, server.origin, paths, now - timedelta(days=9))
            _crawled(history, server.origin, paths[:30], now - timedelta(minutes=2))
        planned = _plan(capsys, db_url, server.origin, "--budget", "80")
        with History.open(db_url) as history:  # then every page again, moments ago
            _crawled(history, server.origin, paths[30:], now - timedelta(minutes=1))
        again = _plan(capsys, db_url, server.origin, "--budget", "80")

    just = {server.origin + p for p in paths[:30]}
    assert planned, "nothing planned for the 10 pages whose copies are 9 days old"
    assert [f["url"] for f in planned if f["url"] in just] == []
    assert all(f["p_changed"] >= MIN_P_CHANGED for f in planned if f["reason"] == "rate")
    assert again == [], [(f["reason"], f["p_changed"]) for f in again]
