"""The fields of a crawl log's fetch (JSON Lines, CSV, and a WARC's own), read or
named as a problem: :mod:`auditor.crawl.logfile` reads the files.

Touches: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from auditor.crawl.records import FetchRecord, LogProblem

__all__ = [
    "HASH_FIELDS",
    "BadField",
    "fetch_status",
    "fetch_time",
    "iso_time",
    "row_item",
    "short",
    "time_precision",
    "web_url",
]

#: The fields (CSV columns) a content hash is taken from, the first non-empty one.
HASH_FIELDS = ("content_hash", "hash", "digest", "sha1", "sha256")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_TEXT = re.compile(r"\d+(?:\.\d+)?")
_STATUS_TEXT = re.compile(r"(\d+)(?:\.0*)?")
_NOT_IN_URL = re.compile(r"[\x00-\x20\x7f]")  # whitespace and controls
#: The common shape of a URL, taken without urlsplit: http(s), an ASCII host, no port.
_PLAIN_URL = re.compile(r"https?://[a-z0-9.-]+(?:[/?#][^\x00-\x20\x7f]*)?", re.I | re.ASCII)
#: An ISO 8601 date (calendar, week or ordinal) and as much of a clock as it writes.
_ISO_CLOCK = re.compile(
    r"\d{4}-?(?:\d\d-?\d\d|W\d\d-?\d|\d{3})(?:.(\d\d)(?::?(\d\d)(?::?(\d\d)([.,]\d)?)?)?)?",
    re.ASCII,
)


class BadField(Exception):
    """A value that cannot be used: a problem code and its detail."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def row_item(number: int, row: Mapping[str, Any]) -> FetchRecord | LogProblem:
    """A JSON object or CSV row (named fields) as a fetch, or the problem it has."""
    try:
        return _row_record(row)
    except BadField as bad:
        return LogProblem(number, bad.code, bad.detail)


def _row_record(row: Mapping[str, Any]) -> FetchRecord:
    url, fetched_at = row.get("url"), row.get("fetched_at")
    if _blank(url):
        raise BadField("missing-field", "no url")
    if _blank(fetched_at):
        raise BadField("missing-field", "no fetched_at")
    return FetchRecord(
        url=web_url(url),
        fetched_at=fetch_time(fetched_at),
        status=fetch_status(row.get("status")),
        content_hash=_content_hash(row),
        time_precision=time_precision(fetched_at),
    )


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def web_url(value: object) -> str:
    """An absolute http(s) URL with a host, surrounding whitespace dropped."""
    url = value.strip() if isinstance(value, str) else ""
    if _PLAIN_URL.fullmatch(url) or _parsed_web_url(url):
        return url
    raise BadField("bad-url", f"not an absolute http(s) URL: {short(value)}")


def _parsed_web_url(url: str) -> bool:
    """The check :data:`_PLAIN_URL` makes quickly, for every other shape of URL."""
    if _NOT_IN_URL.search(url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a port that is no number in 0-65535
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and port != -1


def fetch_time(value: object) -> datetime:
    """An aware UTC time from ISO 8601 text (naive: UTC) or epoch seconds (number or digits)."""
    if isinstance(value, str):
        text = value.strip()
        if not _EPOCH_TEXT.fullmatch(text):
            return iso_time(text)
        value = float(text) if "." in text else int(text)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadField("bad-time", f"not a time: {short(value)}")
    try:
        if value < 0:
            raise ValueError("before 1970")
        return _EPOCH + timedelta(seconds=value)
    except (ValueError, OverflowError):  # NaN, infinities, milliseconds past year 9999
        raise BadField("bad-time", f"not epoch seconds: {short(value)}") from None


def time_precision(value: object) -> str | None:
    """How precisely a time :func:`fetch_time` reads was written: ``day`` (a date
    alone), ``hour``, ``minute``, ``second`` (epoch seconds as a whole number too), or
    None for a fraction of a second (exact enough)."""
    if isinstance(value, str):
        text = value.strip()
        if _EPOCH_TEXT.fullmatch(text):
            return None if "." in text else "second"
        found = _ISO_CLOCK.match(text)
        if found is None:
            return None
        hour, minute, second, fraction = found.groups()
        if hour is None:
            return "day"
        return (
            "hour"
            if minute is None
            else "minute"
            if second is None
            else (None if fraction else "second")
        )
    return "second" if isinstance(value, int) and not isinstance(value, bool) else None


def iso_time(text: str) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (a naive one is UTC); BadField if not."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadField("bad-time", f"not an ISO 8601 time: {short(text)}") from None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value if value.tzinfo is UTC else value.astimezone(UTC)


def fetch_status(value: object) -> int | None:
    """An HTTP status; None for no answer (absent, null, empty)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    number: object = value
    if isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and (digits := _STATUS_TEXT.fullmatch(value.strip())):
        number = int(digits[1])
    if type(number) is int and 100 <= number <= 599:
        return number
    raise BadField("bad-status", f"not an HTTP status (100-599): {short(value)}")


def _content_hash(row: Mapping[str, Any]) -> str | None:
    for name in HASH_FIELDS:
        value = row.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise BadField("bad-row", f"{name} is not text: {short(value)}")
        if text := str(value).strip():
            return text
    return None


def short(value: object) -> str:
    """A value cut short for a problem's detail."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
