"""The plan's policy, pure: from a host's pages and what their lastmod and history say
to the fetches due within the horizon, within the host's budget.

Each page gets a rate λ (:mod:`auditor.planner.rates`) and a chance ``p_changed`` that
its copy is stale: ``1 − e^{−λ t}`` after ``t`` days, moved by its lastmod where that is
informative (:mod:`auditor.planner.signal`); 1 for a page never fetched. Each day of the
horizon, within the host's budget:

- **must**: URLs new in the sitemaps (``new-url``) or never fetched (``never-fetched``);
  on a trusted sub-sitemap, URLs whose lastmod advanced since the crawler's copy
  (``lastmod-advanced``); failed URLs whose backoff has passed (``retry``);
- **trusted, lastmod still**: fetched only once the chance of a change its lastmod
  missed passes :data:`TRUSTED_FALLBACK` (``rate``), and a :data:`VERIFY_SHARE` of the
  plan (at least one a trusted sub-sitemap, and 5% of those pages a day) goes to them,
  oldest copy first
  (``verification``): those fetches measure lastmod's recall as the crawl goes;
- **everything else** (untrusted, no lastmod, inconclusive, and below-the-bar lastmods
  read as noisy indicators) shares the budget the must-fetches leave by the index of
  Cho and Garcia-Molina's freshness-optimal allocation: the marginal freshness a fetch
  buys, ``(1 − (1 + x) e^{−x}) / λ`` with ``x = λ t`` the expected changes since the
  copy (``x = −ln(1 − p)`` where lastmod moved ``p``). Their Lagrangian fetches a page
  when that index reaches the multiplier μ; taking each day the pages of highest index
  that the budget allows is the same rule with μ set by the day's budget (the index
  policy of Azar et al. 2018 and Kolobov et al. 2019 for binary freshness). A page
  that changes much faster than the budget can follow has an index capped at ``1/λ``
  and loses to the others, as the static allocation gives it no visit (``rate``, or
  ``lastmod-advanced`` where its noisy lastmod moved it).

No fetch is planned for a page whose chance of change is under :data:`MIN_P_CHANGED`
once its rate is known (its sub-sitemap's distribution of rates learned, or
:data:`MIN_OBSERVED` intervals of its own): a budget is an upper bound, not a target.
Where the rate is not known yet, the budget explores: the oldest copies first.
``priority`` is the index (higher first).

Touches: nothing.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from auditor.planner.signal import Signal

__all__ = [
    "EXPLORE_SHARE",
    "MIN_EXPLORE_AGE",
    "MIN_P_CHANGED",
    "TRUSTED_FALLBACK",
    "VERIFY_SHARE",
    "Candidate",
    "Chosen",
    "SitePages",
    "schedule_arrays",
    "schedule_host",
]

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

#: A fetch is not planned while the chance that the page changed is below this: one
#: fetch in fifty finding something new is the least worth a request.
MIN_P_CHANGED = 0.02
#: A page's rate is known once its sub-sitemap's distribution of rates is learned
#: (:data:`~auditor.planner.rates.MIN_POOL_PAGES` pages observed) or it has this many
#: intervals of its own.
MIN_OBSERVED = 3
#: A trusted page whose lastmod stayed put is fetched once the chance of a change its
#: lastmod missed passes one half.
TRUSTED_FALLBACK = 0.5
#: Share of a plan's fetches spent verifying trusted lastmods that stayed put ...
VERIFY_SHARE = 0.05
#: ... and at least this share a day of the trusted pages whose lastmod stayed put: each
#: copy checked about every 20 days, so a lastmod that froze shows within a day or two on
#: a site of a few hundred pages (bench_plan: frozen sites 0.732 at 2%, 0.749 at 5%).
VERIFY_DAILY_SHARE = 0.05
#: Share of a host's daily budget (at least one fetch) spent exploring: the pages whose
#: lastmod moved since their copy, then those whose rate is not known yet, oldest copy
#: first, then the oldest copies of any. A rate learned from little (a quiet day) can be
#: wrong; exploring keeps it learning, and no site is left without a fetch while its
#: copies age. 5%: 10% gave 0.879 against 0.883 over the changing pages of bench_daily
#: and 0.824 against 0.826 overall on bench_plan --quick.
EXPLORE_SHARE = 0.05
#: A copy younger than this (days) is never explored: it has nothing to tell yet.
MIN_EXPLORE_AGE = 1.0
#: Days to wait before retrying a URL after its n-th consecutive failure: 1, 2, 4 ...,
#: at most this many.
MAX_BACKOFF_DAYS = 30.0
#: Indexes within this share of each other tie, and copies fetched within the same hour
#: are as old: a crawl fetches a site's pages seconds apart in its sitemap's order, and
#: those seconds alone must not decide which of equal pages are fetched (on a real site,
#: 24 pages seen to change tied, and the crawl's order took 1 of the 7 that changed again
#: where a draw takes 2.6 on average). Ties go to a page's place in a fixed shuffle of
#: its site (a hash of its URL), the host's sites in turn.
TIE_SHARE = 0.01
_TIE_STEP = math.log1p(TIE_SHARE)
_AGE_STEP_DAYS = 1 / 24


@dataclass
class SitePages:
    """One site's listed pages as arrays, ages in days before the plan's moment."""

    site: str
    locs: Sequence[str]
    segment: npt.NDArray[np.intp]  # each page's sub-sitemap, into ``sitemaps``
    sitemaps: Sequence[str]  # the sub-sitemaps
    signals: Sequence[Signal]  # each sub-sitemap's reading of lastmod
    lastmods: Sequence[datetime | None]  # as listed now (for the crawler's meta)
    rate: Floats  # changes a day
    copy_age: Floats  # days since the crawler's good copy; NaN: never fetched well
    fetch_age: Floats  # days since the last fetch, good or not; NaN: never fetched
    failures: Floats  # consecutive failures at the last fetch
    advanced: Flags  # lastmod advanced since the copy (or the copy has none and it has)
    new: Flags  # absent from the previous walk
    known: Flags  # its rate rests on MIN_OBSERVED intervals (its own and its pool's)
    groups: Sequence[str | None] = ()  # each sub-sitemap's group pattern (None: whole)
    trusted: Flags = field(init=False)

    def __post_init__(self) -> None:
        modes = np.array([s.mode == "trusted" for s in self.signals] + [False], dtype=bool)
        self.trusted = modes[self.segment]

    def sitemap(self, page: int) -> str:
        """The sub-sitemap of a page."""
        return self.sitemaps[int(self.segment[page])]

    def signal(self, page: int) -> Signal:
        """How a page's lastmod is read."""
        return self.signals[int(self.segment[page])]

    def __len__(self) -> int:
        return len(self.locs)


