"""The plan's policy, pure: from a host's pages and what their lastmod and history say
to the fetches due within the horizon, within the host's budget.

Each page gets a rate (:mod:`auditor.planner.rates`) and a chance ``p_changed`` that its
copy is stale: ``1 − e^{−λ t}`` after ``t`` days, moved by its lastmod where that is
informative (:mod:`auditor.planner.signal`); 1 for a page never fetched. Then:

- **must**: URLs new in the sitemaps (``new-url``) or never fetched (``never-fetched``);
  on a trusted sub-sitemap, URLs whose lastmod advanced since the crawler's copy
  (``lastmod-advanced``); failed URLs whose backoff has passed (``retry``);
- **trusted, lastmod still**: fetched only once its chance of a change lastmod missed
  passes :data:`TRUSTED_FALLBACK` (``rate``), and a :data:`VERIFY_SHARE` of the plan
  (at least one a trusted sub-sitemap) goes to them, oldest copy first
  (``verification``): those fetches measure lastmod's recall as the crawl goes;
- **everything else** (untrusted, no lastmod, inconclusive, and below-the-bar lastmods
  read as noisy indicators): revisit frequencies from Cho and Garcia-Molina's
  allocation over the budget the must-fetches leave; a page is due once its chance of
  change reaches the one at which that schedule revisits it, ``1 − e^{−λ/f}``
  (``rate``, or ``lastmod-advanced`` when its noisy lastmod moved it there).

No fetch is planned for a page whose chance of change is under :data:`MIN_P_CHANGED`.
Within the budget, the highest ``priority`` (``p_changed`` times the freshness a fetch
buys over the next day, ``F(λ, 1)``: a page that changes again at once is worth less)
come first; verification fetches are kept out of the cut.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from auditor.planner.rates import allocate, freshness
from auditor.planner.signal import Signal

__all__ = [
    "MIN_P_CHANGED",
    "TRUSTED_FALLBACK",
    "VERIFY_SHARE",
    "Candidate",
    "SitePages",
    "schedule_host",
]

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

#: A fetch is not planned while the chance that the page changed is below this: one
#: fetch in twenty finding something new is the least worth a request.
MIN_P_CHANGED = 0.05
#: A trusted page whose lastmod stayed put is fetched once the chance of a change its
#: lastmod missed passes one half.
TRUSTED_FALLBACK = 0.5
#: Share of a plan's fetches spent verifying trusted lastmods that stayed put.
VERIFY_SHARE = 0.05
#: Days to wait before retrying a URL after its n-th consecutive failure: 1, 2, 4 ...,
#: at most this many.
MAX_BACKOFF_DAYS = 30.0


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


def schedule_host(
    sites: Sequence[SitePages], budget: float, horizon_days: float
) -> list[Candidate]:
    """The fetches due on one host within ``horizon_days``, at most ``budget`` a day
    (``budget × horizon`` in all), highest priority first. Vectorised over the host's
    pages: only the fetches chosen are made into objects."""
    host = _Host.of(sites, horizon_days)
    cap = max(math.floor(budget * horizon_days), 0)
    must = np.flatnonzero(host.reason >= 0)
    verify = _verification(host, len(must), cap)
    left = max(cap - len(must) - len(verify), 0)
    _by_rate(host, left / max(horizon_days, 1e-9), horizon_days)
    due = np.flatnonzero(host.reason >= 0)
    kept = _top(due, host.priority, max(cap - len(verify), 0))
    chosen = np.concatenate([kept, verify])
    order = chosen[np.argsort(-host.priority[chosen], kind="stable")]
    return [
        Candidate(int(host.site[k]), int(host.page[k]), float(host.wait[k]),
                  REASONS[int(host.reason[k])], float(host.priority[k]), float(host.p[k]))
        for k in order
    ]  # fmt: skip


#: Reason codes, by their index in the policy's arrays.
REASONS = ("new-url", "never-fetched", "retry", "lastmod-advanced", "rate", "verification")
_NEW, _NEVER, _RETRY, _ADVANCED, _RATE, _VERIFY = range(len(REASONS))


@dataclass
class _Host:
    """A host's pages judged, as arrays over all its sites' pages: the chance each copy
    is stale, the freshness a fetch buys, and what is due (``reason`` -1: nothing yet)."""

    site: npt.NDArray[np.intp]
    page: npt.NDArray[np.intp]
    rate: Floats
    copy_age: Floats
    segment: npt.NDArray[np.intp]  # the sub-sitemap's number across the host
    informative: Flags  # the page's lastmod moves the odds
    advanced: Flags
    p: Floats
    value: Floats  # freshness a fetch buys over the next day
    reason: npt.NDArray[np.int8]
    wait: Floats  # days until due
    still: npt.NDArray[np.intp]  # trusted pages not advanced, not due: verification's pool
    open: npt.NDArray[np.intp]  # pages the rate allocation decides on

    @property
    def priority(self) -> Floats:
        """``p_changed`` times the freshness a fetch buys."""
        found: Floats = self.p * self.value
        return found

    @classmethod
    def of(cls, sites: Sequence[SitePages], horizon: float) -> _Host:
        """Judge every page of ``sites``."""
        parts = [_judge(pages, horizon) for pages in sites]
        offsets = np.cumsum([0] + [len(pages.signals) for pages in sites])
        cat = np.concatenate
        sizes = [len(pages) for pages in sites]
        reason = cat([part[2] for part in parts]) if parts else np.zeros(0, np.int8)
        trusted = cat([pages.trusted for pages in sites]) if sites else np.zeros(0, bool)
        decided = (reason >= 0) | cat([part[3] for part in parts]) if parts else trusted
        return cls(
            site=np.repeat(np.arange(len(sites)), sizes),
            page=cat([np.arange(n) for n in sizes]) if sites else np.zeros(0, np.intp),
            rate=cat([pages.rate for pages in sites]) if sites else np.zeros(0),
            copy_age=cat([pages.copy_age for pages in sites]) if sites else np.zeros(0),
            segment=cat([pages.segment + offsets[n] for n, pages in enumerate(sites)])
            if sites
            else np.zeros(0, np.intp),
            informative=cat([part[4] for part in parts]) if parts else trusted,
            advanced=cat([pages.advanced for pages in sites]) if sites else trusted,
            p=cat([part[0] for part in parts]) if parts else np.zeros(0),
            value=cat([part[1] for part in parts]) if parts else np.zeros(0),
            reason=reason,
            wait=np.zeros(len(reason)),
            still=np.flatnonzero(trusted & ~decided),
            open=np.flatnonzero(~trusted & ~decided),
        )


def _judge(
    pages: SitePages, horizon: float
) -> tuple[Floats, Floats, npt.NDArray[np.int8], Flags, Flags]:
    """One site's pages: ``p_changed``, the value of a fetch, the must-fetch reasons (-1
    for none), the pages waiting out a backoff, and whose lastmod is informative."""
    prior = 1.0 - np.exp(-pages.rate * np.nan_to_num(pages.copy_age, nan=0.0))
    p = np.ones(len(pages))
    informative = np.zeros(len(pages), dtype=bool)
    for code, signal in enumerate(pages.signals):
        mine = pages.segment == code
        p[mine] = signal.posterior(prior[mine], pages.advanced[mine])
        informative[mine] = signal.informative
    never = np.isnan(pages.copy_age)
    p[never] = 1.0
    value = freshness(pages.rate, 1.0)
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
    return p, value, reason, waiting, informative


def _top(indices: npt.NDArray[np.intp], priority: Floats, n: int) -> npt.NDArray[np.intp]:
    """The ``n`` of ``indices`` with the highest priority."""
    if n <= 0:
        return indices[:0]
    if len(indices) <= n:
        return indices
    return indices[np.argpartition(-priority[indices], n - 1)[:n]]


def _verification(host: _Host, planned: int, cap: int) -> npt.NDArray[np.intp]:
    """Fetches of trusted pages whose lastmod stayed put: one a sub-sitemap first, then
    the oldest copies, :data:`VERIFY_SHARE` of the plan in all."""
    pool = host.still
    if not len(pool) or cap <= 0:
        return pool[:0]
    oldest = pool[np.argsort(-host.copy_age[pool], kind="stable")]
    _, firsts = np.unique(host.segment[oldest], return_index=True)
    wanted = max(math.ceil(VERIFY_SHARE * planned), len(firsts))
    wanted = min(wanted, len(pool), max(cap // 10, 1))
    head = oldest[np.sort(firsts)][:wanted]
    rest = np.setdiff1d(oldest, head, assume_unique=True)
    rest = rest[np.argsort(-host.copy_age[rest], kind="stable")]
    chosen = np.concatenate([head, rest[: wanted - len(head)]])
    host.reason[chosen] = _VERIFY
    return chosen


def _by_rate(host: _Host, per_day: float, horizon: float) -> None:
    """Mark the open pages due under the allocation of ``per_day`` fetches among them."""
    index = host.open
    if not len(index) or per_day <= 0:
        return
    rate = host.rate[index]
    f = allocate(rate, per_day, max_per_day=1.0 / max(min(horizon, 1.0), 1e-9))
    visited = f > 0
    index, rate, f = index[visited], rate[visited], f[visited]
    p = host.p[index]
    threshold = np.maximum(-np.expm1(-rate / f), MIN_P_CHANGED)
    now = p >= threshold
    # a page whose lastmod says nothing is due when its interval ends within the horizon;
    # one whose lastmod does waits for tomorrow's walk rather than a guess about today
    wait = 1.0 / f - host.copy_age[index]
    late = -np.expm1(-rate * (host.copy_age[index] + wait))
    later = ~now & ~host.informative[index] & (wait < horizon) & (late >= MIN_P_CHANGED)
    due = now | later
    chosen = index[due]
    moved = host.advanced[chosen] & host.informative[chosen]
    host.reason[chosen] = np.where(moved, _ADVANCED, _RATE).astype(np.int8)
    host.wait[chosen] = np.where(now[due], 0.0, np.maximum(wait[due], 0.0))
