"""What a plan costs and keeps fresh, in expectation: a site's fetches a day and binary
freshness under the plan against a uniform daily recrawl, and the same per segment
(sub-sitemap, or one of its groups) with the mean interval between two fetches of a
page. One computation: the audit's ``savings``, the report's advice and its segments
table all read these figures.

Touches: the database.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.planner.rates import allocate, freshness
from auditor.planner.schedule import MIN_P_CHANGED, VERIFY_DAILY_SHARE, SitePages

if TYPE_CHECKING:
    import pandas as pd

    from auditor.history import History

__all__ = ["PlanFigures", "SegmentFigures", "plan_figures", "site_figures"]

#: A wait within this of a whole number of days is that number: rounding, not a day more.
_DAY_SLACK = 1e-6


@dataclass(frozen=True)
class SegmentFigures:
    """One segment's share of a plan: its URLs, the fetches a day the plan gives them and
    their expected binary freshness (``group``: the group's pattern, None for a whole
    sub-sitemap; ``trusted``: planned on lastmod)."""

    sitemap: str
    group: str | None
    trusted: bool
    urls: int
    fetches_per_day: float
    freshness: float

    @property
    def interval_days(self) -> float | None:
        """The mean interval between two fetches of a page (days): its URLs over its
        fetches a day; None when the plan gives it none."""
        return self.urls / self.fetches_per_day if self.fetches_per_day > 0 else None

    def to_dict(self) -> dict[str, Any]:
        """The figures as a JSON object."""
        interval = self.interval_days
        return {
            "sitemap": self.sitemap,
            "group": self.group,
            "trusted": self.trusted,
            "urls": self.urls,
            "fetches_per_day": round(self.fetches_per_day, 1),
            "freshness": round(self.freshness, 4),
            "interval_days": None if interval is None else round(interval, 1),
        }


@dataclass(frozen=True)
class PlanFigures:
    """What trusting lastmod saves on one site: fetches a day and expected binary
    freshness under the plan, against a uniform daily recrawl of every URL, and the
    plan's figures per segment (:class:`SegmentFigures`)."""

    site: str
    urls: int
    fetches_per_day: float
    freshness: float
    uniform_fetches_per_day: float
    uniform_freshness: float
    segments: tuple[SegmentFigures, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The figures as a JSON object."""
        saved = 1 - self.fetches_per_day / self.uniform_fetches_per_day if self.urls else 0.0
        return {
            "urls": self.urls,
            "fetches_per_day": round(self.fetches_per_day, 1),
            "freshness": round(self.freshness, 4),
            "uniform_fetches_per_day": round(self.uniform_fetches_per_day, 1),
            "uniform_freshness": round(self.uniform_freshness, 4),
            "saved_share": round(saved, 4),
            "segments": [s.to_dict() for s in self.segments],
        }


def site_figures(
    history: History, result: dict[str, Any], entries: pd.DataFrame, budget: float | None = None
) -> PlanFigures:
    """What the plan saves on the site of ``result`` (an ``AuditResult`` as a dict, its
    run not saved yet) with its inventory ``entries``: :func:`plan_figures` at
    ``budget`` (None: the default budget, :func:`~auditor.planner.make.default_budget`)."""
    from auditor.planner.make import _pages, default_budget

    started = datetime.fromisoformat(str(result["started_at"]))
    pages = _pages(history, str(result["site"]), entries, set(), started, result)
    return plan_figures(pages, default_budget() if budget is None else budget)


def plan_figures(pages: SitePages, budget: float) -> PlanFigures:
    """What the plan costs and keeps fresh on a site, in expectation, against a uniform
    daily recrawl: trusted pages are fetched on the day their lastmod advances (about
    their change rate, at most daily: as fresh as a daily recrawl) and verified (5% of
    them a day), the others at the allocated frequencies of the budget left (at most
    daily, a plan being made each day), no sooner than their chance of a change reaches
    :data:`~auditor.planner.schedule.MIN_P_CHANGED`; never more than ``budget`` a day in
    all (trusted pages scaled down when they alone would pass it)."""
    n = len(pages)
    if not n:
        return PlanFigures(pages.site, 0, 0.0, 1.0, 0.0, 1.0)
    per_day, share = _fetches(pages, budget)
    daily = freshness(pages.rate, 1.0)
    fresh = freshness(pages.rate, per_day)
    fresh[pages.trusted] = share * daily[pages.trusted]  # fetched as their lastmod advances
    return PlanFigures(
        pages.site,
        n,
        float(per_day.sum()),
        float(fresh.mean()),
        float(n),
        float(daily.mean()),
        _by_segment(pages, per_day, fresh),
    )


def _fetches(pages: SitePages, budget: float) -> tuple[np.ndarray[Any, Any], float]:
    """Each page's expected fetches a day under the plan (:func:`plan_figures`), and the
    share of their lastmod changes the trusted pages are fetched for (1 unless they alone
    would take more than the budget)."""
    trusted = pages.trusted
    per_day = np.zeros(len(pages))
    per_day[trusted] = np.minimum(pages.rate[trusted], 1.0) + VERIFY_DAILY_SHARE
    on_lastmod = float(per_day.sum())
    share = min(1.0, budget / on_lastmod) if on_lastmod > 0 else 1.0
    per_day *= share
    rate = pages.rate[~trusted]
    left = max(budget - share * on_lastmod, 0.0)
    per_day[~trusted] = np.minimum(allocate(rate, left), _threshold_rate(rate))
    return per_day, share


def _threshold_rate(rate: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Fetches a day of pages fetched as soon as their chance of a change reaches
    :data:`~auditor.planner.schedule.MIN_P_CHANGED`, on a plan made each day: every whole
    number of days that takes (a page that needs 1.01 days waits for the second plan)."""
    with np.errstate(divide="ignore"):
        wait = -math.log1p(-MIN_P_CHANGED) / np.maximum(rate, 0.0)
    days: np.ndarray[Any, Any] = np.maximum(np.ceil(wait - _DAY_SLACK), 1.0)
    return 1.0 / days


def _by_segment(
    pages: SitePages, per_day: np.ndarray[Any, Any], fresh: np.ndarray[Any, Any]
) -> tuple[SegmentFigures, ...]:
    """The figures summed over each segment's pages, in the order of ``pages.sitemaps``."""
    count = len(pages.sitemaps)
    urls = np.bincount(pages.segment, minlength=count)
    fetches = np.bincount(pages.segment, weights=per_day, minlength=count)
    kept = np.bincount(pages.segment, weights=fresh, minlength=count)
    groups = list(pages.groups) or [None] * count
    return tuple(
        SegmentFigures(
            sitemap=pages.sitemaps[code],
            group=groups[code],
            trusted=pages.signals[code].mode == "trusted",
            urls=int(urls[code]),
            fetches_per_day=float(fetches[code]),
            freshness=float(kept[code] / urls[code]) if urls[code] else 1.0,
        )
        for code in range(count)
    )