@dataclass(frozen=True)
class Candidate:
    """One planned fetch before it is named: the site's page index and its figures."""

    site: int
    page: int
    due_in_days: float
    reason: str
    priority: float
    p_changed: float


class Chosen(NamedTuple):
    """The fetches :func:`schedule_host` chose, as arrays in plan order: each one's
    site (index into the host's sites), page, days until due, reason (index into
    :data:`REASONS`), priority and ``p_changed``."""

    site: npt.NDArray[np.intp]
    page: npt.NDArray[np.intp]
    due_in_days: Floats
    reason: npt.NDArray[np.int8]
    priority: Floats
    p_changed: Floats


def schedule_host(
    sites: Sequence[SitePages], budget: float, horizon_days: float
) -> list[Candidate]:
    """The fetches due on one host within ``horizon_days``, at most ``budget`` a day,
    highest priority first (:func:`schedule_arrays`, made into objects)."""
    chosen = schedule_arrays(sites, budget, horizon_days)
    return [
        Candidate(site, page, due, REASONS[reason], priority, p)
        for site, page, due, reason, priority, p in zip(*(a.tolist() for a in chosen), strict=True)
    ]


def schedule_arrays(sites: Sequence[SitePages], budget: float, horizon_days: float) -> Chosen:
    """The fetches due on one host within ``horizon_days``, at most ``budget`` a day,
    highest priority first. Vectorised over the host's pages: the fetches chosen are
    arrays too (:class:`Chosen`). Each day of the horizon is a round: what the first
    round fetches has a fresh copy in the next."""
    if not sites:
        none = np.zeros(0, dtype=np.intp)
        return Chosen(none, none, np.zeros(0), np.zeros(0, dtype=np.int8), np.zeros(0), np.zeros(0))
    host = _Host.of(sites, horizon_days)
    per_day = max(math.floor(budget), 0)
    must = np.flatnonzero(host.reason >= 0)
    must = _top(must, index(host.p[must], host.rate[must]), per_day, host.turn[must])
    verify = _verification(host, len(must), per_day - len(must))
    chosen = [must, verify]
    left = per_day - len(must) - len(verify)
    share = max(1, math.ceil(EXPLORE_SHARE * per_day)) if per_day else 0
    for day in range(max(math.ceil(horizon_days - 1e-9), 1)):
        if day:
            left = per_day
        ranked = _by_index(host, left - min(share, left), float(day))
        chosen += [ranked, _exploration(host, min(share, left), float(day))]
    picked = np.concatenate(chosen)
    priority = index(host.p[picked], host.rate[picked])  # once: the property is per page
    order = np.lexsort((host.turn[picked], -priority, host.wait[picked]))
    k = picked[order]
    return Chosen(
        host.site[k], host.page[k], host.wait[k], host.reason[k], priority[order], host.p[k]
    )


