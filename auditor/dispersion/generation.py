"""Generation time: how many lastmod values are just the moment the file was written.

A file's generation moment is judged from what its response said (``Date``,
``Last-Modified``), when we fetched it, and the newest value in the file. The
anchor that explains the most values wins; its share is the generation share.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from auditor.dispersion.figures import LastmodArrays

__all__ = ["GENERATION_WINDOW_SECONDS", "Generation", "generation_share"]

#: Values this close to the generation moment carry it. Generators stamp now() once per
#: file or once per entry: a 50,000-URL file is written well inside 10 s, and the Date
#: and Last-Modified headers have one-second resolution, so 10 s covers two stamps a
#: second apart and millisecond jitter, while real edits this close to a fetch are rare.
GENERATION_WINDOW_SECONDS = 10
#: A date-only lastmod written at generation time is the site's local date of the
#: fetch: the UTC day of the anchor, or the day before or after (offsets -12h..+14h),
#: whichever of the three carries the most values (one day, never the three merged).
_DAY = 86_400
#: Anchors in the order they are preferred when two explain the same number of values.
ANCHORS = ("date-header", "last-modified", "fetch-time", "newest-value")


@dataclass(frozen=True)
class Generation:
    """The generation moment best supported by the values, and the share it explains.

    ``within`` counts dated entries within the window of ``moment``; ``share`` is
    over the dated entries. ``anchor`` names where the moment came from; the newest
    value in the file is a weaker anchor than a response header (a shared stamp at
    the top of the file, not proven to be the moment of writing).
    """

    moment: datetime | None
    anchor: str | None
    within: int
    dated: int

    @property
    def share(self) -> float:
        """Share of dated entries carrying the generation moment."""
        return self.within / self.dated if self.dated else 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "moment": self.moment.isoformat() if self.moment else None,
            "anchor": self.anchor,
            "within": self.within,
            "share": round(self.share, 4),
        }


def generation_share(
    arrays: LastmodArrays, anchors: Mapping[str, float | None], *, daily: bool = True
) -> Generation:
    """The anchor that explains most dated values, and how many it explains.

    ``anchors`` maps an anchor name (see :data:`ANCHORS`) to seconds since the epoch.
    Timed values count within :data:`GENERATION_WINDOW_SECONDS`; date-only values
    count on the anchor's day (local offsets allowed) for a response anchor, and
    never for the newest-value anchor (that is the shared-stamp check's business).
    ``daily=False`` leaves date-only values out entirely: a news sitemap or a feed
    lists the last days' items by design.
    """
    seconds = arrays.seconds[arrays.dated]
    date_only = arrays.date_only[arrays.dated]
    dated = int(seconds.shape[0])
    if dated == 0:
        return Generation(None, None, 0, 0)
    candidates = dict(anchors)
    timed_seconds = seconds[~date_only]
    if timed_seconds.shape[0]:
        candidates["newest-value"] = float(timed_seconds.max())
    best = Generation(None, None, 0, dated)
    for name in ANCHORS:
        moment = candidates.get(name)
        if moment is None:
            continue
        from_values = name == "newest-value"
        within = _count_within(seconds, date_only, moment, daily and not from_values)
        if from_values and within < 2:
            continue  # the newest value explains itself: that proves nothing
        if within > best.within:
            best = Generation(datetime.fromtimestamp(moment, UTC), name, within, dated)
    return best


def _count_within(
    seconds: np.ndarray, date_only: np.ndarray, moment: float, count_days: bool
) -> int:
    near = np.abs(seconds - moment) <= GENERATION_WINDOW_SECONDS
    timed = int(np.count_nonzero(near & ~date_only))
    if not count_days:
        return timed
    # One local day, not three merged: a list of the last days' items spreads over several.
    day = int(moment // _DAY) * _DAY
    days = seconds[date_only] // _DAY * _DAY
    on_day = max(int(np.count_nonzero(days == day + shift)) for shift in (-_DAY, 0, _DAY))
    return timed + on_day
