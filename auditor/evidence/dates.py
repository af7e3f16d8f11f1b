"""Dates as pages write them, read leniently, to aware UTC with their precision.

Sitemaps must follow W3C Datetime and the walker holds them to it; pages write
what their CMS writes. On top of :func:`auditor.walker.dates.parse_w3c` this
accepts what real pages (the fundus corpus) carry:

- ``+0000`` and ``+02`` offsets (no colon, or hours only), ``UTC``/``GMT`` suffixes;
- a space instead of ``T``, and a space before the zone;
- more than six fraction digits (``.9999999``);
- RFC 822 (``Tue, 03 May 2024 15:47:42 GMT``), as in ``http-equiv=last-modified``.

**A date and time with no zone** (``2024-05-03T15:47:42``) names a wall-clock time
somewhere in UTC-12..UTC+14: the instant is unknown to within a day, but the
calendar day the site wrote is certain. It is kept as that day, with ``day``
precision (the time stays in ``raw``), so comparisons allow for every plausible
offset instead of guessing UTC and reporting errors of hours that are not there.

Touches: nothing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from auditor.walker.dates import ParsedDate, parse_rfc822, parse_w3c

__all__ = ["parse_page_date"]

#: Longest text tried: a date is short; anything longer is prose or garbage.
_MAX_LENGTH = 64
_SHAPE = re.compile(
    r"(?P<date>\d{4}-\d\d-\d\d)(?:[Tt ](?P<time>\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)"
    r"\s*(?P<zone>[Zz]|(?:UTC|GMT|UT)|[+-]\d\d(?::?\d\d)?)?)?",
    re.ASCII,
)
_NAMED_UTC = frozenset({"UTC", "GMT", "UT"})


def parse_page_date(text: str) -> ParsedDate | None:
    """Parse a date a page states about itself, or None when it is not one."""
    text = text.strip()
    if not text or len(text) > _MAX_LENGTH:
        return None
    parsed = parse_w3c(text)
    if parsed is not None:
        return parsed
    match = _SHAPE.fullmatch(text)
    if match is None:
        return parse_rfc822(text) if text[:1].isalpha() or "," in text else None
    date, time, zone = match.group("date", "time", "zone")
    if time is None:
        return None  # only the date: parse_w3c would have taken it if it were valid
    if zone is None:
        return _day_of(date)
    return parse_w3c(f"{date}T{_fraction(time)}{_w3c_zone(zone)}")


def _fraction(time: str) -> str:
    """A comma fraction as a dot, and at most six digits (``fromisoformat``'s limit)."""
    head, _, fraction = time.replace(",", ".").partition(".")
    return f"{head}.{fraction[:6]}" if fraction else head


def _w3c_zone(zone: str) -> str:
    if zone in _NAMED_UTC or zone in ("z", "Z"):
        return "Z"
    sign, digits = zone[0], zone[1:].replace(":", "")
    minutes = digits[2:] or "00"
    return f"{sign}{digits[:2]}:{minutes}"


def _day_of(date: str) -> ParsedDate | None:
    """A zone-less date-time: the calendar day is certain, the instant is not (module doc)."""
    try:
        return ParsedDate(datetime.fromisoformat(date).replace(tzinfo=UTC), "day")
    except ValueError:
        return None
