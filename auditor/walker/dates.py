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

__all__ = ["ParsedDate", "parse_rfc822", "parse_w3c", "w3c_text"]


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
_fromisoformat = datetime.fromisoformat
_UTC_ZONES = frozenset({"Z", "z", "+00:00", "-00:00"})
# "hh" + a whole-hour offset -> the UTC hour, where the date stays the same.
_UTC_HOURS = {
    f"{hour:02d}{sign}{offset:02d}:00": f"{hour - shift:02d}"
    for hour in range(24)
    for offset in range(1, 24)
    for sign, shift in (("+", offset), ("-", -offset))
    if 0 <= hour - shift < 24
}
# Timestamps without a fraction, by their characters at 4, 7, 10, 13...: (length, precision,
# end of the clock's text). Each is a shape _timestamp_precision gives that precision.
_SHAPES = {
    "--T::Z": (20, "second", 19),
    "--T::+:": (25, "second", 19),
    "--T::-:": (25, "second", 19),
    "--T:Z": (17, "minute", 16),
    "--T:+:": (22, "minute", 16),
    "--T:-:": (22, "minute", 16),
}


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
    precision = _timestamp_precision(text)
    if precision is None:
        return _parse_w3c_general(text.strip())
    # The common shape, its separators checked above: the C parser checks the rest.
    try:
        value = _fromisoformat(text)
        if value.tzinfo is not UTC:
            value = value.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    return _new_tuple(ParsedDate, (value, precision))  # ParsedDate(...) without its slow __new__


def _timestamp_precision(text: str) -> str | None:
    """The precision of ``YYYY-MM-DDThh:mm[:ss[.s+]](Z|+hh:mm)`` by its separators, else None.

    Only the separators are looked at; ``datetime.fromisoformat`` then insists on
    digits and valid ranges everywhere else, so together they accept exactly the
    W3C timestamp forms, faster than a regular expression.
    """
    size = len(text)
    if size < 17 or text[4:14:3] != "--T:":  # the characters at 4, 7, 10 and 13
        return None
    if not text.isascii():  # fromisoformat skips fraction digits past 6 unchecked
        return None
    if text[-1] == "Z":
        time_size = size - 12
    elif size >= 22 and text[-3] == ":" and text[-6] in "+-" and text[-2] in "012345":
        time_size = size - 17
    else:
        return None
    if time_size == 5:
        return "minute"
    if time_size < 8 or text[16] != ":":
        return None
    if time_size == 8:
        return "second"
    if text[19] == "." and time_size >= 10 and text[20 : 20 + time_size - 9].isdigit():
        return "fraction"
    return None


def w3c_text(text: str) -> tuple[str, str] | None:
    """``parse_w3c(text)`` as text: (``value.isoformat()``, precision), or None.

    What the JSONL writer prints, without formatting a datetime for the common
    timestamp shapes: the UTC text is put together from the input's own digits
    (``datetime.fromisoformat`` has checked them), only the hour looked up for
    a whole-hour offset that keeps the date. Anything else is formatted from
    the parsed value.
    """
    shape = _SHAPES.get(text[4::3])
    if (
        shape is not None
        and len(text) == shape[0]
        and text.isascii()
        and (text[-1] == "Z" or text[-2] in "012345")  # an offset's minutes
    ):
        precision, clock_end = shape[1], shape[2]
    elif text[4:20:3] == "--T::." and _timestamp_precision(text) == "fraction":
        precision, clock_end = "fraction", 19
    else:
        return _w3c_text_other(text)
    try:
        value = _fromisoformat(text)
        if value.tzinfo is UTC:
            if precision == "second":
                return f"{text[:19]}+00:00", precision  # the most common lastmod of all
            hour = text[11:13]
        else:
            hour = _UTC_HOURS.get(text[11:13] + text[-6:])
            if hour is None:  # the date moves, or a part-hour offset: rare enough to format
                return value.astimezone(UTC).isoformat(), precision
    except (ValueError, OverflowError):
        return None
    clock = text[13:clock_end]  # ":mm:ss" or ":mm"
    if precision == "minute":
        clock += ":00"
    elif precision == "fraction" and value.microsecond:  # isoformat() drops a zero fraction
        clock += f".{value.microsecond:06d}"
    return f"{text[:11]}{hour}{clock}+00:00", precision


def _w3c_text_other(text: str) -> tuple[str, str] | None:
    """:func:`w3c_text` for the forms it does not take apart itself (dates, lower-case t...)."""
    parsed = parse_w3c(text)
    return None if parsed is None else (parsed.value.isoformat(), parsed.precision)


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
