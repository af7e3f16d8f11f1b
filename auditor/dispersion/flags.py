"""The rules that turn figures into flags, each with the figure and the threshold.

Every threshold is a named constant with the reason for its value. The rules
are built not to cry wolf: a tiny sitemap, a news sitemap or a feed (recent
items cluster by design), a date-only site where a few pages changed the same
day, or an old bulk migration with real edits after it raise nothing.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.dispersion.figures import Figures, LastmodArrays
from auditor.dispersion.generation import GENERATION_WINDOW_SECONDS, Generation
from auditor.dispersion.movement import Movement

__all__ = ["Flag", "SegmentTraits", "flags_for"]

#: Below this share of URLs with a lastmod, a sitemap has (almost) none: good for
#: discovery, useless for scheduling.
NO_LASTMOD_MAX_SHARE = 0.05
#: Fewer dated entries than this say nothing about sharing or generation time: five
#: pages written the same minute is ordinary, ten or more is a pattern.
MIN_DATED_FOR_PATTERN = 10
#: Timed values: independent edits almost never land on the same second, so half the
#: entries on one second is a batch stamp, not a coincidence.
SHARED_SHARE_TIMED = 0.5
#: Date-only values: a release or a big commit legitimately touches many pages on one
#: day, so only a large majority on one day counts as shared.
SHARED_SHARE_DATE_ONLY = 0.8
#: A shared value this much older than the fetch, at the bottom of the range, with
#: spread values after it, is a bulk migration: the date the pages entered the system.
MIGRATION_MIN_AGE_SECONDS = 30 * 86_400
#: ... and "spread after it" means at least this many later entries, mostly distinct.
MIGRATION_MIN_LATER = 3
MIGRATION_MIN_LATER_DISTINCT_SHARE = 0.5
#: Half the dated entries carrying the file's own generation moment already means
#: lastmod cannot tell changed pages from unchanged ones in that file.
GENERATION_SHARE_MIN = 0.5
#: One value in a hundred that cannot be read, or is implausibly old, is a generator
#: bug worth naming; fewer is noise a crawler can live with.
INVALID_SHARE_MIN = 0.01
#: Likewise for lastmod values in the future.
FUTURE_SHARE_MIN = 0.01
#: Across runs: at least this many entries must have moved before their movement says
#: anything, and this share of the compared entries moving at once is a regeneration...
MOVED_MIN = 10
MOVED_SHARE_MIN = 0.5
#: ... when this share of the moved entries moved to one moment (within the window).
MOVED_ONE_MOMENT_SHARE_MIN = 0.9


@dataclass(frozen=True)
class Flag:
    """A reason code raised by the analyser, with what triggered it."""

    code: str
    figure: float
    threshold: float
    detail: str
    segment: str | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "code": self.code,
            "figure": round(self.figure, 4),
            "threshold": self.threshold,
            "detail": self.detail,
            "segment": self.segment,
        }


@dataclass(frozen=True)
class SegmentTraits:
    """What kind of list the values come from: news and feeds cluster by day by design."""

    recent_items: bool  # a news sitemap or an RSS/Atom feed
    fetched_at: float  # seconds since the epoch


def flags_for(
    figures: Figures,
    arrays: LastmodArrays,
    generation: Generation,
    movement: Movement | None,
    traits: SegmentTraits,
    segment: str | None = None,
) -> tuple[Flag, ...]:
    """Every flag the figures justify, in a stable order."""
    found = [
        _no_lastmod(figures),
        _invalid(figures),
        _future(figures),
        _shared(figures, arrays, traits),
        _generation(generation),
        _moved_together(movement),
    ]
    return tuple(
        Flag(f.code, f.figure, f.threshold, f.detail, segment) for f in found if f is not None
    )


def _no_lastmod(figures: Figures) -> Flag | None:
    if figures.urls == 0 or figures.share_with_lastmod >= NO_LASTMOD_MAX_SHARE:
        return None
    return Flag(
        "no-lastmod",
        figures.share_with_lastmod,
        NO_LASTMOD_MAX_SHARE,
        f"{figures.with_lastmod:,} of {figures.urls:,} URLs carry a lastmod",
    )


def _invalid(figures: Figures) -> Flag | None:
    bad = figures.invalid + figures.implausibly_old
    share = bad / figures.urls if figures.urls else 0.0
    if bad == 0 or share < INVALID_SHARE_MIN:
        return None
    return Flag(
        "invalid-lastmod",
        share,
        INVALID_SHARE_MIN,
        f"{figures.invalid:,} unreadable and {figures.implausibly_old:,} before 1995, "
        f"of {figures.urls:,} URLs",
    )


def _future(figures: Figures) -> Flag | None:
    if figures.future == 0 or figures.future_share < FUTURE_SHARE_MIN:
        return None
    return Flag(
        "future-lastmod",
        figures.future_share,
        FUTURE_SHARE_MIN,
        f"{figures.future:,} of {figures.with_lastmod:,} lastmod values are later than "
        f"the fetch (newest {_iso(figures.newest)})",
    )


def _shared(figures: Figures, arrays: LastmodArrays, traits: SegmentTraits) -> Flag | None:
    if figures.with_lastmod < MIN_DATED_FOR_PATTERN or figures.top_value is None:
        return None
    top = int(figures.top_value.timestamp())
    day_valued = _top_is_date_only(arrays, top)
    if day_valued and traits.recent_items:
        return None  # news and feeds list the last days' items: one day shared is normal
    threshold = SHARED_SHARE_DATE_ONLY if day_valued else SHARED_SHARE_TIMED
    if figures.top_share < threshold or _is_migration(figures, arrays, traits, top):
        return None
    return Flag(
        "shared-timestamp",
        figures.top_share,
        threshold,
        f"{figures.top_count:,} of {figures.with_lastmod:,} dated URLs share "
        f"{_iso(figures.top_value)}",
    )


def _top_is_date_only(arrays: LastmodArrays, top: int) -> bool:
    mask = arrays.dated & (arrays.seconds == top)
    return bool(np.count_nonzero(arrays.date_only[mask]) * 2 > np.count_nonzero(mask))


def _is_migration(figures: Figures, arrays: LastmodArrays, traits: SegmentTraits, top: int) -> bool:
    """One old shared value at the bottom of the range with real edits spread after it."""
    if figures.oldest is None or top != int(figures.oldest.timestamp()):
        return False
    if traits.fetched_at - top < MIGRATION_MIN_AGE_SECONDS:
        return False
    later = arrays.seconds[arrays.dated & (arrays.seconds > top)]
    if later.shape[0] < MIGRATION_MIN_LATER:
        return False
    distinct = np.unique(later).shape[0]
    return bool(distinct / later.shape[0] >= MIGRATION_MIN_LATER_DISTINCT_SHARE)


def _generation(generation: Generation) -> Flag | None:
    if generation.dated < MIN_DATED_FOR_PATTERN or generation.share < GENERATION_SHARE_MIN:
        return None
    where = {
        "date-header": "the response's Date",
        "last-modified": "the file's Last-Modified",
        "fetch-time": "the fetch",
        "newest-value": "the newest value (no response header to compare with)",
    }[generation.anchor or "newest-value"]
    return Flag(
        "generation-time",
        generation.share,
        GENERATION_SHARE_MIN,
        f"{generation.within:,} of {generation.dated:,} dated URLs are within "
        f"{GENERATION_WINDOW_SECONDS} s of "
        f"{_iso(generation.moment)}, {where}",
    )


def _moved_together(movement: Movement | None) -> Flag | None:
    if movement is None or movement.moved < MOVED_MIN:
        return None
    if movement.moved_share < MOVED_SHARE_MIN:
        return None
    if movement.one_moment_share < MOVED_ONE_MOMENT_SHARE_MIN:
        return None
    return Flag(
        "generation-time",
        movement.moved_share,
        MOVED_SHARE_MIN,
        f"{movement.moved:,} of {movement.compared:,} URLs changed lastmod since the "
        f"previous walk, {movement.one_moment_share:.0%} of them to one moment "
        f"({_iso(movement.top_moment)})",
    )


def _iso(value: object) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