#: Reason codes, by their index in the policy's arrays.
REASONS = (
    "new-url", "never-fetched", "retry", "lastmod-advanced", "rate", "verification", "explore",
)  # fmt: skip
_NEW, _NEVER, _RETRY, _ADVANCED, _RATE, _VERIFY, _EXPLORE = range(len(REASONS))


@dataclass
class _Host:
    """A host's pages judged, as arrays over all its sites' pages: the chance each copy
    is stale, the freshness a fetch buys, and what is due (``reason`` -1: nothing yet)."""

    site: npt.NDArray[np.intp]
    page: npt.NDArray[np.intp]
    turn: Floats  # a page's place in its site (0 to 1): ties go to a host's sites in turn
    rate: Floats
    copy_age: Floats
    segment: npt.NDArray[np.intp]  # the sub-sitemap's number across the host
    informative: Flags  # the page's lastmod moves the odds
    advanced: Flags
    known: Flags
    p: Floats
    reason: npt.NDArray[np.int8]
    wait: Floats  # days until due
    still: npt.NDArray[np.intp]  # trusted pages not advanced, not due: verification's pool
    open: npt.NDArray[np.intp]  # pages the rate allocation decides on

    @classmethod
    def of(cls, sites: Sequence[SitePages], horizon: float) -> _Host:
        """Judge every page of ``sites`` (at least one site)."""
        parts = [_judge(pages, horizon) for pages in sites]
        offsets = np.cumsum([0] + [len(pages.signals) for pages in sites])
        sizes = [len(pages) for pages in sites]

        def joined(values: Iterable[npt.NDArray[Any]]) -> npt.NDArray[Any]:
            return np.concatenate(list(values))

        reason = joined(part.reason for part in parts)
        trusted = joined(pages.trusted for pages in sites)
        decided = (reason >= 0) | joined(part.waiting for part in parts)
        return cls(
            site=np.repeat(np.arange(len(sites)), sizes),
            page=joined(np.arange(n) for n in sizes),
            turn=joined(_turns(pages.locs) for pages in sites),
            rate=joined(pages.rate for pages in sites),
            copy_age=joined(pages.copy_age for pages in sites),
            segment=joined(pages.segment + offsets[n] for n, pages in enumerate(sites)),
            informative=joined(part.informative for part in parts),
            advanced=joined(pages.advanced for pages in sites),
            known=joined(pages.known for pages in sites),
            p=joined(part.p for part in parts),
            reason=reason,
            wait=np.zeros(len(reason)),
            still=np.flatnonzero(trusted & ~decided),
            open=np.flatnonzero(~trusted & ~decided),
        )


