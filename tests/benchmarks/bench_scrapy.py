"""Scrapy crawling a simulated fleet daily for 14 days, with and without auditor: the
fetches made and the binary freshness reached.

Run by hand, never by pytest:
    python3 tests/benchmarks/bench_scrapy.py               # 14 sites x 120 pages, 14 days
    python3 tests/benchmarks/bench_scrapy.py --sites 7 --pages 60 --days 8   # quicker

The world is the plan bench's (:mod:`tests.benchmarks.planbench.world`): every lastmod
behaviour, each site on its own 127.0.x.y address, pages changing at Poisson moments
drawn up front, so every arm meets the same changes. Every day at 00:05 (simulated) a
real Scrapy crawl runs, in a process of its own, over every site's sitemaps:

- ``full``: Scrapy's ``SitemapSpider`` as is: every listed URL, every day;
- ``lastmod``: the ``sitemap_filter`` recipe of Scrapy's docs: the entries whose lastmod
  is newer than the previous crawl (and those without one), lastmod taken at its word;
- ``auditor``: the add-on and ``AuditorSitemapSpider``: each site audited on days 0 and
  7 (on the simulated clock), the crawl held to the day's plan, its fetches recorded.

Day 0's crawl is every arm's first (everything); fetches are counted from day 1 on, and
freshness (the time-averaged share of pages whose last fetched copy is current, exact
from the change events and the instants the servers served the crawler) over days 1 to
the end. The servers tell the crawler's requests from the audits' by User-Agent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.audit import AuditOptions, audit_site  # noqa: E402
from auditor.demo.clock import SimulatedClock  # noqa: E402
from auditor.history import History  # noqa: E402
from auditor.sampler import SampleOptions  # noqa: E402
from tests.benchmarks.planbench.measure import summarise  # noqa: E402
from tests.benchmarks.planbench.policies import Fetches, plan_instant  # noqa: E402
from tests.benchmarks.planbench.server import PlanSiteServer, serve_world  # noqa: E402
from tests.benchmarks.planbench.world import BEHAVIOUR_GROUPS, DAY, World, make_world  # noqa: E402

ARMS = ("full", "lastmod", "auditor")
AUDIT_DAYS = (0, 7)
AGENT = "Scrapy-bench"


def bench_clock() -> datetime:
    """The simulated time in a crawl's process (AUDITOR_CLOCK): the real clock shifted by
    the offset the bench hands it, as its servers' clock is."""
    return datetime.now(UTC) + timedelta(seconds=float(os.environ["BENCH_CLOCK_OFFSET"]))


# -- one crawl, in a process of its own ------------------------------------------------------
def crawl_main(config: dict[str, Any]) -> None:
    """Run one day's crawl of every site (``--crawl JSON``)."""
    from scrapy.crawler import CrawlerProcess
    from scrapy.spiders import SitemapSpider

    from auditor.scrapy import AuditorSitemapSpider

    since = datetime.fromisoformat(config["since"]) if config.get("since") else None

    robots = tuple(o + "/robots.txt" for o in config["origins"])

    class Full(SitemapSpider):
        name = "full"
        sitemap_urls = robots

        def parse(self, response: Any) -> None:
            return None

    class Lastmod(Full):
        name = "lastmod"

        def sitemap_filter(self, entries: Any) -> Any:
            for entry in entries:
                stamp = _lastmod(entry.get("lastmod"))
                if since is None or stamp is None or stamp > since or "loc" not in entry:
                    yield entry

    class Planned(AuditorSitemapSpider):
        name = "auditor"
        sitemap_urls = robots

        def parse(self, response: Any) -> None:
            return None

    settings: dict[str, Any] = {
        "USER_AGENT": AGENT,
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": 32,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
    }
    arm = config["arm"]
    if arm == "auditor":
        settings |= {
            "ADDONS": {"auditor.scrapy.Addon": 0},
            "AUDITOR_DB": config["db"],
            "AUDITOR_CLOCK": "tests.benchmarks.bench_scrapy.bench_clock",
        }
    process = CrawlerProcess(settings)
    process.crawl({"full": Full, "lastmod": Lastmod, "auditor": Planned}[arm])
    process.start()


