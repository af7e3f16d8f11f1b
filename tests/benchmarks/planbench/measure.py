"""What the plan bench measures: binary freshness, fetches, and how well ``p_changed``
predicted the changes found.

Binary freshness of a page over a window is the share of the window during which its
last fetched copy is current: after a fetch at ``f`` the copy is current until the
page's first change after ``f`` (a change at ``f`` itself is in the copy) or the next
fetch, whichever is first; before its first fetch a page has no copy. It is computed
exactly from the change events and fetch instants, then averaged over pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .policies import Fetches, Prediction
from .world import BEHAVIOUR_GROUPS, World

__all__ = [
    "CalibrationRow",
    "Summary",
    "brier",
    "calibration",
    "fresh_share",
    "summarise",
]


def fresh_share(events: np.ndarray, fetches: Sequence[int], start: int, end: int) -> float:
    """The share of [start, end) during which the last fetched copy of a page changing at
    ``events`` (sorted) and fetched at ``fetches`` (sorted) was current."""
    if end <= start or not len(fetches):
        return 0.0
    moments = np.sort(np.asarray(fetches, dtype=np.int64))
    stamps = np.asarray(events, dtype=np.int64)
    after = np.searchsorted(stamps, moments, side="right")  # the first change after each fetch
    changed = np.append(stamps, np.iinfo(np.int64).max)[after]
    following = np.append(moments[1:], np.iinfo(np.int64).max)
    lo = np.maximum(moments, start)
    hi = np.minimum(np.minimum(changed, following), end)
    return float(np.clip(hi - lo, 0, None).sum() / (end - start))


@dataclass(frozen=True)
class Summary:
    """One policy's figures: freshness and fetches per behaviour group and overall."""

    freshness: dict[str, float]  # group (and "overall") -> mean over its pages
    fetches: dict[str, int]  # group (and "overall") -> fetches in the run (seed crawl left out)
    sites: dict[str, int]  # group -> sites


def summarise(world: World, fetches: Fetches, start: int, end: int) -> Summary:
    """Freshness over [start, end) and fetches during the run, per behaviour and overall."""
    shares: dict[str, list[float]] = {g: [] for g in BEHAVIOUR_GROUPS}
    counts: dict[str, int] = dict.fromkeys(BEHAVIOUR_GROUPS, 0)
    sites: dict[str, int] = dict.fromkeys(BEHAVIOUR_GROUPS, 0)
    for index, site in enumerate(world.sites):
        group = site.behaviour
        sites[group] += 1
        for page, p in enumerate(site.pages):
            instants = fetches.instants[index][page]
            shares[group].append(fresh_share(p.events, instants, start, end))
            counts[group] += sum(1 for s in instants if 0 <= s < world.end)
    every = [s for group in shares.values() for s in group]
    freshness = {g: float(np.mean(v)) for g, v in shares.items() if v}
    freshness["overall"] = float(np.mean(every)) if every else 0.0
    counts["overall"] = sum(counts.values())
    return Summary(freshness, counts, {g: n for g, n in sites.items() if n})


@dataclass(frozen=True)
class CalibrationRow:
    """One p_changed bucket: fetches in it, their mean p_changed, the share that changed."""

    low: float
    high: float
    count: int
    predicted: float
    observed: float


def _outcomes(world: World, fetches: Fetches, predictions: Sequence[Prediction]) -> np.ndarray:
    """1 where the page had changed since the crawler's previous fetch of it, else 0."""
    found = []
    for p in predictions:
        instants = fetches.instants[p.site][p.page]
        position = int(np.searchsorted(instants, p.instant, side="left"))
        page = world.sites[p.site].pages[p.page]
        if position == 0:
            found.append(1.0)  # never fetched before: whatever it holds is new
            continue
        found.append(float(page.version_at(p.instant) != page.version_at(instants[position - 1])))
    return np.array(found)


def calibration(
    world: World, fetches: Fetches, buckets: int = 10
) -> tuple[list[CalibrationRow], float]:
    """The calibration table of a policy's ``p_changed`` against the changes its fetches
    found (the true versions), and the Brier score; empty without predictions."""
    if not fetches.predictions:
        return [], float("nan")
    predicted = np.array([p.p_changed for p in fetches.predictions])
    observed = _outcomes(world, fetches, fetches.predictions)
    rows = []
    edges = np.linspace(0.0, 1.0, buckets + 1)
    which = np.clip(np.digitize(predicted, edges[1:-1]), 0, buckets - 1)
    for b in range(buckets):
        inside = which == b
        if inside.any():
            rows.append(
                CalibrationRow(
                    float(edges[b]),
                    float(edges[b + 1]),
                    int(inside.sum()),
                    float(predicted[inside].mean()),
                    float(observed[inside].mean()),
                )
            )
    return rows, brier(predicted, observed)


def brier(predicted: np.ndarray, observed: np.ndarray) -> float:
    """The mean squared difference between predictions and 0/1 outcomes."""
    return float(np.mean((np.asarray(predicted) - np.asarray(observed)) ** 2))