class _Judged(NamedTuple):
    """One site's pages judged: ``p_changed``, the must-fetch reasons (-1 for none), the
    pages waiting out a backoff, and whose lastmod is informative."""

    p: Floats
    reason: npt.NDArray[np.int8]
    waiting: Flags
    informative: Flags


def _judge(pages: SitePages, horizon: float) -> _Judged:
    """One site's pages judged (:class:`_Judged`)."""
    prior = 1.0 - np.exp(-pages.rate * np.nan_to_num(pages.copy_age, nan=0.0))
    p = np.ones(len(pages))
    informative = np.zeros(len(pages), dtype=bool)
    for code, signal in enumerate(pages.signals):
        mine = pages.segment == code
        p[mine] = signal.posterior(prior[mine], pages.advanced[mine])
        informative[mine] = signal.informative
    never = np.isnan(pages.copy_age)
    p[never] = 1.0
    backoff = np.minimum(2.0 ** np.maximum(pages.failures - 1, 0), MAX_BACKOFF_DAYS)
    failing = pages.failures > 0
    retry_due = failing & (np.nan_to_num(pages.fetch_age, nan=np.inf) + horizon > backoff)
    settled = pages.trusted & ~never & ~failing
    reason = np.full(len(pages), -1, dtype=np.int8)
    reason[settled & ~pages.advanced & (p >= TRUSTED_FALLBACK)] = _RATE
    reason[settled & pages.advanced & (p >= MIN_P_CHANGED)] = _ADVANCED
    reason[retry_due] = _RETRY
    reason[never & ~failing & ~pages.new] = _NEVER
    reason[never & ~failing & pages.new] = _NEW
    waiting = failing & ~retry_due
    waiting |= settled & pages.advanced & (p < MIN_P_CHANGED)
    return _Judged(p, reason, waiting, informative)


def _turns(locs: Sequence[str]) -> Floats:
    """Each page's place (0 to 1) in a fixed shuffle of its site, by a hash of its URL:
    equal pages are taken in that order, not in the sitemap's (see :data:`TIE_SHARE`).
    The hash's fraction is added within each place, so pages of two sites at the same
    place are ordered by their URLs too, never by the order the sites were given in."""
    keys = np.fromiter((zlib.crc32(loc.encode()) for loc in locs), np.uint32, len(locs))
    places = np.empty(len(locs))
    places[np.argsort(keys, kind="stable")] = np.arange(len(locs))
    return (places + keys / 2.0**32) / max(len(locs), 1)


def _level(score: Floats) -> Floats:
    """``score`` on a grid of :data:`TIE_SHARE` steps: indexes that close tie."""
    with np.errstate(divide="ignore"):
        return np.floor(np.log(np.maximum(score, 0.0)) / _TIE_STEP)


def _hours(age: Floats) -> Floats:
    """Copy ages in whole hours: copies fetched within one hour are as old."""
    return np.floor(np.nan_to_num(age, nan=np.inf) / _AGE_STEP_DAYS)


def _top(
    indices: npt.NDArray[np.intp], priority: Floats, n: int, turn: Floats
) -> npt.NDArray[np.intp]:
    """The ``n`` of ``indices`` with the highest ``priority`` (one for each of them),
    ties (:data:`TIE_SHARE`) going to the sites of a host in turn."""
    if n <= 0:
        return indices[:0]
    if len(indices) <= n:
        return indices
    return indices[np.lexsort((turn, -_level(priority)))[:n]]


