"""lastmod parsing: W3C Datetime (sitemaps, Atom) and RFC 822 (RSS) to aware UTC.

A short form stands for the start of its period (``2026-10`` is
2026-10-01T00:00:00Z) and keeps its precision, so no month or day is ever
invented. Anything else is ``None``: the caller reports ``invalid-lastmod``.

Touches: nothing.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from functools import cache
from itertools import pairwise
from typing import NamedTuple

__all__ = ["ParsedDate", "parse_rfc822", "parse_w3c", "utc_iso", "w3c_text"]


class ParsedDate(NamedTuple):
    """A parsed date: the UTC instant and how precisely it was written."""

    value: datetime
    precision: str  # year | month | day | minute | second | fraction


@cache
def _w3c_form() -> re.Pattern[str]:
    """YYYY[-MM[-DD[Thh:mm[:ss[.s+]]TZD]]]; a time always needs its zone (W3C
    NOTE-datetime). Compiled when first needed: the common shapes never ask for it."""
    return re.compile(
        r"(\d{4})(?:-(\d\d)(?:-(\d\d)(?:[Tt](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?"
        r"([Zz]|[+-]\d\d:\d\d))?)?)?",
        re.ASCII,
    )


# An RFC 822 date ends with its zone: a numeric offset or a name (GMT, UT, EST, Z...).
_RFC822_ZONE = re.compile(r"\s(?:[+-]\d{4}|[A-Za-z]{1,5})\Z", re.ASCII)
_new_tuple = tuple.__new__
_fromisoformat = datetime.fromisoformat
_UTC_ZONES = frozenset({"Z", "z", "+00:00", "-00:00"})
_TWO_DIGITS = [f"{n:02d}" for n in range(60)]  # "00".."59": the tables below join them
# "hh:mm" -> minutes since midnight; minutes -> "hh:mm"; offsets seen -> minutes east of
# UTC (filled as zones are met: a site writes a few of the 2,880).
_HHMM = [hh + ":" + mm for hh in _TWO_DIGITS[:24] for mm in _TWO_DIGITS]
_CLOCK = {text: minutes for minutes, text in enumerate(_HHMM)}
_ZONES: dict[str, int] = {}
_SIXTY = frozenset(_TWO_DIGITS)
#: Dates seen (``YYYY-MM-DD`` -> itself, or "" when not a date): each is checked once.
_DAYS: dict[str, str] = {}
_DAYS_MAX = 65_536
_MOVED: dict[tuple[str, int], str | None] = {}
# "DD" -> the next day's (01 to 27) and the day before's (02 to 28): every month has them
_NEXT_DD = dict(pairwise(_TWO_DIGITS[1:29]))
_PREVIOUS_DD = {after: before for before, after in _NEXT_DD.items()}
_NO_DD: dict[str, str] = {}


def _day(text: str) -> str:
    """``text`` when it is a ``YYYY-MM-DD`` date of the calendar, else "" (remembered)."""
    ok = (
        text[4:8:3] == "--"
        and text.isascii()
        and text[:4].isdigit()
        and text[5:7].isdigit()
        and text[8:].isdigit()
    )
    if ok:
        try:
            date.fromisoformat(text)
        except ValueError:
            ok = False
    if len(_DAYS) >= _DAYS_MAX:
        _DAYS.clear()
    _DAYS[text] = text if ok else ""
    return _DAYS[text]


def _moved(day: str, by: int) -> str | None:
    """The date ``by`` days after ``day`` (a checked date), None past the calendar's ends.

    A day before the 28th moved forward or after the 1st moved back stays in its month:
    its ``DD`` replaced by table; the others by the calendar (remembered).
    """
    within = (_NEXT_DD if by == 1 else _PREVIOUS_DD if by == -1 else _NO_DD).get(day[8:])
    if within is not None:
        return day[:8] + within
    key = (day, by)
    if key not in _MOVED:
        if len(_MOVED) >= _DAYS_MAX:
            _MOVED.clear()
        try:
            _MOVED[key] = date.fromordinal(date.fromisoformat(day).toordinal() + by).isoformat()
        except (ValueError, OverflowError):
            _MOVED[key] = None
    return _MOVED[key]


def _east(tzd: str) -> int | None:
    """Minutes east of UTC of an offset ``+hh:mm``/``-hh:mm`` (at most 23:59), remembered;
    None for anything else."""
    minutes = _CLOCK.get(tzd[1:])
    if minutes is None or tzd[0] not in "+-" or len(tzd) != 6:
        return None
    _ZONES[tzd] = east = -minutes if tzd[0] == "-" else minutes
    return east


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

    What the JSONL writer prints, without making a datetime for the common
    shapes: a date (``YYYY-MM-DD``, each checked once) and a timestamp with
    ``Z`` or an offset, whose UTC clock is found by table and whose date moves
    only when the offset carries it past midnight. Anything else is formatted
    from the parsed value.
    """
    size = len(text)
    if size == 10:
        day = _DAYS.get(text)
        if day is None:
            day = _day(text)
        return (day + "T00:00:00+00:00", "day") if day else None
    if size < 17 or text[10] != "T" or text[13] != ":" or not text.isascii():
        return _w3c_text_other(text)
    if (size == 25 and text[19:] == "+00:00") or (size == 20 and text[19] == "Z"):
        # UTC to the second (the commonest stamps): once checked, its own text
        day = _DAYS.get(text[:10])
        if day is None:
            day = _day(text[:10])
        if day and text[11:16] in _CLOCK and text[16] == ":" and text[17:19] in _SIXTY:
            return (text if size == 25 else text[:19] + "+00:00"), "second"
    if text[-1] == "Z":
        shift, clock = 0, text[11:-1]
    else:
        zone = _ZONES.get(text[-6:])
        if zone is None and (zone := _east(text[-6:])) is None:
            return _w3c_text_other(text)
        shift, clock = zone, text[11:-6]
    minutes = _CLOCK.get(clock[:5])
    day = _DAYS.get(text[:10])
    if day is None:
        day = _day(text[:10])
    if minutes is None or not day:
        return _w3c_text_other(text)
    length = len(clock)
    if length == 5:
        precision, rest = "minute", ":00"
    elif length == 8 and clock[5] == ":" and clock[6:] in _SIXTY:
        precision, rest = "second", clock[5:]
    elif length >= 10 and clock[5] == ":" and clock[6:8] in _SIXTY and clock[8] == ".":
        digits = clock[9:]
        if not digits.isdigit():
            return _w3c_text_other(text)
        micro = (digits + "000000")[:6]
        precision, rest = "fraction", clock[5:8] + ("." + micro if micro != "000000" else "")
    else:
        return _w3c_text_other(text)
    minutes -= shift
    if minutes < 0 or minutes >= 1440:
        day = _moved(day, -1 if minutes < 0 else 1)
        if day is None:
            return None  # before year 1 or after 9999 in UTC
        minutes %= 1440
    return f"{day}T{_HHMM[minutes]}{rest}+00:00", precision


def utc_iso(value: datetime, raw: str | None = None) -> str:
    """``value.isoformat()``, taken straight from the raw text when that already is it.

    A UTC stamp written with seconds (``...:05Z``, ``...:05+00:00``) or a date
    (``2026-10-01``) needs only a suffix; anything else is formatted.
    """
    if raw is not None and len(raw) in (10, 20, 25) and (len(raw) == 10 or raw[10] == "T"):
        size = len(raw)
        if size == 25 and raw.endswith("+00:00"):
            return raw
        if size == 20 and raw[19] == "Z":
            return raw[:19] + "+00:00"
        if size == 10:
            return raw + "T00:00:00+00:00"
    return value.isoformat()


def _w3c_text_other(text: str) -> tuple[str, str] | None:
    """:func:`w3c_text` for the forms it does not take apart itself (dates, lower-case t...)."""
    parsed = parse_w3c(text)
    return None if parsed is None else (parsed.value.isoformat(), parsed.precision)


def _parse_w3c_general(text: str) -> ParsedDate | None:
    """Every W3C form, including the short ones and lower-case ``t``/``z``."""
    match = _w3c_form().fullmatch(text)
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
    from email.utils import parsedate_to_datetime  # here: only feeds have RFC 822 dates

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
