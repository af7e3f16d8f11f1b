"""What a crawler's fetch says of lastmod: judged against a walk of the sitemaps made
after it, never one made before the change could have been published.

A fetch compared with its URL's previous good fetch (that one at F1, this one at F2)
tells whether the content changed in (F1, F2]. Whether lastmod said so is read from the
lastmod L a walk of the sitemaps gave the URL, as the last change the site owns up to.
Each of L, F1 and F2 stands for the instants its precision allows: a lastmod or a
``fetched_at`` written to the day is a local calendar day of unknown offset (UTC-12 to
UTC+14, as :func:`auditor.evidence.period_of` reads dates), one written to the minute a
minute. For a walk made at W, at or after F2:

- L wholly at or before F1: the last change came before F1, none in (F1, F2]:
  **not advanced** (a URL the walk lists without a lastmod reads so too: its sitemap
  never says it changed);
- L wholly after F1 and at or before F2 (or at or before W, which saw it: a change
  cannot come after the walk that shows it): a change in (F1, F2]: **advanced**;
- L wholly after F2: the last change came after F2, which cannot tell whether one also
  happened in (F1, F2]; L overlapping F1 or F2 (a day holding either) cannot tell; a URL
  the walk does not list says nothing: **untold**, the fetch is not counted.

Every walk (a plan's, an audit's) resolves the fetches made before it, so the walk that
decides a fetch is the earliest made after it: a later one, whose L can only be later,
could not tell more. A walk made before F2 cannot say "not advanced" (a change between
it and F2 would not show in it) but it can prove an advance: F1 < L <= W < F2, the site
had published a change in (F1, F2] by then (a lastmod later than the walk that shows it
proves nothing: it claims a change yet to come). That proof is used at once: no later walk
takes it back, and it is the plan's own case (its walk sees the lastmods that moved
since the crawler's copy; the crawler then fetches those pages), which would otherwise
wait a whole plan cycle for no gain. Every other fetch is **pending** until a walk after
it, counted neither way, and shown as such.

:func:`judge` is the rule, on arrays: :mod:`auditor.crawl.record` applies it to each
batch as it records it, and :func:`resolve` to the pending fetches of a site at a walk
(the same call in an audit's worker, for the scorer, and where its run is saved, to
persist it: :func:`resolve_walk`; and at a plan's walk).

Only :func:`resolve_walk` reaches the history; the rest is pure.

Touches: the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from auditor.history import History
    from auditor.history.crawlcounts import PendingFetches

__all__ = [
    "ADVANCED",
    "NOT_ADVANCED",
    "PENDING",
    "UNTOLD",
    "Spans",
    "advanced_of",
    "judge",
    "judge_one",
    "resolve",
    "resolve_walk",
    "spans",
]

#: What a fetch says of lastmod (:func:`judge`'s codes).
ADVANCED, NOT_ADVANCED, UNTOLD, PENDING = 1, 0, -1, -2

_HOUR, _DAY = 3_600.0, 86_400.0
#: The instants a value written to each precision stands for, as offsets in seconds from
#: the value (earliest, latest). A day, month or year is a local calendar period of an
#: unknown zone, widened to every offset in use on Earth (UTC+14 to UTC-12), as
#: :func:`auditor.evidence.period_of` reads it; a month is taken as 31 days and a year as
#: 366 (wider is safer: it only makes more fetches untold). None: exact.
PERIODS: dict[str | None, tuple[float, float]] = {
    None: (0.0, 0.0),
    "fraction": (0.0, 0.0),
    "second": (0.0, 1.0),
    "minute": (0.0, 60.0),
    "hour": (0.0, _HOUR),
    "day": (-14 * _HOUR, _DAY + 12 * _HOUR),
    "month": (-14 * _HOUR, 31 * _DAY + 12 * _HOUR),
    "year": (-14 * _HOUR, 366 * _DAY + 12 * _HOUR),
}

#: Instants as [earliest, latest] seconds since the epoch, one pair of arrays; NaN: none.
Spans = tuple[np.ndarray, np.ndarray]


def spans(seconds: np.ndarray | Sequence[float], precisions: np.ndarray | Sequence[Any]) -> Spans:
    """The instants values written to ``precisions`` stand for (:data:`PERIODS`; an
    unknown precision is read as exact)."""
    values = np.asarray(seconds, dtype=float)
    exact = PERIODS[None]
    kinds = set(precisions)
    if len(kinds) <= 1:  # one precision for all: a log writes its times one way
        early, late = PERIODS.get(kinds.pop() if kinds else None, exact)
        return values + early, values + late
    names = list(kinds)  # a few kinds: each value's offsets looked up by its kind's code
    code = {kind: i for i, kind in enumerate(names)}
    offsets = np.array([PERIODS.get(kind, exact) for kind in names], dtype=float)
    codes = np.fromiter((code[p] for p in precisions), dtype=np.intp, count=len(values))
    return values + offsets[codes, 0], values + offsets[codes, 1]


def judge(
    previous: Spans,
    fetched: Spans,
    lastmod: Spans,
    listed: np.ndarray,
    walked_at: np.ndarray | float,
) -> np.ndarray:
    """What each fetch says of lastmod (module docstring): :data:`ADVANCED`,
    :data:`NOT_ADVANCED`, :data:`UNTOLD` or :data:`PENDING`, as int8.

    ``previous`` and ``fetched`` are the spans of F1 and F2; ``lastmod`` that of the
    walk's L (NaN where the URL is listed without one); ``listed`` whether the walk lists
    the URL at all; ``walked_at`` when the walk was made (seconds; one for all, or one
    each)."""
    f1_start, f1_end = previous
    f2_start, f2_end = fetched
    l_start, l_end = lastmod
    walked = np.asarray(walked_at, dtype=float)
    dated = listed & ~np.isnan(l_start)
    with np.errstate(invalid="ignore"):  # NaN compares False: undated is neither
        before = dated & (l_end <= f1_start)
        # the change a walk saw happened by the walk: a day of lastmod ends for it there;
        # a lastmod later than the walk that saw it claims a change yet to come: no proof
        known = ~(l_start > walked) & (np.fmin(l_end, walked) <= f2_start)
        between = dated & (l_start > f1_end) & known
    after = walked >= f2_end  # a walk that saw all up to F2
    codes = np.full(len(f2_start), PENDING, dtype=np.int8)
    codes[after] = UNTOLD
    codes[after & ((listed & ~dated) | before)] = NOT_ADVANCED
    codes[between] = ADVANCED  # proved by any walk, before F2 or after
    return codes


def judge_one(
    previous_at: datetime,
    fetched_at: datetime,
    lastmod: datetime | None,
    walked_at: datetime,
    *,
    previous_precision: str | None = None,
    fetched_precision: str | None = None,
    lastmod_precision: str | None = None,
    listed: bool = True,
) -> int:
    """:func:`judge` of one fetch, on datetimes."""
    return int(
        judge(
            spans([previous_at.timestamp()], [previous_precision]),
            spans([fetched_at.timestamp()], [fetched_precision]),
            spans([np.nan if lastmod is None else lastmod.timestamp()], [lastmod_precision]),
            np.array([listed]),
            walked_at.timestamp(),
        )[0]
    )


def advanced_of(code: int) -> bool | None:
    """A code as ``crawl_log.lastmod_advanced``: None unless decided."""
    return None if code < 0 else code == ADVANCED


def resolve(pending: PendingFetches, entries: pd.DataFrame, walked_at: datetime) -> np.ndarray:
    """What a walk made at ``walked_at`` (its ``entries``: loc, lastmod, lastmod_precision,
    sitemap) says of each of the ``pending`` fetches: :func:`judge`'s codes, vectorised (a
    URL listed twice is read by its first listing). A URL the walk does not list tells
    nothing only when the walk read the file that listed it: one whose file went unread
    (a sitemap that failed, or a walk that read none) stays pending; one no file ever
    listed is evidence for no segment, and is not counted."""
    import pandas as pd

    if not len(pending):
        return np.zeros(0, dtype=np.int8)
    locs = entries["loc"].astype(object)
    first = ~locs.duplicated().to_numpy()
    index = pd.Index(locs.to_numpy()[first])
    at = index.get_indexer(pending.locs)
    listed = at >= 0
    seconds = _seconds(entries["lastmod"]).to_numpy()[first]
    precision = entries["lastmod_precision"].astype(object).to_numpy()[first]
    found = np.where(listed, at, 0)
    if len(seconds):
        values = np.where(listed, seconds[found], np.nan)
        precisions = np.where(listed, precision[found], np.full(len(at), None))
    else:  # a walk listing nothing
        values, precisions = np.full(len(at), np.nan), np.full(len(at), None)
    codes = judge(
        spans(pending.previous_at, pending.previous_precision),
        spans(pending.fetched_at, pending.fetched_precision),
        spans(values, precisions),
        listed,
        walked_at.timestamp(),
    )
    read = pd.unique(entries["sitemap"].astype(object).to_numpy())
    codes[~listed & ~np.isin(pending.sitemaps, read)] = PENDING
    codes[pd.isna(pending.sitemaps)] = UNTOLD  # listed nowhere: evidence for no segment
    return codes


def _seconds(column: pd.Series[Any]) -> pd.Series[Any]:
    """Aware instants as seconds since the epoch, NaN where absent."""
    import pandas as pd

    stamps = pd.to_datetime(column, utc=True)
    micros = stamps.dt.tz_localize(None).to_numpy(dtype="datetime64[us]").astype(np.int64)
    return pd.Series(np.where(stamps.isna().to_numpy(), np.nan, micros / 1e6))


def resolve_walk(history: History, site: str, walked_at: datetime, entries: pd.DataFrame) -> int:
    """Resolve ``site``'s pending fetches against a walk made at ``walked_at`` and keep
    what it decided (an audit's, when its run is saved; a plan's, when it walks): how
    many fetches were decided."""
    site_id = history.site_id(site)
    if site_id is None:
        return 0
    pending = history.pending_fetches(site_id)
    if not len(pending):
        return 0
    codes = resolve(pending, entries, walked_at)
    decided = codes != PENDING
    advanced = [advanced_of(int(code)) for code in codes[decided]]
    rows = zip(
        advanced, pending.keys[decided], pending.locs[decided], pending.fetched[decided],
        strict=True,
    )  # fmt: skip
    return history.save_resolution(site_id, rows)
