"""Choosing the pages to fetch: a seeded sample, stratified by segment (sub-sitemap, or
group within one) and by recency.

On a site's first run every page is fresh. On a later run a panel of pages
sampled before comes first (so a change between runs can be observed), then
fresh pages fill the rest of the budget.

A moved lastmod is the first thing to check (the entries' :data:`MOVED` column,
:func:`auditor.sampler.moved.with_moved`). How the budget splits on a later run:

1. the panel (pages read on the previous run, still listed) takes up to
   :data:`PANEL_SHARE` of the budget (all of it when nothing else is left), as before;
2. within the panel, the previous run's order, except that the pages whose lastmod moved
   since their last fetch (``panel-moved``) are pulled forward as far as
   :data:`MOVED_PANEL_SHARE` allows: the first panel page, then one in three while
   unmoved ones (``panel``) remain; none comes later than its own turn. So when the
   moved pages alone exceed the panel's share they fill a third of it, or the share they
   held in the previous order when that is more (a lastmod bumped on most pages), and
   those left over are not re-fetched this run;
3. the fresh picks take the rest, segment by segment: pages whose lastmod moved since the
   previous walk that were never fetched (``moved``, drawn at random) come first, then
   one in two (:data:`MOVED_FRESH_SHARE`), at most half of the segment's fresh picks;
   the stratified picks (``newest``, ``older``, ``undated``) take the rest.

Without a moved lastmod the sample is the same as it was before moved pages came first
(same seed, same pages, same order).

Two ways to spend the budget: :func:`choose_sample` picks it all at once (fixed
sampling); :class:`SequentialPlan` picks one page at a time and gives each pick to a
sub-sitemap whose verdict is still open, so a sub-sitemap stops being sampled once its
verdict is decided and one condemned by its lastmod values alone gets a small confirming
sample only.

Touches: nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.sampler.columns import column_reader, column_texts, instant_reader, positional
from auditor.sampler.defaults import DEFAULT_SAMPLE
from auditor.sampler.order import interleave, lead

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CONDEMNED",
    "DECIDED",
    "DEFAULT_SAMPLE",
    "MOVED",
    "MOVED_FRESH_SHARE",
    "MOVED_PANEL_SHARE",
    "OPEN",
    "PANEL_SHARE",
    "SampledPage",
    "SequentialPlan",
    "choose_sample",
]

#: Every sub-sitemap gets at least this many pages (budget allowing), however small.
MIN_PER_SEGMENT = 2
#: Of a sub-sitemap's dated picks, this share goes to its most recently modified pages
#: (where a wrong lastmod shows first); the rest are drawn from its older pages.
NEWEST_SHARE = 0.5
#: On a later run, at most this share of the budget re-fetches the panel; fresh pages
#: take the rest, so new comparisons keep coming.
PANEL_SHARE = 0.6
#: The entries' boolean column saying a page's lastmod moved since the previous audit
#: (:func:`auditor.sampler.moved.with_moved`); without it, no page moved.
MOVED = "lastmod_moved"
#: Panel pages whose lastmod moved since their last fetch are pulled forward: one first,
#: then each while the panel pages so far hold less than this share of them (rounded up).
#: A moved page is where a change is seen across runs, which the trust route needs (3
#: changes at least, ``scorer.rules.MIN_CHANGES``), and it tests lastmod's precision (did
#: the content change when lastmod said so?); an unmoved one tests its recall, and only
#: unmoved pages show which frame slots differ on every fetch whatever happened (a
#: "trending now" box drawn at random: ``evidence.runs``, restless slots), without which
#: a moved page's frame difference cannot be told from its own edit. So not all of them
#: first: the first panel page, then one in three while unmoved ones remain. On the
#: demo's bumping site (a lastmod moved on most pages) a panel of moved pages alone
#: excused 15 of 30 as their own frame's change and stayed inconclusive; one in three
#: condemns it in 14 requests. A real site's 3 moved pages of a 24-page panel (10 advances
#: in 192 URLs) still come in its first 7.
MOVED_PANEL_SHARE = 1 / 3
#: Of a segment's fresh picks, pages whose lastmod moved since the previous walk but that
#: were never fetched come first, then at most this share of every first n (rounded up):
#: fetched now, they can be compared on the next run (a page edited once is the likeliest
#: to be edited again; a real site's second run fetched 8 moved pages fresh, by chance of
#: its strata, and had nothing to compare them with), but they say nothing across runs
#: today. The stratified picks keep the other half: this run's dateModified comparisons
#: stand on them, and they must stay a fair sample of the segment.
MOVED_FRESH_SHARE = 0.5
#: A sub-sitemap's sampling status, as the scorer tells it while a run samples: its
#: lastmod values alone condemn it, its pages decided its verdict, or it is still open.
CONDEMNED = "condemned"
DECIDED = "decided"
OPEN = "open"
#: Pages a condemned sub-sitemap gets: enough to show in the report what its pages say
#: (their dateModified, their changes), while nothing they say can change the verdict.
CONFIRM_CONDEMNED = 3
#: Candidates kept per sub-sitemap, per page of budget: room for pages that turn out not
#: to be requested (robots.txt, another host) without reading the whole sub-sitemap.
QUEUE_FACTOR = 2


@dataclass(frozen=True)
class SampledPage:
    """A page chosen for fetching, with what the sitemap said of it."""

    loc: str
    sitemap: str
    lastmod: datetime | None
    lastmod_precision: str | None
    stratum: str  # panel | panel-moved | moved | newest | older | undated (+ -replacement)
    segment: str = ""  # the segment key where the file is split into groups

    @property
    def key(self) -> str:
        """The segment the page was drawn for: its group's key, else its sub-sitemap."""
        return self.segment or self.sitemap


