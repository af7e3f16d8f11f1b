"""Making a plan: each site's pages and their figures gathered from the history (and a
fresh walk of its sitemaps: :mod:`auditor.planner.walk`), less the URLs its robots.txt
disallows (:mod:`auditor.planner.robots`), then the policy of
:mod:`auditor.planner.schedule` per host.

Touches: the network, the database.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from auditor.dispersion.segments import SEPARATOR, Segmenter, segment_key
from auditor.history.planreads import Batched
from auditor.history.state import state_columns
from auditor.planner.audits import AuditInterval, audit_intervals, outside_crawl
from auditor.planner.columns import Listed, segment_sums
from auditor.planner.fetch import PlannedFetch, named_fetches
from auditor.planner.rates import (
    DEFAULT_RATE,
    MIN_POOL_PAGES,
    PRIOR_INTERVALS,
    cgm_rate,
    dated_rate,
    pooled_rates,
    shrunk_rate,
)
from auditor.planner.robots import UNKNOWN, Disallowed, allowed_rows, policy_kept
from auditor.planner.schedule import MIN_OBSERVED, SitePages, schedule_arrays
from auditor.planner.signal import Signal, signal_of
from auditor.planner.walk import walk_site
from auditor.sampler.pacing import DEFAULT_DELAY

if TYPE_CHECKING:
    import pandas as pd

    from auditor.history import History
    from auditor.history.crawl import CrawlCounts, CrawlState
    from auditor.history.planreads import StoredSite
    from auditor.history.records import RunRecord
    from auditor.sampler.robots import RobotsPolicy
    from auditor.walker import WalkOptions

__all__ = [
    "BUDGET_SHARE",
    "PlannedFetch",
    "SiteGathered",
    "default_budget",
    "plan",
    "plan_site",
]

_log = logging.getLogger(__name__)

#: Names that moved to :mod:`auditor.planner.figures`, still importable from here.
_MOVED = ("PlanFigures", "plan_figures", "site_figures")


def __getattr__(name: str) -> Any:
    """The names of :data:`_MOVED`, from their new module."""
    if name in _MOVED:
        from auditor.planner import figures

        return getattr(figures, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The default budget is this share of the fetches a day that politeness allows at the
#: site's delay (the larger of auditor's default delay and robots.txt's Crawl-delay):
#: half of the day, leaving the host time for the audits, retries and other crawlers.
BUDGET_SHARE = 0.5


def default_budget(crawl_delay: float | None = None) -> int:
    """Fetches a day a host is given by default (:data:`BUDGET_SHARE`)."""
    delay = max(DEFAULT_DELAY, crawl_delay or 0.0)
    return max(int(BUDGET_SHARE * 86_400 / delay), 1)


def plan(
    history: History,
    sites: Sequence[str] | None = None,
    *,
    now: datetime | None = None,
    budget: int | None = None,
    horizon_days: float = 1.0,
    walk: bool = True,
    walk_options: WalkOptions | None = None,
    on_robots: Callable[[Disallowed], None] | None = None,
) -> Iterator[PlannedFetch]:
    """The fetches due within ``horizon_days`` for ``sites`` (origins; None: every site
    in the history), at most ``budget`` a day per host name (None: :func:`default_budget`
    at its Crawl-delay), highest priority first within each host. No URL the site's
    robots.txt disallows for auditor is planned: ``on_robots`` is told, site by site, what
    it kept out. ``walk=False`` plans on the stored walks and robots.txt, without a
    request."""
    moment = now or datetime.now(UTC)
    hosts = _by_host(history.audited(sites))
    every = [origin for _, origins in hosts for origin in origins]
    stored = None if walk else Batched(history.stored_sites, every)
    for host, origins in hosts:
        gathered = [
            plan_site(history, o, moment, walk, walk_options, stored.of(o) if stored else None)
            for o in origins
        ]
        pages = [g.pages for g in gathered]
        delays = [g.crawl_delay for g in gathered if g.crawl_delay is not None]
        for g in gathered:
            if on_robots is not None:
                on_robots(g.robots)
        limit = budget if budget is not None else default_budget(max(delays, default=None))
        _log.info("planning %s: %d sites, budget %d a day", host, len(pages), limit)
        yield from named_fetches(pages, schedule_arrays(pages, limit, horizon_days), moment)


def _by_host(origins: Iterable[str]) -> list[tuple[str, list[str]]]:
    from urllib.parse import urlsplit

    groups: dict[str, list[str]] = {}
    for origin in origins:
        groups.setdefault(urlsplit(origin).hostname or origin, []).append(origin)
    return sorted(groups.items())


@dataclass
class _Segment:
    """One sub-sitemap's figures for the plan."""

    signal: Signal
    pool_rate: float


