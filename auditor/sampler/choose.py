"""Choosing the pages to fetch: a seeded sample, stratified by sub-sitemap and by recency.

On a site's first run every page is fresh. On a later run a panel of pages
sampled before comes first (so a change between runs can be observed), then
fresh pages fill the rest of the budget.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_SAMPLE", "SampledPage", "choose_sample"]

#: Pages fetched per run by default. The scorer trusts agreement when the Wilson 95%
#: lower bound reaches 0.8: that takes 16 agreeing comparisons with none against, or
#: 25 with one against (24/25 gives 0.805). Real pages carry a credible dateModified
#: perhaps half the time and some fetches fail or are disallowed, so 50 pages give
#: about 25 comparisons: enough to reach the bar in one run when lastmod is accurate,
#: at 50 requests (under a minute at the default 1 s delay).
DEFAULT_SAMPLE = 50
#: Every sub-sitemap gets at least this many pages (budget allowing), however small.
MIN_PER_SEGMENT = 2
#: Of a sub-sitemap's dated picks, this share goes to its most recently modified pages
#: (where a wrong lastmod shows first); the rest are drawn from its older pages.
NEWEST_SHARE = 0.5
#: On a later run, at most this share of the budget re-fetches the panel; fresh pages
#: take the rest, so new comparisons keep coming.
PANEL_SHARE = 0.6


@dataclass(frozen=True)
class SampledPage:
    """A page chosen for fetching, with what the sitemap said of it."""

    loc: str
    sitemap: str
    lastmod: datetime | None
    lastmod_precision: str | None
    stratum: str  # panel | newest | older | undated


def choose_sample(
    entries: pd.DataFrame, budget: int, *, seed: int, panel: Iterable[str] = ()
) -> list[SampledPage]:
    """Up to ``budget`` pages of ``entries`` (an inventory DataFrame), reproducibly.

    ``panel`` lists pages sampled on earlier runs, most wanted first; those still in
    the inventory are re-fetched first, up to :data:`PANEL_SHARE` of the budget (all
    of it when nothing else is left).
    """
    if budget <= 0 or entries.empty:
        return []
    rng = np.random.default_rng(seed)
    frame = entries.reset_index(drop=True)
    panel_rows = _rows_of(frame, list(panel))
    fresh_rows = np.setdiff1d(np.arange(len(frame)), np.array(panel_rows, dtype=np.int64))
    panel_take = min(len(panel_rows), budget)
    if len(fresh_rows):
        panel_take = min(panel_take, max(int(budget * PANEL_SHARE), budget - len(fresh_rows)))
    chosen = [(row, "panel") for row in panel_rows[:panel_take]]
    chosen += _stratified(frame, fresh_rows, budget - panel_take, rng)
    return [_page(frame, row, stratum) for row, stratum in chosen]


def _rows_of(frame: pd.DataFrame, locs: list[str]) -> list[int]:
    """The rows of ``locs`` still in the inventory, in the order given, once each."""
    if not locs:
        return []
    import pandas as pd

    unique = frame["loc"].drop_duplicates()  # its index: row positions (frame is reset)
    found = pd.Index(unique.to_numpy()).get_indexer(pd.Index(locs).drop_duplicates())
    return [int(unique.index[i]) for i in found if i >= 0]


def _stratified(
    frame: pd.DataFrame, rows: np.ndarray, budget: int, rng: np.random.Generator
) -> list[tuple[int, str]]:
    if budget <= 0 or len(rows) == 0:
        return []
    sitemaps = frame["sitemap"].astype(str).to_numpy()[rows]
    names, sizes = np.unique(sitemaps, return_counts=True)
    picks = _allocate(sizes, budget)
    chosen: list[tuple[int, str]] = []
    for name, k in zip(names, picks, strict=True):
        if k:
            chosen += _within_segment(frame, rows[sitemaps == name], int(k), rng)
    return chosen


def _allocate(sizes: np.ndarray, budget: int) -> np.ndarray:
    """Picks per segment: a floor each (largest segments first when short), then the
    rest in proportion to size by largest remainder."""
    budget = min(budget, int(sizes.sum()))
    floors = np.minimum(sizes, MIN_PER_SEGMENT)
    if floors.sum() >= budget:
        picks = np.zeros_like(sizes)
        for i in np.argsort(-sizes, kind="stable"):
            picks[i] = min(floors[i], budget - picks.sum())
        return picks
    room = sizes - floors
    extra = budget - floors.sum()
    share = room / room.sum() * extra
    picks = floors + np.floor(share).astype(np.int64)
    leftover = budget - picks.sum()
    order = np.argsort(-(share - np.floor(share)), kind="stable")
    for i in order:
        if leftover == 0:
            break
        if picks[i] < sizes[i]:
            picks[i] += 1
            leftover -= 1
    return picks


def _within_segment(
    frame: pd.DataFrame, rows: np.ndarray, k: int, rng: np.random.Generator
) -> list[tuple[int, str]]:
    lastmod = frame["lastmod"].to_numpy(dtype="datetime64[s]")[rows]
    dated_mask = ~np.isnat(lastmod)
    dated, undated = rows[dated_mask], rows[~dated_mask]
    undated_k = round(k * len(undated) / len(rows))
    if len(undated) and k >= 2:
        undated_k = max(undated_k, 1)
    undated_k = min(undated_k, len(undated), k if not len(dated) else k - 1)
    dated_k = min(k - undated_k, len(dated))
    newest_k = int(np.ceil(dated_k * NEWEST_SHARE))
    by_recency = dated[np.lexsort((rng.random(len(dated)), -lastmod[dated_mask].astype(np.int64)))]
    older_pool = by_recency[newest_k:]
    older = rng.choice(older_pool, size=dated_k - newest_k, replace=False)
    chosen = [(int(r), "newest") for r in by_recency[:newest_k]]
    chosen += [(int(r), "older") for r in older]
    chosen += [(int(r), "undated") for r in rng.choice(undated, size=undated_k, replace=False)]
    return chosen


def _page(frame: pd.DataFrame, row: int, stratum: str) -> SampledPage:
    record = frame.iloc[row]
    lastmod = record["lastmod"]
    value = None if lastmod is None or lastmod != lastmod else lastmod.to_pydatetime()
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    precision = record["lastmod_precision"]
    return SampledPage(
        str(record["loc"]),
        str(record["sitemap"]),
        value,
        None if precision is None or precision != precision else str(precision),
        stratum,
    )
