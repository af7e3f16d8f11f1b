"""auditor as the crawl policy of the replayed site, and why it fetched what it fetched.

The plan bench's timeline (:mod:`..planbench.auditor_policy`) on one :class:`ReplayServer`:
every page fetched over HTTP at ``SEED_CRAWL_AT`` and handed to ``record_fetches`` after
the day-0 audit; an audit (``audit_site``) at midnight every ``audit_every`` days; each
day at its planning instant ``auditor.plan(..., budget=B, horizon_days=1.0)``, the items
due before the next planning instant (at most the budget, the highest priorities when
more) fetched at the day's slot instants in order of ``due_at`` then priority, and
``record_fetches`` of them, bodies included, at the next midnight. The instant a fetch
counts at is the one the server served it at. Besides the fetches, every planned item's
``reason`` is counted, and every fetch is kept with its reason: where the budget went.

Touches: the network (loopback) and the disk (a history in a temp folder).
"""

from __future__ import annotations

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

from ..planbench.auditor_policy import AUDIT_EVERY, http_get, plan_api
from ..planbench.policies import SEED_CRAWL_AT, Fetches, Prediction, plan_instant, slot_instants
from ..planbench.world import DAY, World
from .site import ReplayServer, ReplaySite

__all__ = ["AuditorReplay", "run_auditor"]


@dataclass
class AuditorReplay:
    """What auditor did: its fetches, each with its reason, the reasons of every planned
    item, the audits' verdicts (day, verdict, pages sampled) and counters."""

    fetches: Fetches
    fetched: list[tuple[int, str]] = field(default_factory=list)  # (page, reason)
    planned: Counter[str] = field(default_factory=Counter)
    due: Counter[str] = field(default_factory=Counter)
    audits: list[tuple[int, str, int]] = field(default_factory=list)
    notes: Counter[str] = field(default_factory=Counter)


def _target(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


class _Crawler:
    """Fetches from the replay server at given instants of the simulated clock."""

    def __init__(self, world: World, server: ReplayServer, clock: SimulatedClock) -> None:
        self.world, self.server, self.clock = world, server, clock
        self.session = requests.Session()

    def jump(self, s: int) -> None:
        """Move the simulated clock to instant ``s``."""
        self.clock.advance(self.world.at(s) - self.clock.now())

    def fetch(self, url: str, s: int) -> tuple[FetchRecord, int | None, int]:
        """GET ``url`` at ``s``: its record, its page (None: not a page) and the instant
        it was served at."""
        self.jump(s)
        status, body, headers = http_get(self.session, url)
        served, page = s, None
        if status == 200 and self.server.served:
            last = self.server.served[-1]
            if last.path == _target(url):
                served, page = last.instant, self.server.site.by_path.get(last.path)
        return (
            FetchRecord(url, self.world.at(served), status, body=body, headers=headers),
            page,
            served,
        )


def _audit(
    site: ReplaySite, server: ReplayServer, history: History, crawler: _Crawler, day: int
) -> tuple[int, str, int]:
    crawler.jump(day * DAY)
    options = AuditOptions(sample=SampleOptions(delay=0.0), seed=site.seed, clock=crawler.clock.now)
    result = audit_site(server.origin, history, options)
    return day, result.verdict, result.sample.requested


def run_auditor(
    world: World,
    budget: int,
    folder: Path,
    *,
    audit_every: int = AUDIT_EVERY,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> AuditorReplay | None:
    """The auditor policy on ``world``'s one replayed site (history in ``folder``);
    None when this checkout has no plan API."""
    api = plan_api()
    if api is None:
        return None
    site: ReplaySite = world.sites[0]  # type: ignore[assignment]
    clock = SimulatedClock(world.at(SEED_CRAWL_AT))
    with (
        History.open(str(folder / "daily.sqlite3")) as history,
        ReplayServer(site, clock.now) as server,
    ):
        crawler = _Crawler(world, server, clock)
        try:
            return _crawl(world, site, budget, history, server, crawler, api, audit_every, say)
        finally:
            crawler.session.close()


def _crawl(
    world: World,
    site: ReplaySite,
    budget: int,
    history: History,
    server: ReplayServer,
    crawler: _Crawler,
    api: tuple[Callable[..., Any], Callable[..., Any]],
    audit_every: int,
    say: Callable[[str], None],
) -> AuditorReplay:
    plan, record_fetches = api
    run = AuditorReplay(Fetches([[[] for _ in site.pages]]))
    seed_records = []
    for number, p in enumerate(site.pages):
        record, _, served = crawler.fetch(server.url(p.path), SEED_CRAWL_AT)
        run.fetches.add(0, number, served)
        seed_records.append(record)
    for day in range(world.days):
        if day % audit_every == 0:
            run.audits.append(_audit(site, server, history, crawler, day))
            run.notes["audit pages"] += run.audits[-1][2]
        if seed_records:
            record_fetches(history, seed_records, now=world.at(plan_instant(0)))
            seed_records = []
        now = plan_instant(day)
        crawler.jump(now)
        items = list(
            plan(history, sites=[server.origin], now=world.at(now), budget=budget, horizon_days=1.0)
        )
        run.planned.update(i.reason for i in items)
        until = world.at(plan_instant(day + 1))
        due = [i for i in items if i.due_at < until]
        run.due.update(i.reason for i in due)
        if len(due) > budget:
            run.notes["over budget"] += len(due) - budget
            due = sorted(due, key=lambda i: -i.priority)[:budget]
        due.sort(key=lambda i: (i.due_at, -i.priority))
        records = []
        for slot, item in zip(slot_instants(day, budget), due, strict=False):
            record, page, served = crawler.fetch(item.url, slot)
            records.append(record)
            if record.status != 200:
                run.notes["failed"] += 1
            if page is None:
                run.notes["off-site"] += 1
                continue
            run.fetches.add(0, page, served)
            run.fetched.append((page, item.reason))
            if item.p_changed is not None:
                run.fetches.predictions.append(Prediction(0, page, served, float(item.p_changed)))
        record_fetches(history, records, now=world.at((day + 1) * DAY))
        say(f"auditor: day {day + 1} of {world.days}: {len(items)} planned, {len(records)} fetched")
    return run