def choose_sample(
    entries: pd.DataFrame, budget: int, *, seed: int, panel: Iterable[str] = ()
) -> list[SampledPage]:
    """Up to ``budget`` pages of ``entries`` (an inventory DataFrame), reproducibly.

    ``panel`` lists pages sampled on earlier runs, most wanted first; those still in
    the inventory are re-fetched first, up to :data:`PANEL_SHARE` of the budget (all
    of it when nothing else is left). Pages whose lastmod moved (the :data:`MOVED`
    column) come first on each side, as the module's docstring says.
    """
    if budget <= 0 or entries.empty:
        return []
    rng = np.random.default_rng(seed)
    frame = positional(entries)
    moved = _moved(frame)
    panel_rows = _rows_of(frame, list(panel))
    fresh_rows = np.setdiff1d(np.arange(len(frame)), np.array(panel_rows, dtype=np.int64))
    panel_take = min(len(panel_rows), budget)
    if len(fresh_rows):
        panel_take = min(panel_take, max(int(budget * PANEL_SHARE), budget - len(fresh_rows)))
    chosen = _panel_order(panel_rows, moved)[:panel_take]
    chosen += _stratified(frame, fresh_rows, budget - panel_take, rng, moved)
    rows = _Rows(frame)
    return [rows.page(row, stratum) for row, stratum in chosen]


def _moved(frame: pd.DataFrame) -> np.ndarray:
    """Each row's :data:`MOVED` flag (all False without the column)."""
    if MOVED not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return frame[MOVED].to_numpy(dtype=bool)


def _panel_order(rows: list[int], moved: np.ndarray) -> list[tuple[int, str]]:
    """The panel's rows in fetching order: ``rows``' order, those whose lastmod moved
    pulled forward (:data:`MOVED_PANEL_SHARE`)."""
    marked = [(row, "panel-moved" if moved[row] else "panel") for row in rows]
    return lead(marked, "panel-moved", MOVED_PANEL_SHARE)


def _rows_of(frame: pd.DataFrame, locs: list[str]) -> list[int]:
    """The rows of ``locs`` still in the inventory, in the order given, once each."""
    if not locs:
        return []
    import pandas as pd

    unique = frame["loc"].drop_duplicates()  # its index: row positions (frame is reset)
    found = pd.Index(unique.to_numpy()).get_indexer(pd.Index(locs).drop_duplicates())
    return [int(unique.index[i]) for i in found if i >= 0]


