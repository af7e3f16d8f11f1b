"""auditor as a crawl policy: weekly audits, ``auditor.plan`` each day, the fetches over
HTTP from the loopback sites, fed back with ``auditor.record_fetches``.

Written against the plan API as it is specified (``auditor.plan(history, sites=...,
now=..., budget=..., horizon_days=1.0)`` yielding items with ``url``, ``due_at``,
``priority``, ``p_changed``; ``auditor.record_fetches(history, records, now=...)``),
imported lazily: in a checkout without them, :func:`plan_api` is None and
:func:`run_auditor` runs the weekly audits alone (``plan=False``), which proves the
world reads to auditor as each behaviour promises.

Timeline (one :class:`~auditor.demo.clock.SimulatedClock` for the sites and audits,
jumped to each instant of the fetch model, :mod:`.policies`):

- the seed crawl at ``SEED_CRAWL_AT``: every page fetched over HTTP, handed to
  ``record_fetches`` after the day-0 audits (the crawler's log as auditor is adopted);
- days 0, 7, 14, 21 at midnight: ``audit_site`` for every site (its own sample fetches
  are auditor's, not the crawler's: counted apart, no copy kept);
- every day at its planning instant: ``plan``; the items due before the next planning
  instant, per host in order of ``due_at`` (then priority), at most the budget (the
  highest priorities when a plan offers more: counted as over budget), fetched at the
  day's slot instants; then ``record_fetches`` of the day's fetches, bodies included.

The instant a page was fetched is the one its server served it at (its log), to the
second: freshness is measured on the exact version the crawler got.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from auditor.audit import AuditOptions, audit_site
from auditor.crawl.records import FetchRecord
from auditor.demo.clock import SimulatedClock
from auditor.history import History
from auditor.sampler import SampleOptions

from .policies import SEED_CRAWL_AT, Fetches, Prediction, plan_instant, slot_instants
from .server import PlanSiteServer, serve_world
from .world import DAY, World

__all__ = ["AUDIT_EVERY", "AuditRow", "AuditorRun", "http_get", "plan_api", "run_auditor"]

#: Days between two audits of every site (re-verification).
AUDIT_EVERY = 7
UNAVAILABLE = "auditor policy: not available in this checkout"


@dataclass(frozen=True)
class AuditRow:
    """One audit: the site, its behaviour, the day, the verdict and pages it fetched."""

    site: str
    behaviour: str
    day: int
    verdict: str
    requested: int


@dataclass
class AuditorRun:
    """What the auditor policy did: its fetches (None without a plan API) and audits."""

    fetches: Fetches | None
    audits: list[AuditRow] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)


def plan_api() -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    """``(auditor.plan, auditor.record_fetches)``, or None when this checkout has not them."""
    try:
        import auditor

        return auditor.plan, auditor.record_fetches  # lazy exports: AttributeError if absent
    except (AttributeError, ImportError):
        return None


class _Crawler:
    """The team's crawler: fetches URLs from the loopback sites at given instants."""

    def __init__(self, world: World, servers: list[PlanSiteServer], clock: SimulatedClock):
        self.world, self.clock = world, clock
        self.servers = {s.host: (i, s) for i, s in enumerate(servers)}
        self.session = requests.Session()

    def jump(self, s: int) -> None:
        """Move the simulated clock to instant ``s``."""
        self.clock.advance(self.world.at(s) - self.clock.now())

    def fetch(self, url: str, s: int) -> tuple[FetchRecord, int | None, int | None, int]:
        """GET ``url`` at ``s``: its record, (site, page) when it is a page of the world,
        and the instant it was served at."""
        self.jump(s)
        parts = urlsplit(url)
        site, server = self.servers.get(parts.hostname or "", (None, None))
        status, body, headers = http_get(self.session, url)
        served, page = s, None
        if server is not None and status == 200 and server.served:
            last = server.served[-1]
            if last.path == parts.path:
                served, page = last.instant, server.site.by_path.get(parts.path)
        record = FetchRecord(url, self.world.at(served), status, body=body, headers=headers)
        return record, site, page, served

    def close(self) -> None:
        self.session.close()


def run_audits(
    world: World, history: History, servers: list[PlanSiteServer], crawler: _Crawler, day: int
) -> list[AuditRow]:
    """Audit every site at midnight of ``day``, each on the simulated clock."""
    rows = []
    for site, server in zip(world.sites, servers, strict=True):
        crawler.jump(day * DAY)
        options = AuditOptions(
            sample=SampleOptions(delay=0.0), seed=site.seed, clock=crawler.clock.now
        )
        result = audit_site(server.origin, history, options)
        rows.append(
            AuditRow(site.name, site.behaviour, day, result.verdict, result.sample.requested)
        )
    return rows