class SiteGathered(NamedTuple):
    """One site as the plan reads it: its pages, its robots.txt Crawl-delay, and what
    robots.txt kept out of the plan."""

    pages: SitePages
    crawl_delay: float | None
    robots: Disallowed


def plan_site(
    history: History,
    site: str,
    now: datetime,
    walk: bool = True,
    walk_options: WalkOptions | None = None,
    stored: StoredSite | None = None,
) -> SiteGathered:
    """One site's pages as the policy reads them (those its robots.txt allows), with a
    fresh walk unless ``walk`` is false (then on the stored walk and robots.txt: the
    site's ``stored`` reads when given, else read now)."""
    if walk:
        current = history.current_inventory(site)
        if current is None:
            return SiteGathered(_empty(site), None, Disallowed(site, 0, "allow-all", "no walk"))
        entries, previous = current[2], set(current[2]["loc"])
        walked = walk_site(history, site, current, now, walk_options)
        policy: RobotsPolicy | None = walked.robots
        listed = Listed.of_frame(entries if walked.entries is None else walked.entries)
    else:
        stored = stored or history.stored_sites([site]).get(site)
        if stored is None or stored.inventory is None:
            return SiteGathered(_empty(site), None, Disallowed(site, 0, "allow-all", "no walk"))
        listed = Listed.of_state(state_columns(stored.inventory))  # no DataFrame: 3 columns
        policy, previous = policy_kept(stored.robots), set()  # nothing walked: none new
    allowed, disallowed = allowed_rows(site, listed.locs, policy)
    if allowed is not None:
        listed = listed.kept(allowed)
    if disallowed.urls or disallowed.rule == UNKNOWN:
        _log.info("plan: %s: %s", site, disallowed.sentence())
    delay = policy.crawl_delay if policy is not None else None
    pages = _pages(history, site, listed, previous, now, known=None if walk else stored)
    return SiteGathered(pages, delay, disallowed)


def _empty(site: str) -> SitePages:
    nothing, none = np.zeros(0), np.zeros(0, dtype=bool)
    no_segment = np.zeros(0, dtype=np.intp)
    return SitePages(site, [], no_segment, [], [], [], nothing, nothing, nothing, nothing,
                     none, none, none)  # fmt: skip


def _pages(
    history: History,
    site: str,
    entries: pd.DataFrame | Listed,
    previous: set[str],
    now: datetime,
    result: dict[str, Any] | None = None,
    known: StoredSite | None = None,
) -> SitePages:
    """The arrays of ``site``'s listed pages, from its entries and the crawl log (the
    sub-sitemaps' verdicts from ``result``, else from the site's latest run: ``known``'s
    when given, else read now)."""
    listed = entries if isinstance(entries, Listed) else Listed.of_frame(entries)
    n, locs, lastmod = len(listed), listed.locs, listed.days
    latest, stored, site_id = _reads(history, site, result, known)
    segmenter = Segmenter.from_dict(((stored or {}).get("dispersion") or {}).get("groupings"))
    keys = segmenter.keys(listed.sitemaps, locs)
    names = sorted(set(keys))
    code = {name: i for i, name in enumerate(names)}
    segment = np.array([code[key] for key in keys], dtype=np.intp)
    figures = _Figures(n)
    at = {loc: i for i, loc in enumerate(locs)}
    if site_id is not None:
        for state in history.stream_crawl_states(site_id):
            i = at.get(state.loc)
            if i is not None:
                figures.take(i, state, now)
        audited = known.audits if known is not None else history.audit_fetches(site_id)
        figures.add_audits(audit_intervals(audited), at, now)
    advanced = ~np.isnan(lastmod) & (
        np.isnan(figures.copy_lastmod) | (lastmod > figures.copy_lastmod)
    )
    looks = figures.looks()
    known_site = (site, site_id)
    crawled = _crawled_since(history, known_site, latest, segmenter) if result is None else {}
    segments = _segments(names, (segment, looks), figures, stored, crawled)
    own = figures.own_rate()
    pool = np.array([s.pool_rate for s in segments] + [DEFAULT_RATE])[segment]
    seen = np.bincount(segment[looks > 0], minlength=len(names) + 1)[segment]
    return SitePages(
        site=site,
        locs=locs,
        segment=segment,
        sitemaps=[name.partition(SEPARATOR)[0] for name in names],
        groups=[name.partition(SEPARATOR)[2] or None for name in names],
        signals=[s.signal for s in segments],
        lastmods=listed.lastmods,
        rate=_rates(own, figures, pool, (segment, looks), len(names)),
        copy_age=figures.copy_age,
        fetch_age=figures.fetch_age,
        failures=figures.failures,
        advanced=advanced,
        new=np.array([loc not in previous for loc in locs], dtype=bool)
        if previous
        else np.zeros(n, dtype=bool),
        known=(seen >= MIN_POOL_PAGES) | (looks >= MIN_OBSERVED),
    )


