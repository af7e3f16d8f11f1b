"""lastmod parsing: W3C Datetime (sitemaps, Atom) and RFC 822 (RSS) to aware UTC.

A short form stands for the start of its period (``2026-10`` is
2026-10-01T00:00:00Z) and keeps its precision, so no month or day is ever
invented. Anything else is ``None``: the caller reports ``invalid-lastmod``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import NamedTuple

__all__ = ["ParsedDate", "parse_rfc822", "parse_w3c"]


class ParsedDate(NamedTuple):
    """A parsed date: the UTC instant and how precisely it was written."""

    value: datetime
    precision: str  # year | month | day | minute | second | fraction


# YYYY[-MM[-DD[Thh:mm[:ss[.s+]]TZD]]]; a time always needs its zone (W3C NOTE-datetime).
_W3C = re.compile(
    r"(\d{4})(?:-(\d\d)(?:-(\d\d)(?:[Tt](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?"
    r"([Zz]|[+-]\d\d:\d\d))?)?)?",
    re.ASCII,
)
# The shape nearly every sitemap writes (a time with seconds or minutes, an optional
# fraction, Z or an offset of at most 23:59), handed to the C parser.
_TIMESTAMP = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(\.\d+)?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)",
    re.ASCII,
)
# An RFC 822 date ends with its zone: a numeric offset or a name (GMT, UT, EST, Z...).
_RFC822_ZONE = re.compile(r"\s(?:[+-]\d{4}|[A-Za-z]{1,5})\Z", re.ASCII)
_new_tuple = tuple.__new__
_UTC_ZONES = frozenset({"Z", "z", "+00:00", "-00:00"})


def _zone(tzd: str) -> timezone | None:
    if tzd in _UTC_ZONES:
        return UTC
    hours, minutes = int(tzd[1:3]), int(tzd[4:6])
    if hours > 23 or minutes > 59:
        return None
    offset = timedelta(hours=hours, minutes=minutes)
    return timezone(-offset if tzd[0] == "-" else offset)


def parse_w3c(text: str) -> ParsedDate | None:
    """Parse a W3C Datetime (surrounding whitespace allowed) to UTC, or None."""
    text = text.strip()
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return _parse_w3c_general(text)
    # The common shape, checked exactly by the pattern: the C parser does the rest.
    try:
        value = datetime.fromisoformat(text)
        if value.tzinfo is not UTC:
            value = value.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    precision = "fraction" if match.group(1) else "second" if text[16] == ":" else "minute"
    return _new_tuple(ParsedDate, (value, precision))  # ParsedDate(...) without its slow __new__


def _parse_w3c_general(text: str) -> ParsedDate | None:
    """Every W3C form, including the short ones and lower-case ``t``/``z``."""
    match = _W3C.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, tzd = match.groups()
    try:
        if month is None:
            return ParsedDate(datetime(int(year), 1, 1, tzinfo=UTC), "year")
        if day is None:
            return ParsedDate(datetime(int(year), int(month), 1, tzinfo=UTC), "month")
        if hour is None:
            return ParsedDate(datetime(int(year), int(month), int(day), tzinfo=UTC), "day")
        zone = _zone(tzd)
        if zone is None:
            return None
        micro = int((fraction + "000000")[:6]) if fraction else 0
        local = datetime(
            int(year), int(month), int(day), int(hour), int(minute),
            int(second or 0), micro, tzinfo=zone,
        )  # fmt: skip
        value = local if zone is UTC else local.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    precision = "fraction" if fraction else "second" if second else "minute"
    return ParsedDate(value, precision)


def parse_rfc822(text: str) -> ParsedDate | None:
    """Parse an RSS ``pubDate`` (RFC 822/2822, 2- or 4-digit year) to UTC, or None.

    The zone is required, as for W3C times: without one the instant is unknown.
    """
    text = text.strip()
    if not _RFC822_ZONE.search(text):
        return None
    try:
        value = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if value is None:
        return None
    if value.tzinfo is None:  # "-0000": UTC with no claim about the local zone
        value = value.replace(tzinfo=UTC)
    try:
        return ParsedDate(value.astimezone(UTC), "second")
    except (ValueError, OverflowError):
        return None
