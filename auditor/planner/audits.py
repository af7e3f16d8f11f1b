"""The audits' own comparisons as change evidence for the plan's rates.

Each audit's panel re-fetches pages an earlier run fetched and says whether their main
content changed (``pages.content_changed``): an interval from the earlier fetch to this
one, changed or not, the same evidence a crawler's two fetches give. The plan counts
these intervals beside the crawl log's (:mod:`auditor.planner.make`), except where the
crawler already observed that span of the page's life (``crawl_state`` keeps how many
days its intervals cover, ending at the crawler's copy): the same weeks seen twice would
count one quiet page as two. A page the crawler has not re-fetched yet, a site audited
before any crawl, and the time before the crawl began or since its copy thus gain what
the audits saw.

Touches: nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

__all__ = ["AuditInterval", "audit_intervals", "outside_crawl"]

#: How far (days) an audit's interval may reach into the crawl's observed span and still
#: count as outside it: the crawler and the audit fetching a page minutes apart share an
#: end, not a span.
_TOUCH_DAYS = 1 / 24


@dataclass(frozen=True)
class AuditInterval:
    """One page's two fetches by audits, and whether its content changed between them."""

    loc: str
    start: datetime
    end: datetime
    changed: bool


def audit_intervals(rows: Iterable[tuple[str, datetime, bool | None]]) -> list[AuditInterval]:
    """The intervals of the audits' fetches (``loc``, ``fetched_at``, ``content_changed``
    against the page's previous fetch, None where not compared), by page then time: each
    compared fetch with the page's fetch before it. A fetch compared with one no longer
    kept (its run deleted) has no start, and gives none."""
    found: list[AuditInterval] = []
    previous: tuple[str, datetime] | None = None
    for loc, fetched_at, changed in sorted(rows, key=lambda row: (row[0], row[1])):
        if changed is not None and previous is not None and previous[0] == loc:
            found.append(AuditInterval(loc, previous[1], fetched_at, bool(changed)))
        previous = (loc, fetched_at)
    return found


def outside_crawl(
    interval: AuditInterval,
    now: datetime,
    copy_age: float,
    observed_days: float,
    crawl_intervals: float,
) -> bool:
    """Whether ``interval`` lies outside the span the crawler observed the page over: its
    ``crawl_intervals`` cover ``observed_days`` ending at its copy, ``copy_age`` days
    before ``now`` (NaN: no copy)."""
    if crawl_intervals <= 0 or observed_days <= 0 or math.isnan(copy_age):
        return True
    day = 86_400.0
    start_ago = (now - interval.start).total_seconds() / day
    end_ago = (now - interval.end).total_seconds() / day
    newest, oldest = copy_age, copy_age + observed_days  # the crawl's span, in days ago
    return start_ago <= newest + _TOUCH_DAYS or end_ago >= oldest - _TOUCH_DAYS
