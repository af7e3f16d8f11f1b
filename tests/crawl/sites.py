"""A demo site on loopback, audited once, and its pages fetched as a crawler would."""

from __future__ import annotations

from datetime import datetime

import requests

from auditor.audit import AuditOptions
from auditor.crawl.records import FetchRecord
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
    """Walk the site's sitemaps again and keep the walk, as a plan does."""
    current = history.current_inventory(origin)
    assert current is not None
    from auditor.models import SitemapFile

    previous = PreviousRun([SitemapFile(**f) for f in current[1]], current[2])
    found = load_inventory(origin, previous=previous)
    history.save_plan_walk(origin, at, found.files, found.entries)
