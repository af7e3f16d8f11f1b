"""A demo site on loopback, audited once, and its pages fetched as a crawler would."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import requests

from auditor.audit import AuditOptions
from auditor.crawl.records import FetchRecord
from auditor.crawl.resolve import resolve_walk
from auditor.demo.site import SimulatedSite
from auditor.history import History
from auditor.sampler import SampleOptions
from auditor.walker.inventory import load_inventory
from auditor.walker.reuse import PreviousRun

OPTIONS = AuditOptions(sample=SampleOptions(sample=50, delay=0.0), seed=7)


def crawl(origin: str, paths: list[str], at: datetime, *, bodies: bool = True) -> list[FetchRecord]:
    """Fetch ``paths`` of the site now, as fetches made ``at``."""
    records = []
    with requests.Session() as session:
        for path in paths:
            response = session.get(origin + path, timeout=10)
            records.append(
                FetchRecord(
                    origin + path,
                    at,
                    response.status_code,
                    body=response.content if bodies else None,
                    headers=dict(response.headers),
                )
            )
    return records


def rewalk(history: History, origin: str, at: datetime) -> None:
    """Walk the site's sitemaps again and keep the walk, as a plan does: the fetches made
    before ``at`` that were pending a walk are judged against it."""
    current = history.current_inventory(origin)
    assert current is not None
    from auditor.models import SitemapFile

    previous = PreviousRun([SitemapFile(**f) for f in current[1]], current[2])
    found = load_inventory(origin, previous=previous)
    history.save_plan_walk(origin, at, found.files, found.entries)
    resolve_walk(history, origin, at, found.entries)


def tick_now(site: SimulatedSite) -> list[str]:
    """Some pages change now, in real time, their lastmod with them on an accurate site.
    The demo writes lastmods to the second and a WARC its dates: the changes are made in
    a second clear of the one a fetch just made was dated in, and the call returns once
    the second after them is over, so a fetch dated after it is dated after every change.
    Returns the paths changed."""
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    site.clock = start
    changed = site.tick(timedelta(seconds=1))
    time.sleep(max((start + timedelta(seconds=2) - datetime.now(UTC)).total_seconds(), 0.0))
    return changed
