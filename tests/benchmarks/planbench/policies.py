"""The baselines of the plan bench, read from the sites directly (no HTTP), and the
fetch model every policy shares.

**Fetch model.** Before day 0 the crawler has a copy of every page, all fetched at
:data:`SEED_CRAWL_AT` (one hour before day 0, outside the budget). Each day ``d`` a
policy plans at :func:`plan_instant` (five minutes past midnight UTC, after the day's
audits) and hands, per host, an ordered list of at most ``budget`` pages; they are
fetched at that day's :func:`slot_instants`, spread evenly over the rest of the day,
in that order. The upper bound alone fetches at the instants of the changes.

Policies: :class:`Uniform` (round-robin in sitemap order), :class:`Naive` (the pages
whose lastmod is newer than their last fetch, newest first, ties at random, the rest of
the budget round-robin), :class:`Oracle` (each page's true rate, revisit frequencies
from Cho and Garcia-Molina's Lagrangian allocation, :func:`allocate`) and
:func:`upper_bound` (a fetch right after each change while the day's budget lasts).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .world import DAY, PlanSite, World

__all__ = [
    "PLAN_DELAY",
    "SEED_CRAWL_AT",
    "Fetches",
    "Naive",
    "Oracle",
    "Prediction",
    "SlotPolicy",
    "Uniform",
    "allocate",
    "plan_instant",
    "run_slots",
    "slot_instants",
    "upper_bound",
]

#: The crawler's copy of every page before the run: fetched at this instant.
SEED_CRAWL_AT = -3_600
#: A day's plan is made this long after midnight (the weekly audits run at midnight).
PLAN_DELAY = 300


def plan_instant(day: int) -> int:
    """The instant day ``day``'s fetches are planned at."""
    return day * DAY + PLAN_DELAY


def slot_instants(day: int, budget: int) -> list[int]:
    """The instants of a host's ``budget`` fetches on day ``day``: evenly spread over the
    day after its planning instant, each in the middle of its share."""
    start, span = plan_instant(day), DAY - PLAN_DELAY
    return [start + (2 * k + 1) * span // (2 * budget) for k in range(budget)]


@dataclass(frozen=True)
class Prediction:
    """What a plan said of one fetch it asked for: the page, the instant, ``p_changed``."""

    site: int
    page: int
    instant: int
    p_changed: float


@dataclass
class Fetches:
    """The crawler's fetches of one policy: per site, per page, instants in order."""

    instants: list[list[list[int]]]
    predictions: list[Prediction] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)  # what a policy wants to report

    @classmethod
    def seeded(cls, world: World) -> Fetches:
        """Every page fetched once, at :data:`SEED_CRAWL_AT`."""
        return cls([[[SEED_CRAWL_AT] for _ in site.pages] for site in world.sites])

    def add(self, site: int, page: int, instant: int) -> None:
        """Page ``page`` of site ``site`` fetched at ``instant`` (not before its last)."""
        self.instants[site][page].append(instant)

    def last(self, site: int, page: int) -> int:
        """The instant of the last fetch of a page."""
        return self.instants[site][page][-1]


class SlotPolicy(Protocol):
    """A policy that fills a host's daily slots."""

    def choose(self, index: int, site: PlanSite, day: int, fetches: Fetches) -> list[int]:
        """Site ``index``'s pages to fetch on ``day``, in slot order (at most the budget)."""
        ...


def run_slots(world: World, policy: SlotPolicy, budget: int) -> Fetches:
    """Run ``policy`` on ``world`` for its days under the fetch model."""
    fetches = Fetches.seeded(world)
    for day in range(world.days):
        slots = slot_instants(day, budget)
        for index, site in enumerate(world.sites):
            order = policy.choose(index, site, day, fetches)
            if len(order) > budget:
                raise ValueError(f"{type(policy).__name__} planned {len(order)} > {budget}")
            for slot, page in zip(slots, order, strict=False):
                fetches.add(index, page, slot)
    return fetches


class Uniform:
    """Round-robin: each host's pages in sitemap order, ``budget`` a day, over and over."""

    def __init__(self, world: World, budget: int) -> None:
        self.budget = budget
        self.next = [0] * len(world.sites)

    def choose(self, index: int, site: PlanSite, day: int, fetches: Fetches) -> list[int]:
        count, start = len(site.pages), self.next[index]
        self.next[index] = (start + self.budget) % count
        return [(start + k) % count for k in range(self.budget)]


class Naive:
    """Lastmod taken at its word: the pages whose lastmod (as the sitemap says it at the
    planning instant; a date reads as its midnight) is newer than the crawler's last
    fetch of them, newest first, ties in random order; the rest of the budget goes
    round-robin to the other pages."""

    def __init__(self, world: World, budget: int, seed: int = 0) -> None:
        self.budget = budget
        self.next = [0] * len(world.sites)
        self.rng = random.Random(f"naive:{seed}")

    def choose(self, index: int, site: PlanSite, day: int, fetches: Fetches) -> list[int]:
        now = plan_instant(day)
        newer = []
        for page in range(len(site.pages)):
            lastmod = site.lastmod_at(page, now)
            if lastmod is not None and lastmod > fetches.last(index, page):
                newer.append((-lastmod, self.rng.random(), page))
        newer.sort()
        chosen = [page for _, _, page in newer[: self.budget]]
        taken, count = set(chosen), len(site.pages)
        pointer = self.next[index]
        for _ in range(count):
            if len(chosen) >= self.budget:
                break
            if pointer not in taken:
                chosen.append(pointer)
            pointer = (pointer + 1) % count
        self.next[index] = pointer
        return chosen


