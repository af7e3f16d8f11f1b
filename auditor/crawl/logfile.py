"""Crawl logs read into :class:`FetchRecord` and :class:`LogProblem` values, streamed.

Two formats (:data:`FORMATS`), each read in bounded memory, in file order:

- ``jsonl``: one JSON object a line (UTF-8, a BOM tolerated on the first line);
- ``csv``: a header row, then one row a fetch (comma-delimited, UTF-8, a BOM tolerated,
  quoted fields may hold newlines).

A JSON Lines object or CSV row gives ``url`` (absolute http or https), ``fetched_at``
(ISO 8601, with ``Z`` or an offset, a naive time being UTC; or epoch seconds, a number or a
string of digits), ``status`` (an integer 100-599, digits in a string too, and ``200.0``
as pandas writes a column with gaps; absent, null or empty: no answer) and optionally a
content hash, the first non-empty of :data:`HASH_FIELDS`, taken as its text: an ETag is
not one (a server's validator, which may change while the content does not). CSV column
names are matched ignoring case and surrounding spaces; other keys and columns are
ignored. Times are handed out in UTC.

What cannot be used is a :class:`LogProblem` naming its line (CSV: the line its row starts
on) and is skipped; everything around it is read. A line that is not UTF-8 is named
(``bad-json``, or ``bad-row`` in a CSV) rather than decoded with replacement characters,
which would hand out a URL or hash that was never in the log. Blank lines are skipped
silently.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from auditor.crawl.records import FetchRecord, LogProblem
from auditor.http.body import CHUNK_SIZE

__all__ = [
    "DEFAULT_MAX_BODY",
    "FORMATS",
    "HASH_FIELDS",
    "LINE_MAX_BYTES",
    "LOG_PROBLEM_CODES",
    "detect_format",
    "read_crawl_log",
]

FORMATS = ("jsonl", "csv")
#: The fields (CSV columns) a content hash is taken from, the first non-empty one.
HASH_FIELDS = ("content_hash", "hash", "digest", "sha1", "sha256")
#: A JSON Lines or CSV line longer than this (bytes, its line ending included) is skipped.
LINE_MAX_BYTES = 1024 * 1024
#: A WARC response's body is kept up to this many bytes (decoded), and marked truncated.
DEFAULT_MAX_BODY = 10 * 1024 * 1024
LOG_PROBLEM_CODES = frozenset(
    {
        "bad-json",
        "bad-row",
        "missing-field",
        "bad-url",
        "bad-time",
        "bad-status",
        "bad-record",
        "line-too-long",
        "truncated-file",
    }
)

_SUFFIXES = (
    (".jsonl", "jsonl"),
    (".ndjson", "jsonl"),
    (".json", "jsonl"),
    (".csv", "csv"),
)
_BOM = b"\xef\xbb\xbf"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_TEXT = re.compile(r"\d+(?:\.\d+)?")
_STATUS_TEXT = re.compile(r"(\d+)(?:\.0*)?")
_NOT_IN_URL = re.compile(r"[\x00-\x20\x7f]")  # whitespace and controls
#: The common shape of a URL, taken without urlsplit: http(s), an ASCII host, no port.
_PLAIN_URL = re.compile(r"https?://[a-z0-9.-]+(?:[/?#][^\x00-\x20\x7f]*)?", re.I | re.ASCII)


def detect_format(path_or_name: str) -> str | None:
    """The crawl log format a file name's suffix says (case ignored), or None.

    ``.jsonl``, ``.ndjson`` and ``.json`` (read as JSON Lines) are ``jsonl``; ``.csv`` is
    ``csv``. Compressed JSON Lines or CSV and ``-`` (standard input) are not recognised.
    """
    name = path_or_name.lower()
    return next((fmt for suffix, fmt in _SUFFIXES if name.endswith(suffix)), None)


def read_crawl_log(
    stream: BinaryIO,
    format: str,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    max_line: int = LINE_MAX_BYTES,
) -> Iterator[FetchRecord | LogProblem]:
    """The fetches of a crawl log and the problems met reading it, in file order.

    ``format`` is one of :data:`FORMATS` (``ValueError`` otherwise, raised at once).
    ``max_body`` will cap a WARC body (the WARC reader is still to come); ``max_line`` caps
    a JSON Lines or CSV line. The stream is read lazily, once, and left open (it is the
    caller's).
    """
    if max_body < 0 or max_line < 1:
        raise ValueError("max_body must be >= 0 and max_line >= 1")
    if format == "jsonl":
        return _read_jsonl(stream, max_line)
    if format == "csv":
        return _read_csv(stream, max_line)
    raise ValueError(f"unknown crawl log format {format!r} (expected one of {FORMATS})")


# -- fields --------------------------------------------------------------------------


class _Bad(Exception):
    """A value that cannot be used: a problem code and its detail."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def _row_item(number: int, row: Mapping[str, Any]) -> FetchRecord | LogProblem:
    """A JSON object or CSV row (named fields) as a fetch, or the problem it has."""
    try:
        return _row_record(row)
    except _Bad as bad:
        return LogProblem(number, bad.code, bad.detail)


def _row_record(row: Mapping[str, Any]) -> FetchRecord:
    url, fetched_at = row.get("url"), row.get("fetched_at")
    if _blank(url):
        raise _Bad("missing-field", "no url")
    if _blank(fetched_at):
        raise _Bad("missing-field", "no fetched_at")
    return FetchRecord(
        url=_url(url),
        fetched_at=_time(fetched_at),
        status=_status(row.get("status")),
        content_hash=_content_hash(row),
    )


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _url(value: object) -> str:
    """An absolute http(s) URL with a host, surrounding whitespace dropped."""
    url = value.strip() if isinstance(value, str) else ""
    if _PLAIN_URL.fullmatch(url) or _parsed_web_url(url):
        return url
    raise _Bad("bad-url", f"not an absolute http(s) URL: {_short(value)}")


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


def _time(value: object) -> datetime:
    """An aware UTC time from ISO 8601 text (naive: UTC) or epoch seconds (number or digits)."""
    if isinstance(value, str):
        text = value.strip()
        if not _EPOCH_TEXT.fullmatch(text):
            return _iso_time(text)
        value = float(text) if "." in text else int(text)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad("bad-time", f"not a time: {_short(value)}")
    try:
        if value < 0:
            raise ValueError("before 1970")
        return _EPOCH + timedelta(seconds=value)
    except (ValueError, OverflowError):  # NaN, infinities, milliseconds past year 9999
        raise _Bad("bad-time", f"not epoch seconds: {_short(value)}") from None


def _iso_time(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise _Bad("bad-time", f"not an ISO 8601 time: {_short(text)}") from None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value if value.tzinfo is UTC else value.astimezone(UTC)


def _status(value: object) -> int | None:
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
    raise _Bad("bad-status", f"not an HTTP status (100-599): {_short(value)}")


def _content_hash(row: Mapping[str, Any]) -> str | None:
    for name in HASH_FIELDS:
        value = row.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise _Bad("bad-row", f"{name} is not text: {_short(value)}")
        if text := str(value).strip():
            return text
    return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- JSON Lines and CSV ----------------------------------------------------------------


def _lines(stream: BinaryIO, max_line: int) -> Iterator[tuple[int, bytes | None]]:
    """Each line's number and bytes, None for a line over ``max_line`` (skipped unheld)."""
    number = 0
    while line := stream.readline(max_line + 1):
        number += 1
        if len(line) <= max_line:
            yield number, (line.removeprefix(_BOM) if number == 1 else line)
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(CHUNK_SIZE)
        yield number, None


def _too_long(number: int, max_line: int) -> LogProblem:
    return LogProblem(number, "line-too-long", f"line over {max_line:,} bytes")


def _read_jsonl(stream: BinaryIO, max_line: int) -> Iterator[FetchRecord | LogProblem]:
    for number, line in _lines(stream, max_line):
        if line is None:
            yield _too_long(number, max_line)
        elif line.strip():
            yield _jsonl_item(number, line)


def _jsonl_item(number: int, line: bytes) -> FetchRecord | LogProblem:
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return LogProblem(number, "bad-json", f"not UTF-8 (byte {exc.start + 1})")
    except (ValueError, RecursionError) as exc:
        return LogProblem(number, "bad-json", f"not JSON: {str(exc)[:80]}")
    if not isinstance(value, dict):
        return LogProblem(number, "bad-row", f"a JSON {type(value).__name__}, not an object")
    return _row_item(number, value)


class _LineTooLong(Exception):
    pass


class _TextLines:
    """A CSV's lines as text for :func:`csv.reader`, counted; a line over the cap raises
    :class:`_LineTooLong` (and is skipped), after which reading goes on. Bytes that are
    not UTF-8 are kept as surrogates and their last line number noted."""

    def __init__(self, stream: BinaryIO, max_line: int) -> None:
        self._lines = _lines(stream, max_line)
        self.number = 0  # lines handed out (or skipped) so far
        self.undecodable = 0  # the last line that was not UTF-8

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        self.number, line = next(self._lines)
        if line is None:
            raise _LineTooLong
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            self.undecodable = self.number
            return line.decode("utf-8", "surrogateescape")


def _csv_rows(stream: BinaryIO, max_line: int) -> Iterator[tuple[int, list[str] | LogProblem]]:
    """Each non-blank CSV row with the line it starts on, or the problem reading it."""
    lines = _TextLines(stream, max_line)
    reader = csv.reader(lines)
    while True:
        start = lines.number + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except _LineTooLong:
            yield start, _too_long(start, max_line)
            continue
        except csv.Error as exc:
            yield start, LogProblem(start, "bad-row", f"not CSV: {exc}")
            continue
        if lines.undecodable >= start:
            yield start, LogProblem(start, "bad-row", "not UTF-8")
        elif len(row) > 1 or (row and row[0].strip()):
            yield start, row


def _read_csv(stream: BinaryIO, max_line: int) -> Iterator[FetchRecord | LogProblem]:
    rows = _csv_rows(stream, max_line)
    first = next(rows, None)
    if first is None:
        return
    number, header = first
    if isinstance(header, LogProblem):
        yield header  # no row can be read without the header
        return
    columns = _columns(header)
    if "url" not in columns or "fetched_at" not in columns:
        yield LogProblem(number, "missing-field", f"the header has no url or fetched_at: {header}")
        return
    for number, row in rows:
        if isinstance(row, LogProblem):
            yield row
        elif len(row) != len(header):
            yield LogProblem(number, "bad-row", f"{len(row)} fields, the header has {len(header)}")
        else:
            yield _row_item(number, {name: row[i] for name, i in columns.items()})


def _columns(header: list[str]) -> dict[str, int]:
    """The used columns' indexes by name (case and spaces ignored; the first of a name)."""
    wanted = {"url", "fetched_at", "status", *HASH_FIELDS}
    columns: dict[str, int] = {}
    for index, name in enumerate(header):
        key = name.strip().lower()
        if key in wanted:
            columns.setdefault(key, index)
    return columns
