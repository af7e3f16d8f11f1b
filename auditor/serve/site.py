"""One site in ``auditor serve``: its verdict timeline over runs, its latest run's
segments (sub-sitemaps and groups) with their verdicts, reasons and since when each holds,
today's plan in counts by reason, and the crawl batches its latest run weighed.

The plan is the one ``auditor plan SITE --no-walk`` makes: on the stored walk and
robots.txt, no request, nothing written (a read-only handle refuses any write). Its
counts are kept per site until the history's runs change.

Touches: the database.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from auditor.history.batches import CrawlBatch
from auditor.history.records import RunRecord, instant
from auditor.serve.fleetstate import SiteRow

if TYPE_CHECKING:
    from auditor.history import History
    from auditor.serve.fleet import FleetTable
    from auditor.serve.readers import Readers

__all__ = ["TIMELINE_RUNS", "SiteDetail", "site_detail", "site_plan_lines"]

#: Runs a site's timeline shows at most (the latest): a site audited daily for a year
#: and a half; its page stays light.
TIMELINE_RUNS = 500
#: Sites whose plan counts are kept (each a handful of numbers; the plan of a
#: 1,000,000-URL site took 24.9 s and 742 MB to make: tests/benchmarks/README.md).
_KEPT_PLANS = 1_000


@dataclass(frozen=True)
class SiteDetail:
    """One site as its page shows it."""

    row: SiteRow
    timeline: tuple[RunRecord, ...]  # every run, oldest first (the latest TIMELINE_RUNS)
    segments: tuple[dict[str, Any], ...]  # the latest run's segments (see segments_of)
    plan_counts: dict[str, int]  # today's plan for this site by reason ({} if none)
    crawl_batches: tuple[CrawlBatch, ...]  # the batches that fed its latest run
    latest_result: dict[str, Any]  # the latest run's stored result


class _Plans:
    """Plan counts kept by (history, site, table version), the oldest forgotten first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str, str], dict[str, int]] = OrderedDict()

    def get(self, key: tuple[str, str, str]) -> dict[str, int] | None:
        with self._lock:
            return self._kept.get(key)

    def put(self, key: tuple[str, str, str], counts: dict[str, int]) -> None:
        with self._lock:
            self._kept[key] = counts
            while len(self._kept) > _KEPT_PLANS:
                self._kept.popitem(last=False)


_plans = _Plans()


def site_detail(
    readers: Readers, table: FleetTable, slug: str, *, now: datetime | None = None
) -> SiteDetail | None:
    """The detail of the site whose slug (or origin) is ``slug``; None: no such site.
    ``now``: the plan's instant (default: now; then its counts are kept until the
    table's version changes)."""
    row = table.site(slug)
    if row is None:
        return None
    history = readers.history()
    with history.read_snapshot():
        timeline = tuple(history.recent_runs(row.site, TIMELINE_RUNS))
        result = history.result(row.last_run_id) or {}
        segments = segments_of(history, row.site, row.last_run_id)
        ids = tuple(int(i) for i in result.get("crawl_batches") or ())
        batches = tuple(history.crawl_batches(ids)) if ids else ()
    counts = _counts(history, (str(history.location), row.site, table.version), now)
    return SiteDetail(row, timeline, segments, counts, batches, result)


def segments_of(history: History, site: str, run_id: int) -> tuple[dict[str, Any], ...]:
    """A run's segments, each with sitemap, group_pattern (None for a whole file),
    verdict, reasons (texts: ``code: detail``), urls, compared, changed,
    lastmod_advanced, precision, recall, recheck_days, change_rate, and since (when the
    segment's verdict began to hold: None for a run other than the site's latest)."""
    streaks = history.segment_streaks(site)
    found = []
    for segment in history.run_segments(run_id):
        reasons = [f"{r['code']}: {r['detail']}" for r in segment["reasons"]]
        since = streaks.get((segment["sitemap"], segment["group_pattern"]))
        found.append(segment | {"reasons": reasons, "since": _instant(since)})
    return tuple(found)


def _instant(value: Any) -> datetime | None:
    """An instant as the view gives it (text on SQLite, a datetime on PostgreSQL)."""
    if value is None or isinstance(value, datetime):
        return value.astimezone(UTC) if value is not None else None
    return instant(str(value))


def _counts(history: History, key: tuple[str, str, str], now: datetime | None) -> dict[str, int]:
    """The plan counts of ``key``'s site (history, site, version), kept when ``now`` is
    None."""
    site = key[1]
    if now is not None:
        return _plan_counts(history, site, now)
    found = _plans.get(key)
    if found is None:
        found = _plan_counts(history, site, datetime.now(UTC))
        _plans.put(key, found)
    return found


def _plan_counts(history: History, site: str, now: datetime) -> dict[str, int]:
    """Today's plan for ``site`` (no walk) by reason, most first."""
    from auditor.planner import plan

    counts = Counter(fetch.reason for fetch in plan(history, [site], now=now, walk=False))
    return dict(counts.most_common())


def site_plan_lines(readers: Readers, site: str, *, now: datetime | None = None) -> Iterator[str]:
    """The JSON lines of ``auditor plan SITE --no-walk --format jsonl`` (at ``now``,
    default now). The plan is made from the history in the calling thread before this
    returns; the lines are then written as they are iterated, with no database access
    (a streaming response may iterate in other threads)."""
    from auditor.planner import plan
    from auditor.planner.lines import json_lines

    history = readers.history()
    fetches = list(plan(history, [site], now=now or datetime.now(UTC), walk=False))
    return json_lines(fetches)