def _rates(
    own: np.ndarray[Any, Any],
    figures: _Figures,
    pool: np.ndarray[Any, Any],
    coded: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]],
    segments: int,
) -> np.ndarray[Any, Any]:
    """Each page's rate: read against its sub-sitemap's learned distribution of rates
    where enough of its pages were observed, else shrunk towards the pooled rate
    (``coded``: each page's segment code and its observations, :meth:`_Figures.looks`)."""
    segment, looks = coded
    rate = shrunk_rate(own, looks, pool)
    for code in range(segments):
        mine = segment == code
        rate[mine] = pooled_rates(
            figures.intervals[mine],
            figures.changes[mine],
            figures.observed[mine],
            rate[mine],
            figures.copy_age[mine],
            dated_changes=figures.dated_changes[mine],
            dated_days=figures.dated_days[mine],
        )
    return rate


class _Figures:
    """The crawl log's figures of each listed page, as arrays."""

    def __init__(self, n: int) -> None:
        self.copy_age = np.full(n, np.nan)
        self.fetch_age = np.full(n, np.nan)
        self.copy_lastmod = np.full(n, np.nan)
        self.failures = np.zeros(n)
        self.intervals = np.zeros(n)
        self.changes = np.zeros(n)
        self.observed = np.zeros(n)
        self.dated_changes = np.zeros(n)
        self.dated_days = np.zeros(n)

    def own_rate(self) -> np.ndarray[Any, Any]:
        """Each page's own estimate: undated intervals and dated changes together."""
        undated = cgm_rate(self.intervals, self.changes, self.observed)
        return dated_rate(undated, self.observed, self.dated_changes, self.dated_days)

    def add_audits(
        self, intervals: Iterable[AuditInterval], at: Mapping[str, int], now: datetime
    ) -> None:
        """Count the audits' intervals of the listed pages (``at``: each URL's index)
        where the crawler did not observe that span already (:mod:`.audits`)."""
        counted = [
            (i, interval)
            for interval in intervals
            if (i := at.get(interval.loc)) is not None
            and outside_crawl(interval, now, self.copy_age[i], self.observed[i], self.intervals[i])
        ]  # all judged against the crawl's own figures before any is added to them
        for i, interval in counted:
            self.intervals[i] += 1
            self.changes[i] += interval.changed
            self.observed[i] += (interval.end - interval.start).total_seconds() / 86_400

    def looks(self) -> np.ndarray[Any, Any]:
        """How many observations each page's rate stands on: its undated intervals, its
        dated changes, and one for dated exposure without a change."""
        quiet = (self.dated_days > 0) & (self.dated_changes == 0)
        looks: np.ndarray[Any, Any] = self.intervals + self.dated_changes + quiet
        return looks

    def take(self, i: int, state: CrawlState, now: datetime) -> None:
        """Set page ``i``'s figures from its crawl state."""
        self.fetch_age[i] = max((now - state.fetched_at).total_seconds() / 86_400, 0.0)
        if state.ok_fetched_at is not None:
            self.copy_age[i] = max((now - state.ok_fetched_at).total_seconds() / 86_400, 0.0)
        if state.lastmod is not None:
            self.copy_lastmod[i] = state.lastmod.timestamp() / 86_400
        self.failures[i] = state.failures
        self.intervals[i] = state.intervals
        self.changes[i] = state.changes
        self.observed[i] = state.observed_days
        self.dated_changes[i] = state.dated_changes
        self.dated_days[i] = state.dated_days


def _reads(
    history: History, site: str, result: dict[str, Any] | None, known: StoredSite | None
) -> tuple[RunRecord | None, dict[str, Any] | None, int | None]:
    """The site's latest run (None where ``result`` stands for it), the result its
    verdicts are read from and its id: ``known``'s when given, else read now."""
    if known is not None:
        return known.latest, known.result, known.site_id
    latest = history.latest_run(site) if result is None else None
    stored = result if result is not None else _latest_result(history, latest)
    return latest, stored, history.site_id(site)