def run_auditor(
    world: World,
    budget: int,
    folder: Path,
    *,
    plan: bool = True,
    audit_every: int | None = AUDIT_EVERY,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> AuditorRun:
    """The auditor policy on ``world`` (history in ``folder``): audits every
    ``audit_every`` days (None: none), and with ``plan`` and a plan API, the daily plans
    and fetches."""
    api = plan_api() if plan else None
    clock = SimulatedClock(world.at(SEED_CRAWL_AT))
    run = AuditorRun(None)
    with (
        History.open(str(folder / "plan.sqlite3")) as history,
        serve_world(world, clock.now) as servers,
    ):
        crawler = _Crawler(world, servers, clock)
        try:
            if api is None:
                for day in range(0, world.days, audit_every) if audit_every else ():
                    run.audits += run_audits(world, history, servers, crawler, day)
                    say(f"auditor: audits of day {day} done (audits only)")
                return run
            run.fetches = _crawl(
                world, budget, history, servers, crawler, api, run, audit_every, say
            )
        finally:
            crawler.close()
    return run


def _crawl(
    world: World,
    budget: int,
    history: History,
    servers: list[PlanSiteServer],
    crawler: _Crawler,
    api: tuple[Callable[..., Any], Callable[..., Any]],
    run: AuditorRun,
    audit_every: int | None,
    say: Callable[[str], None],
) -> Fetches:
    plan, record_fetches = api
    origins = [s.origin for s in servers]
    fetches = Fetches([[[] for _ in site.pages] for site in world.sites])
    notes = run.notes
    for key in ("planned", "due", "over budget", "off-world", "failed", "audit pages"):
        notes[key] = 0
    seed_records = []
    for index, site in enumerate(world.sites):
        for number, p in enumerate(site.pages):
            record, _, _, served = crawler.fetch(servers[index].url(p.path), SEED_CRAWL_AT)
            fetches.add(index, number, served)
            seed_records.append(record)
    for day in range(world.days):
        if audit_every is not None and day % audit_every == 0:
            audits = run_audits(world, history, servers, crawler, day)
            run.audits += audits
            notes["audit pages"] += sum(a.requested for a in audits)
        if seed_records:
            record_fetches(history, seed_records, now=world.at(plan_instant(0)))
            seed_records = []
        now = plan_instant(day)
        crawler.jump(now)
        items = list(
            plan(history, sites=origins, now=world.at(now), budget=budget, horizon_days=1.0)
        )
        notes["planned"] += len(items)
        if os.environ.get("PLANBENCH_REASONS"):
            reasons = Counter((urlsplit(i.url).hostname, i.reason) for i in items)
            say(
                f"  day {day}: "
                + ", ".join(f"{h[-3:]}:{r}={n}" for (h, r), n in sorted(reasons.items()))
            )
        until = world.at(plan_instant(day + 1))
        per_host: dict[str, list[Any]] = {}
        for item in items:
            if item.due_at < until:
                per_host.setdefault(urlsplit(item.url).hostname or "", []).append(item)
        slots = slot_instants(day, budget)
        queue = []
        for host_items in per_host.values():
            notes["due"] += len(host_items)
            if len(host_items) > budget:
                notes["over budget"] += len(host_items) - budget
                host_items = sorted(host_items, key=lambda i: -i.priority)[:budget]
            host_items.sort(key=lambda i: (i.due_at, -i.priority))
            queue += [(slot, item) for slot, item in zip(slots, host_items, strict=False)]
        queue.sort(key=lambda pair: pair[0])
        records = []
        for slot, item in queue:
            record, owner, page, served = crawler.fetch(item.url, slot)
            records.append(record)
            if record.status != 200:
                notes["failed"] += 1
            if owner is None or page is None:
                notes["off-world"] += 1
                continue
            fetches.add(owner, page, served)
            if item.p_changed is not None:
                fetches.predictions.append(Prediction(owner, page, served, float(item.p_changed)))
        record_fetches(history, records, now=world.at((day + 1) * DAY))
        say(f"auditor: day {day + 1} of {world.days}: {len(items)} planned, {len(queue)} fetched")
    fetches.notes.update(notes)
    return fetches


def http_get(
    session: requests.Session, url: str
) -> tuple[int | None, bytes | None, dict[str, str]]:
    """A crawler's GET of ``url``: its status, body and headers (no status, no body when
    nothing answered)."""
    try:
        response = session.get(url, timeout=30, allow_redirects=False)
    except requests.RequestException:
        return None, None, {}
    return response.status_code, response.content, dict(response.headers)