def _verification(host: _Host, planned: int, cap: int) -> npt.NDArray[np.intp]:
    """Fetches of trusted pages whose lastmod stayed put: one a sub-sitemap first, then
    the oldest copies, :data:`VERIFY_SHARE` of the plan in all."""
    pool = host.still
    if not len(pool) or cap <= 0:
        return pool[:0]
    oldest = pool[np.lexsort((host.turn[pool], -_hours(host.copy_age[pool])))]
    _, firsts = np.unique(host.segment[oldest], return_index=True)
    daily = math.ceil(VERIFY_DAILY_SHARE * len(pool))
    wanted = max(math.ceil(VERIFY_SHARE * planned), len(firsts), daily)
    wanted = min(wanted, len(pool), cap)
    head = oldest[np.sort(firsts)][:wanted]
    rest = np.setdiff1d(oldest, head, assume_unique=True)
    rest = rest[np.lexsort((host.turn[rest], -_hours(host.copy_age[rest])))]
    chosen = np.concatenate([head, rest[: wanted - len(head)]])
    host.reason[chosen] = _VERIFY
    return chosen


def index(p: Floats, rate: Floats) -> Floats:
    """The freshness a fetch buys at the margin, ``(1 − (1 + x) e^{−x}) / λ`` with
    ``x = −ln(1 − p)``: ``(p + (1 − p) ln(1 − p)) / λ`` (``1/λ`` at ``p = 1``)."""
    q = np.clip(p, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        stale = np.where(q < 1.0, (1.0 - q) * np.log1p(-np.minimum(q, 1 - 1e-16)), 0.0)
    found: Floats = (q + stale) / np.maximum(rate, 1e-12)
    return found


def _undecided(host: _Host, day: float) -> tuple[npt.NDArray[np.intp], Floats]:
    """The open pages nothing has claimed yet, and their copies' ages ``day`` days from
    now (0 for none)."""
    pool = host.open[host.reason[host.open] < 0]
    return pool, np.nan_to_num(host.copy_age[pool], nan=0.0) + day


def _exploration(host: _Host, n: int, day: float) -> npt.NDArray[np.intp]:
    """The ``n`` open pages to explore ``day`` days from now, marked: those whose lastmod
    moved since their copy first (on a sub-sitemap not trusted yet, the evidence that can
    earn it trust), then those whose rate is not known yet, then any; the oldest copies
    first, none younger than :data:`MIN_EXPLORE_AGE` but the moved ones (a page fetched
    moments ago has nothing to tell yet)."""
    pool, age = _undecided(host, day)
    if not len(pool) or n <= 0:
        return pool[:0]
    moved = host.advanced[pool]
    worth = moved | (age >= MIN_EXPLORE_AGE)
    pool, age, moved = pool[worth], age[worth], moved[worth]
    chosen = pool[np.lexsort((host.turn[pool], -_hours(age), host.known[pool], ~moved))[:n]]
    host.reason[chosen] = _EXPLORE
    host.wait[chosen] = day
    return chosen


def _by_index(host: _Host, n: int, day: float) -> npt.NDArray[np.intp]:
    """The ``n`` open pages of highest index ``day`` days from now (their copies as
    they will be then: aged, or fresh where an earlier round fetched them), marked."""
    pool, age = _undecided(host, day)
    if not len(pool) or n <= 0:
        return pool[:0]
    rate = host.rate[pool]
    p = host.p[pool] if not day else -np.expm1(-rate * age)
    worth = p >= MIN_P_CHANGED
    pool, p, rate = pool[worth], p[worth], rate[worth]
    score = index(p, rate)
    best = np.lexsort((host.turn[pool], -_level(score)))[:n]
    chosen = pool[best]
    moved = host.advanced[chosen] & host.informative[chosen]
    host.reason[chosen] = np.where(moved, _ADVANCED, _RATE).astype(np.int8)
    host.wait[chosen] = day
    host.p[chosen] = p[best]
    return chosen