def _stratified(
    frame: pd.DataFrame,
    rows: np.ndarray,
    budget: int,
    rng: np.random.Generator,
    moved: np.ndarray,
) -> list[tuple[int, str]]:
    if budget <= 0 or len(rows) == 0:
        return []
    sitemaps = _strata(frame)[rows]
    names, sizes = np.unique(sitemaps, return_counts=True)
    picks = _allocate(sizes, budget)
    lastmods = _lastmods(frame)
    chosen: list[tuple[int, str]] = []
    for name, k in zip(names, picks, strict=True):
        if k:
            first, rest = _fresh(lastmods, moved, rows[sitemaps == name], int(k), rng)
            chosen += lead(rest + first, "moved", MOVED_FRESH_SHARE)
    return chosen


def _fresh(
    lastmods: np.ndarray, moved: np.ndarray, rows: np.ndarray, k: int, rng: np.random.Generator
) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """``k`` fresh picks of one segment's ``rows``: those whose lastmod moved, drawn at
    random (:data:`MOVED_FRESH_SHARE` of ``k`` at most), and the stratified ones."""
    candidates = rows[moved[rows]]
    m = min(len(candidates), math.ceil(k * MOVED_FRESH_SHARE))
    if not m:  # nothing drawn: the same sample as without the column
        return [], _within_segment(lastmods, rows, k, rng)
    first = rng.choice(candidates, size=m, replace=False)
    rest = _within_segment(lastmods, np.setdiff1d(rows, first), k - m, rng)
    return [(int(row), "moved") for row in first], rest


def _strata(frame: pd.DataFrame) -> np.ndarray:
    """Each row's segment: the ``segment`` column (a group's key) where the audit split a
    file into groups, else its sub-sitemap."""
    return column_texts(frame["segment" if "segment" in frame.columns else "sitemap"])


def _lastmods(frame: pd.DataFrame) -> np.ndarray:
    """The lastmod column as ``datetime64[s]`` (NaT where undated)."""
    return frame["lastmod"].to_numpy(dtype="datetime64[s]")


def _allocate(sizes: np.ndarray, budget: int) -> np.ndarray:
    """Picks per segment: a floor each (largest segments first when short), then the
    rest in proportion to size by largest remainder."""
    budget = min(budget, int(sizes.sum()))
    floors = np.minimum(sizes, MIN_PER_SEGMENT)
    if floors.sum() >= budget:
        picks: np.ndarray = np.zeros_like(sizes)
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
    lastmods: np.ndarray, rows: np.ndarray, k: int, rng: np.random.Generator
) -> list[tuple[int, str]]:
    lastmod = lastmods[rows]
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


