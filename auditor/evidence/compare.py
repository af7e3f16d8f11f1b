"""lastmod against a date the page states, respecting precision and time zones.

Each side stands for an interval of instants: ``2026-10-05T10:30Z`` (minute)
for the minute it names, ``2026-10`` for the month. A date without a time
(``day``, ``month``, ``year``) is a *local* calendar period of the site, whose
offset is unknown: it is widened to every offset in use on Earth, UTC-12 to
UTC+14, so ``2026-10-05`` covers 2026-10-04T10:00Z to 2026-10-06T12:00Z.

The signed error is the gap between the two intervals, positive when lastmod
is later than the page's date, 0 when they overlap; they agree when the gap is
within the tolerance.

Touches: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from auditor.evidence.model import DatedValue

__all__ = ["DEFAULT_TOLERANCE", "Comparison", "compare_lastmod", "period_of"]

#: How far apart lastmod and the page's date may be and still agree: clock skew and the
#: delay between saving a page and writing its sitemap entry. Small enough that a site
#: writing local time as UTC shows up as disagreement (errors of whole hours).
DEFAULT_TOLERANCE = timedelta(minutes=5)
#: The zones in use on Earth run from UTC-12:00 to UTC+14:00.
EARLIEST_OFFSET = timedelta(hours=14)  # a local midnight at UTC+14 is 14 h before UTC's
LATEST_OFFSET = timedelta(hours=12)  # a local midnight at UTC-12 is 12 h after UTC's
_FIRST = datetime.min.replace(tzinfo=UTC)
_LAST = datetime.max.replace(tzinfo=UTC)
_STEP = {"minute": timedelta(minutes=1), "second": timedelta(seconds=1), "fraction": timedelta(0)}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Whether lastmod agrees with the page's date, and by how much it is off.

    ``signed_error_seconds`` > 0: lastmod is later than the page says; < 0: earlier.
    """

    agrees: bool
    signed_error_seconds: float


def period_of(value: datetime, precision: str) -> tuple[datetime, datetime]:
    """The instants a value of this precision can stand for, as ``[start, end]``."""
    if precision in _STEP:
        return value, _later(value, _STEP[precision])
    if precision == "day":
        end = _later(value, timedelta(days=1))
    elif precision in ("month", "year"):
        end = _next_period(value, precision)
    else:
        raise ValueError(f"unknown precision: {precision!r}")
    try:
        start = value - EARLIEST_OFFSET
    except OverflowError:
        start = _FIRST
    return start, _later(end, LATEST_OFFSET)


def _later(value: datetime, step: timedelta) -> datetime:
    try:
        return value + step
    except OverflowError:
        return _LAST


def _next_period(value: datetime, precision: str) -> datetime:
    try:
        if precision == "year":
            return value.replace(year=value.year + 1)
        return value.replace(year=value.year + value.month // 12, month=value.month % 12 + 1)
    except ValueError:  # past year 9999
        return _LAST


def compare_lastmod(
    lastmod: datetime,
    lastmod_precision: str,
    observed: DatedValue,
    *,
    tolerance: timedelta = DEFAULT_TOLERANCE,
) -> Comparison:
    """Compare a sitemap lastmod (aware) with a date the page states (module docstring)."""
    l_start, l_end = period_of(lastmod, lastmod_precision)
    o_start, o_end = period_of(observed.value, observed.precision)
    if l_start > o_end:
        gap = (l_start - o_end).total_seconds()
    elif o_start > l_end:
        gap = -(o_start - l_end).total_seconds()
    else:
        gap = 0.0
    return Comparison(abs(gap) <= tolerance.total_seconds(), gap)