def _latest_result(history: History, latest: RunRecord | None) -> dict[str, Any] | None:
    return history.result(latest.run_id) if latest else None


def _crawled_since(
    history: History,
    site: tuple[str, int | None],
    latest: RunRecord | None,
    segmenter: Segmenter,
) -> Mapping[str, CrawlCounts]:
    """The crawler's counts per segment since the ``site``'s (origin, id) ``latest`` run:
    the files that run split read URL by URL, each URL counted in its group by the run's
    own ``segmenter`` (the one the pages are labelled with), the other files whole."""
    if latest is None:
        return {}
    origin, site_id = site
    counts = history.crawl_log_counts(
        origin, latest.started_at, by_url=segmenter.groupings, site_id=site_id
    )
    return counts.attributed(segmenter).keyed


def _segments(
    names: Sequence[str],
    coded: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]],
    figures: _Figures,
    stored: dict[str, Any] | None,
    since: Mapping[str, CrawlCounts],
) -> list[_Segment]:
    """Each segment's reading of lastmod and pooled change rate (``names``: segment keys):
    the ``stored`` run's verdict and counts, with the crawler's counts ``since`` that run
    (per segment, a group's its own: :func:`_crawled_since`), which turn a trusted segment
    they contradict untrusted; ``coded``: each page's segment code and its observations
    (:meth:`_Figures.looks`)."""
    segment, looks = coded
    by_name = {
        segment_key(s["sitemap"], (s.get("group") or {}).get("pattern")): s
        for s in (stored or {}).get("segments", [])
    }
    sums = segment_sums(segment, len(names), looks, figures.intervals, figures.changes,
                        figures.observed, figures.dated_changes, figures.dated_days)  # fmt: skip
    intervals, observed = sums[0], sums[3]
    undated = cgm_rate(sums[1], sums[2], observed)
    pooled = dated_rate(undated, observed, sums[4], sums[5])
    found = []
    for code, name in enumerate(names):
        run = by_name.get(name, {})
        crawl = since.get(name)
        advanced = int(run.get("lastmod_advanced") or 0)
        both = round((run.get("precision") or 0.0) * advanced)
        counts = [int(run.get("compared") or 0), int(run.get("changed") or 0), advanced, both]
        if crawl is not None:
            counts = [a + b for a, b in zip(counts, _crawl_counts(crawl), strict=True)]
        verdict = str(run.get("verdict") or "inconclusive")
        if verdict == "trusted" and crawl is not None and _contradicted(crawl):
            verdict = "untrusted"  # degraded since the run: planned by rate from now on
        pool = _pool(float(pooled[code]), float(intervals[code]), run)
        found.append(_Segment(signal_of(verdict, *counts), pool))
    return found


def _crawl_counts(crawl: CrawlCounts) -> list[int]:
    return [crawl.compared, crawl.changed, crawl.advanced, crawl.both]


def _contradicted(crawl: CrawlCounts) -> bool:
    from auditor.scorer.rules import contrary_counts
    from auditor.scorer.tally import crawl_tally

    return bool(contrary_counts(crawl_tally(crawl)))


def _pool(crawled: float, crawl_n: float, run: dict[str, Any]) -> float:
    """The sub-sitemap's pooled rate: the crawl log's and the audit panel's, weighed by
    their intervals, shrunk towards :data:`DEFAULT_RATE` as a page's is towards its pool
    (a 3-page panel that saw no change does not make 120 pages static)."""
    weights, rates = [PRIOR_INTERVALS], [DEFAULT_RATE]
    if crawl_n > 0 and not math.isnan(crawled):
        weights.append(crawl_n)
        rates.append(crawled)
    panel = run.get("change_rate")
    if panel is not None and run.get("compared"):
        weights.append(float(run["compared"]))
        rates.append(float(panel))
    return weighted_mean(rates, weights)


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    """``np.average(values, weights=weights)`` of a few floats, to the last bit, in
    plain floats (numpy's call costs some 20 us, twenty times a site): numpy sums so
    few items left to right (not Python's ``sum``, compensated since 3.12)."""

    def summed(items: Sequence[float]) -> float:
        total = items[0]
        for item in items[1:]:
            total += item
        return total

    products = [v * w for v, w in zip(values, weights, strict=True)]
    return summed(products) / summed(weights)
