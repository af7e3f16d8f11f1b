"""Across runs: which lastmod values moved between two walks of a site, and how.

A generator that stamps the file's generation moment moves every entry to one
new moment at each fetch; a site with real lastmod moves a few entries, each to
its own moment.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from auditor.dispersion.figures import LastmodArrays, value_counts
from auditor.dispersion.generation import GENERATION_WINDOW_SECONDS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Movement", "PreviousValues", "align_previous", "movement_of"]

_DAY = 86_400


@dataclass(frozen=True)
class PreviousValues:
    """Each current entry's lastmod in the previous walk, aligned row for row."""

    seconds: np.ndarray  # int64, meaningless where not dated
    dated: np.ndarray  # bool: the URL was in the previous walk with a lastmod
    known: np.ndarray  # bool: the URL was in the previous walk at all

    def take(self, selection: slice | np.ndarray) -> PreviousValues:
        """The same columns for a slice or a boolean mask."""
        return PreviousValues(self.seconds[selection], self.dated[selection], self.known[selection])


@dataclass(frozen=True)
class Movement:
    """How lastmod values moved between the previous walk and this one.

    ``compared`` counts URLs dated in both walks; ``moved`` those whose value
    changed. ``one_moment`` counts moved entries that landed within the generation
    window of the most common new value (``top_moment``; on its day for date-only
    values); ``new_urls`` counts URLs the previous walk did not have.
    """

    compared: int
    moved: int
    one_moment: int
    top_moment: datetime | None
    new_urls: int

    @property
    def moved_share(self) -> float:
        """Share of the compared entries whose lastmod moved."""
        return self.moved / self.compared if self.compared else 0.0

    @property
    def one_moment_share(self) -> float:
        """Share of the moved entries that moved to one moment."""
        return self.one_moment / self.moved if self.moved else 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "compared": self.compared,
            "moved": self.moved,
            "moved_share": round(self.moved_share, 4),
            "one_moment": self.one_moment,
            "one_moment_share": round(self.one_moment_share, 4),
            "top_moment": self.top_moment.isoformat() if self.top_moment else None,
            "new_urls": self.new_urls,
        }


def align_previous(current: pd.DataFrame, previous: pd.DataFrame) -> PreviousValues:
    """Look up each current URL's previous lastmod (``previous`` has loc and lastmod)."""
    import pandas as pd

    earlier = previous.drop_duplicates("loc", keep="first")
    positions = pd.Index(earlier["loc"]).get_indexer(current["loc"])  # one hash look-up each
    known = positions >= 0
    stamps = pd.to_datetime(earlier["lastmod"], utc=True).to_numpy(dtype="datetime64[s]")
    stamps = np.append(stamps, np.datetime64("NaT", "s"))  # position -1: not known before
    found = stamps[positions]
    dated = ~np.isnat(found)
    return PreviousValues(found.astype(np.int64), dated, known)


def movement_of(arrays: LastmodArrays, previous: PreviousValues) -> Movement:
    """The movement of the current values against the aligned previous ones."""
    both = arrays.dated & previous.dated
    moved_mask = both & (arrays.seconds != previous.seconds)
    moved = int(np.count_nonzero(moved_mask))
    new_urls = int(np.count_nonzero(~previous.known))
    if moved == 0:
        return Movement(int(np.count_nonzero(both)), 0, 0, None, new_urls)
    landed = arrays.seconds[moved_mask]
    landed_day_only = arrays.date_only[moved_mask]
    top = int(value_counts(landed).values[0])
    near = np.abs(landed - top) <= GENERATION_WINDOW_SECONDS
    same_day = (landed // _DAY) == (top // _DAY)
    one_moment = int(np.count_nonzero(np.where(landed_day_only, same_day, near)))
    return Movement(
        int(np.count_nonzero(both)),
        moved,
        one_moment,
        datetime.fromtimestamp(top, UTC),
        new_urls,
    )