class _Rows:
    """An inventory's rows as sampled pages: each row read column by column, the columns
    taken out of the frame once (taking one out costs about 0.1 ms: five a page were most
    of choosing a sample), a categorical's as its codes and its categories (a value
    boxed by pandas cost more than the rest of the page)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._loc = column_reader(frame["loc"])
        self._sitemap = column_reader(frame["sitemap"])
        self._lastmod = instant_reader(frame["lastmod"])
        self._precision = column_reader(frame["lastmod_precision"])
        self._segment = column_reader(frame["segment"]) if "segment" in frame.columns else None

    def page(self, row: int, stratum: str) -> SampledPage:
        """Row ``row`` as a sampled page of ``stratum``."""
        precision: Any = self._precision(row)
        return SampledPage(
            str(self._loc(row)),
            str(self._sitemap(row)),
            self._lastmod(row),
            None if precision is None or precision != precision else str(precision),
            stratum,
            str(self._segment(row)) if self._segment is not None else "",
        )


class SequentialPlan:
    """Which page to fetch next, one at a time, so the budget goes where doubt is.

    Each sub-sitemap has a queue of candidates in the order they should be fetched: its
    panel pages and its fresh pages interleaved (:data:`PANEL_SHARE` panel), those whose
    lastmod moved first on each side (:data:`MOVED_PANEL_SHARE`,
    :data:`MOVED_FRESH_SHARE`), the other fresh ones stratified (newest, older, undated)
    so that any first few are a fair sample.
    Each pick goes to a sub-sitemap that is not decided: first every one gets
    :data:`MIN_PER_SEGMENT` pages, then the one furthest below its share by size. A
    condemned sub-sitemap stops at :data:`CONFIRM_CONDEMNED` pages, a decided one at
    once. ``budget`` counts pages requested over HTTP; pages never requested (robots.txt)
    do not spend it, and at most ``budget`` of them are looked at. ``wanted`` raises the
    floor of some segments (by key): those whose evidence was too thin for a verdict on
    the previous run get their pages first, so the next run's budget goes where a figure
    was missing.
    """

    def __init__(
        self,
        entries: pd.DataFrame,
        budget: int,
        *,
        seed: int,
        panel: Iterable[str] = (),
        wanted: Mapping[str, int] | None = None,
    ) -> None:
        self.budget = budget
        self.requested = 0
        self.skipped = 0
        frame = positional(entries)
        self._rows = _Rows(frame)
        self._queues, self._sizes = _queues(frame, budget, seed, list(panel))
        self._next = dict.fromkeys(self._queues, 0)
        self._taken = dict.fromkeys(self._queues, 0)
        wanted = wanted or {}
        self._floors = {
            name: min(max(MIN_PER_SEGMENT, wanted.get(name, 0)), size)
            for name, size in self._sizes.items()
        }

    def next_page(self, status: Mapping[str, str]) -> SampledPage | None:
        """The next page to fetch given each sub-sitemap's status (missing: open), or None
        when the budget is spent or no sub-sitemap needs more pages."""
        if self.requested >= self.budget or self.skipped >= self.budget:
            return None
        wanting = [name for name in self._queues if self._wants(name, status.get(name, OPEN))]
        if not wanting:
            return None
        name = min(wanting, key=self._priority)
        row, stratum = self._queues[name][self._next[name]]
        self._next[name] += 1
        return self._rows.page(row, stratum)

    def record(self, page: SampledPage, *, requested: bool) -> None:
        """Count a page returned by :meth:`next_page` once it was fetched (or not)."""
        self._taken[page.key] += 1
        if requested:
            self.requested += 1
        else:
            self.skipped += 1

    def _wants(self, name: str, status: str) -> bool:
        if self._next[name] >= len(self._queues[name]) or status == DECIDED:
            return False
        return status != CONDEMNED or self._taken[name] < CONFIRM_CONDEMNED

    def _priority(self, name: str) -> tuple[bool, float, int, str]:
        """Below its floor first (the share of its floor taken), then the smallest share
        of its size taken, larger first."""
        taken, size, floor = self._taken[name], self._sizes[name], self._floors[name]
        if taken < floor:
            return False, taken / floor, -size, name
        return True, taken / size, -size, name


def _queues(
    frame: pd.DataFrame, budget: int, seed: int, panel: list[str]
) -> tuple[dict[str, list[tuple[int, str]]], dict[str, int]]:
    """Each sub-sitemap's candidates (row, stratum) in fetching order, and its size."""
    if budget <= 0 or frame.empty:
        return {}, {}
    rng = np.random.default_rng(seed)
    names, codes, sizes = np.unique(_strata(frame), return_inverse=True, return_counts=True)
    by_segment = np.split(np.argsort(codes, kind="stable"), np.cumsum(sizes)[:-1])
    panel_rows: list[list[int]] = [[] for _ in names]
    for row in _rows_of(frame, panel):
        panel_rows[codes[row]].append(row)
    lastmods, length, moved = _lastmods(frame), QUEUE_FACTOR * budget, _moved(frame)
    queues = {}
    for i, name in enumerate(names):
        own_panel = _panel_order(panel_rows[i], moved)[:length]
        fresh_rows = np.setdiff1d(by_segment[i], np.array(panel_rows[i], dtype=np.int64))
        k = min(len(fresh_rows), length - len(own_panel))
        first, rest = _fresh(lastmods, moved, fresh_rows, k, rng) if k > 0 else ([], [])
        strata = [[c for c in rest if c[1] == s] for s in ("newest", "older", "undated")]
        fresh = lead(
            interleave(strata, [len(s) for s in strata]) + first, "moved", MOVED_FRESH_SHARE
        )
        queues[str(name)] = interleave([own_panel, fresh], [PANEL_SHARE, 1 - PANEL_SHARE])
    return queues, {str(n): int(s) for n, s in zip(names, sizes, strict=True)}