def _lastmod(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


# -- the arms ----------------------------------------------------------------------------
def run_arm(arm: str, world: World, folder: Path) -> tuple[Fetches, float]:
    """One arm's crawls over the world's days: the crawler's fetches, and the seconds
    its crawls took (audits left out)."""
    clock = SimulatedClock(world.at(plan_instant(0) - 600))
    fetches = Fetches([[[] for _ in site.pages] for site in world.sites])
    db = str(folder / f"{arm}.sqlite3")
    spent = 0.0
    with serve_world(world, clock.now) as servers:
        origins = [s.origin for s in servers]
        since: datetime | None = None
        for day in range(world.days):
            if arm == "auditor" and day in AUDIT_DAYS:
                clock.advance(world.at(day * DAY) - clock.now())
                _audit(servers, db, clock)
            clock.advance(world.at(plan_instant(day)) - clock.now())
            start = clock.now()
            began = time.perf_counter()
            _crawl(arm, origins, db, clock, since)
            spent += time.perf_counter() - began
            since = start
            print(f"  {arm}: day {day} crawled", file=sys.stderr)
        _collect(world, servers, fetches)
    return fetches, spent


def _audit(servers: list[PlanSiteServer], db: str, clock: SimulatedClock) -> None:
    with History.open(db) as history:
        for server in servers:
            options = AuditOptions(
                sample=SampleOptions(delay=0.0), seed=server.site.seed, clock=clock.now
            )
            audit_site(server.origin, history, options)


def _crawl(
    arm: str, origins: list[str], db: str, clock: SimulatedClock, since: datetime | None
) -> None:
    offset = (clock.now() - datetime.now(UTC)).total_seconds()
    config = {"arm": arm, "origins": origins, "db": db, "since": since and since.isoformat()}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCH_CLOCK_OFFSET": repr(offset)}
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), "--crawl", json.dumps(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=3_600,
    )
    if done.returncode != 0 or "Traceback" in done.stderr:
        raise SystemExit(f"{arm}: the crawl failed:\n{done.stderr[-4000:]}")


def _collect(world: World, servers: list[PlanSiteServer], fetches: Fetches) -> None:
    for index, (site, server) in enumerate(zip(world.sites, servers, strict=True)):
        number = {page.path: n for n, page in enumerate(site.pages)}
        for served in server.served:
            if served.agent == AGENT and served.path in number:
                fetches.add(index, number[served.path], served.instant)
        for instants in fetches.instants[index]:
            instants.sort()


# -- the table ---------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crawl", help=argparse.SUPPRESS)
    parser.add_argument("--sites", type=int, default=14)
    parser.add_argument("--pages", type=int, default=120)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.crawl:
        crawl_main(json.loads(args.crawl))
        return 0
    world = make_world(args.sites, args.pages, args.days, args.seed)
    rows = {}
    with tempfile.TemporaryDirectory() as folder:
        for arm in ARMS:
            fetches, spent = run_arm(arm, world, Path(folder))
            rows[arm] = (summarise(world, fetches, DAY, world.end), _made(world, fetches), spent)
    _print(world, rows)
    return 0


def _print(world: World, rows: dict[str, Any]) -> None:
    groups = [g for g in (*BEHAVIOUR_GROUPS, "overall") if g in rows["full"][0].freshness]
    print(
        f"{len(world.sites)} sites x {len(world.sites[0].pages)} pages, "
        f"{world.days} days (fetches from day 1; freshness over days 1-{world.days})"
    )
    print(f"{'group':<11}" + "".join(f"{arm + ' fetches, fresh':>26}" for arm in ARMS))
    for group in groups:
        cells = []
        for arm in ARMS:
            summary, made, _ = rows[arm]
            cells.append(f"{made[group]:>9,} {summary.freshness[group]:>6.3f}")
        print(f"{group:<11}" + "".join(f"{c:>26}" for c in cells))
    print("crawl seconds: " + ", ".join(f"{arm} {rows[arm][2]:.0f}" for arm in ARMS))


def _made(world: World, fetches: Fetches) -> dict[str, int]:
    """Fetches from day 1 on, per behaviour group and overall."""
    made = dict.fromkeys((*BEHAVIOUR_GROUPS, "overall"), 0)
    for site, pages in zip(world.sites, fetches.instants, strict=True):
        n = sum(1 for instants in pages for s in instants if s >= DAY)
        made[site.behaviour] += n
        made["overall"] += n
    return made


if __name__ == "__main__":
    raise SystemExit(main())
