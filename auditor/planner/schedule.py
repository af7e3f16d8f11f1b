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
    (``budget × horizon`` in all), highest priority first."""
    parts = [_judge(n, pages, horizon_days) for n, pages in enumerate(sites)]
    cap = max(math.floor(budget * horizon_days), 0)
    must = [c for part in parts for c in part.must]
    verify = _verification(sites, parts, len(must), cap)
    left = max(cap - len(must) - len(verify), 0)
    by_rate = _by_rate(sites, parts, left / max(horizon_days, 1e-9), horizon_days)
    chosen = sorted(must + by_rate, key=lambda c: -c.priority)[: max(cap - len(verify), 0)]
    return sorted(chosen + verify, key=lambda c: -c.priority)


@dataclass
class _Judged:
    """One site's pages judged: the chance each copy is stale, and what is due."""

    p: Floats
    value: Floats  # freshness a fetch buys over the next day
    must: list[Candidate]
    trusted_still: npt.NDArray[np.intp]  # trusted pages not advanced, not due
    open: npt.NDArray[np.intp]  # pages the rate allocation decides on


def _judge(site: int, pages: SitePages, horizon: float) -> _Judged:
    prior = 1.0 - np.exp(-pages.rate * np.nan_to_num(pages.copy_age, nan=0.0))
    p = np.ones(len(pages))
    for code, signal in enumerate(pages.signals):
        mine = pages.segment == code
        p[mine] = signal.posterior(prior[mine], pages.advanced[mine])
    never = np.isnan(pages.copy_age)
    p[never] = 1.0
    value = freshness(pages.rate, 1.0)
    backoff = np.minimum(2.0 ** np.maximum(pages.failures - 1, 0), MAX_BACKOFF_DAYS)
    failing = pages.failures > 0
    retry_due = failing & (np.nan_to_num(pages.fetch_age, nan=np.inf) + horizon > backoff)
    waiting = failing & ~retry_due
    advanced = pages.trusted & pages.advanced & ~never & ~failing
    fallback = pages.trusted & ~pages.advanced & ~never & ~failing & (p >= TRUSTED_FALLBACK)
    must_reasons = [
        (never & pages.new & ~failing, "new-url"),
        (never & ~pages.new & ~failing, "never-fetched"),
        (retry_due, "retry"),
        (advanced & (p >= MIN_P_CHANGED), "lastmod-advanced"),
        (fallback, "rate"),
    ]
    must = [
        Candidate(site, int(i), 0.0, reason, float(p[i] * value[i]), float(p[i]))
        for flags, reason in must_reasons
        for i in np.flatnonzero(flags)
    ]
    decided = never | failing | advanced | fallback | waiting
    still = np.flatnonzero(pages.trusted & ~decided)
    rest = np.flatnonzero(~pages.trusted & ~decided)
    return _Judged(p, value, must, still, rest)


def _verification(
    sites: Sequence[SitePages], parts: Sequence[_Judged], planned: int, cap: int
) -> list[Candidate]:
    """Fetches of trusted pages whose lastmod stayed put, oldest copy first."""
    candidates = [
        (float(pages.copy_age[i]), n, int(i))
        for n, (pages, part) in enumerate(zip(sites, parts, strict=True))
        for i in part.trusted_still
    ]
    if not candidates or cap <= 0:
        return []
    segments = {(n, int(sites[n].segment[i])) for _, n, i in candidates}
    wanted = max(math.ceil(VERIFY_SHARE * planned), len(segments))
    wanted = min(wanted, len(candidates), max(cap // 10, 1))
    chosen: list[tuple[float, int, int]] = []
    firsts: dict[tuple[int, int], tuple[float, int, int]] = {}
    for item in sorted(candidates, reverse=True):  # one a sub-sitemap first
        firsts.setdefault((item[1], int(sites[item[1]].segment[item[2]])), item)
    chosen = list(firsts.values())[:wanted]
    taken = set(chosen)
    chosen += [c for c in sorted(candidates, reverse=True) if c not in taken][
        : wanted - len(chosen)
    ]
    return [
        Candidate(n, i, 0.0, "verification", float(parts[n].p[i] * parts[n].value[i]),
                  float(parts[n].p[i]))
        for _, n, i in chosen
    ]  # fmt: skip


def _by_rate(
    sites: Sequence[SitePages], parts: Sequence[_Judged], per_day: float, horizon: float
) -> list[Candidate]:
    """The open pages due under the allocation of ``per_day`` fetches among them."""
    index = [(n, int(i)) for n, part in enumerate(parts) for i in part.open]
    if not index or per_day <= 0:
        return []
    rate = np.array([sites[n].rate[i] for n, i in index])
    f = allocate(rate, per_day, max_per_day=1.0 / max(min(horizon, 1.0), 1e-9))
    due: list[Candidate] = []
    for k, (n, i) in enumerate(index):
        if f[k] <= 0:
            continue
        pages, part = sites[n], parts[n]
        threshold = 1.0 - math.exp(-rate[k] / f[k])
        p = float(part.p[i])
        signal = pages.signal(i)
        if p >= max(threshold, MIN_P_CHANGED):
            wait = 0.0
        elif signal.informative:
            continue  # tomorrow's walk tells more than a guess about later today
        else:
            wait = 1.0 / f[k] - float(pages.copy_age[i])
            late = 1.0 - math.exp(-rate[k] * (pages.copy_age[i] + wait))
            if wait >= horizon or late < MIN_P_CHANGED:
                continue
        reason = "lastmod-advanced" if pages.advanced[i] and signal.informative else "rate"
        due.append(Candidate(n, i, max(wait, 0.0), reason, p * float(part.value[i]), p))
    return due