def allocate(rates: np.ndarray, budget: float) -> tuple[np.ndarray, float]:
    """Visits per day for pages changing at ``rates`` (per day) that maximise the summed
    binary freshness under ``budget`` visits a day, and the multiplier ``mu``.

    Cho and Garcia-Molina: a page of rate λ visited every I days is fresh on average
    F = (1 - e^(-λI)) / (λI). With f = 1/I and x = λ/f, dF/df = (1 - (1 + x) e^(-x)) / λ,
    so at the optimum 1 - (1 + x) e^(-x) = μλ for the pages visited, and pages with
    μλ >= 1 get no visits; μ is found by bisection so that Σ f = budget.
    """
    rates = np.asarray(rates, dtype=float)
    if budget <= 0 or not (rates > 0).any():
        return np.zeros_like(rates), float("inf")

    def frequencies(mu: float) -> np.ndarray:
        target = mu * rates
        visited = (target < 1) & (rates > 0)
        lo, hi = np.zeros(visited.sum()), np.full(visited.sum(), 64.0)
        goal = target[visited]
        for _ in range(60):  # g(x) = 1 - (1 + x) e^-x rises from 0 to 1: bisect x
            mid = (lo + hi) / 2
            below = -np.expm1(-mid) - mid * np.exp(-mid) < goal
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        found = np.zeros_like(rates)
        found[visited] = rates[visited] / ((lo + hi) / 2)
        return found

    lo_mu, hi_mu = 1e-15, 1.0 / rates[rates > 0].min()  # Σ f: huge at lo_mu, 0 at hi_mu
    for _ in range(90):
        mu = float(np.sqrt(lo_mu * hi_mu))
        if frequencies(mu).sum() > budget:
            lo_mu = mu
        else:
            hi_mu = mu
    mu = float(np.sqrt(lo_mu * hi_mu))
    return frequencies(mu), mu


class Oracle:
    """Each page's true rate (or what ``known`` makes of a site's true rates), its visit
    frequency from :func:`allocate` on its host's budget, visits at even intervals: each
    slot goes to the page most due (its next due time moves on by its interval), the
    first dues at a random phase."""

    def __init__(
        self,
        world: World,
        budget: int,
        seed: int = 0,
        known: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        self.budget = budget
        self.frequencies: list[np.ndarray] = []
        self.due: list[list[tuple[float, int]]] = []
        rng = np.random.default_rng([seed, 0x0AC1E])
        for site in world.sites:
            rates = np.array([p.rate for p in site.pages])
            rates = rates if known is None else known(rates)
            frequencies, _ = allocate(rates, budget)
            self.frequencies.append(frequencies)
            heap = [
                (SEED_CRAWL_AT / DAY + rng.uniform(0, 1) / f, page)
                for page, f in enumerate(frequencies)
                if f > 0
            ]
            heapq.heapify(heap)
            self.due.append(heap)

    def choose(self, index: int, site: PlanSite, day: int, fetches: Fetches) -> list[int]:
        heap, frequencies, chosen = self.due[index], self.frequencies[index], []
        for _ in range(self.budget if heap else 0):
            due, page = heapq.heappop(heap)
            chosen.append(page)
            heapq.heappush(heap, (due + 1 / frequencies[page], page))
        return chosen


def upper_bound(world: World, budget: int) -> Fetches:
    """A fetch right after each change while the host's day's budget lasts.

    Each day, from its planning instant: first the pages left stale from earlier days
    (the budget ran out), at the planning instant, longest stale first; then every
    change of the day, in time order, at its own instant, until the budget is spent.
    """
    fetches = Fetches.seeded(world)
    for index, site in enumerate(world.sites):
        instants = np.concatenate([p.events for p in site.pages])
        owners = np.concatenate([np.full(len(p.events), i) for i, p in enumerate(site.pages)])
        keep = instants > SEED_CRAWL_AT
        order = np.argsort(instants[keep], kind="stable")
        changes = list(
            zip(instants[keep][order].tolist(), owners[keep][order].tolist(), strict=True)
        )
        position = 0
        for day in range(world.days):
            start, stop, left = plan_instant(day), min(plan_instant(day + 1), world.end), budget
            stale = []
            for page, p in enumerate(site.pages):
                last = fetches.last(index, page)
                n = p.version_at(last)
                if n < len(p.events) and p.events[n] <= start:
                    stale.append((int(p.events[n]), page))
            for _, page in sorted(stale)[:left]:
                fetches.add(index, page, start)
                left -= 1
            while position < len(changes) and changes[position][0] <= start:
                position += 1
            while position < len(changes) and changes[position][0] < stop:
                moment, page = changes[position]
                position += 1
                if left > 0:
                    fetches.add(index, page, moment)
                    left -= 1
    return fetches
