"""Crawl logs read into :class:`FetchRecord` and :class:`LogProblem` values, streamed.

Three formats (:data:`FORMATS`), each read in bounded memory, in file order:

- ``jsonl``: one JSON object a line (UTF-8, a BOM tolerated on the first line);
- ``csv``: a header row, then one row a fetch (comma-delimited, UTF-8, a BOM tolerated,
  quoted fields may hold newlines);
- ``warc``: WARC/1.0 and 1.1, gzip'd per record, as a whole or not at all (judged by the
  magic bytes, whatever the name): ``response`` and ``revisit`` records of http(s) URLs
  are fetches; every other record (``warcinfo``, ``request``, ``metadata``, ``resource``,
  a ``dns:`` response...) is passed over silently.

A JSON Lines object or CSV row gives ``url`` (absolute http or https), ``fetched_at``
(ISO 8601, with ``Z`` or an offset, a naive time being UTC; or epoch seconds, a number or a
string of digits), ``status`` (an integer 100-599, digits in a string too, and ``200.0``
as pandas writes a column with gaps; absent, null or empty: no answer) and optionally a
content hash, the first non-empty of :data:`HASH_FIELDS`, taken as its text: an ETag is
not one (a server's validator, which may change while the content does not). CSV column
names are matched ignoring case and surrounding spaces; other keys and columns are
ignored. Times are handed out in UTC.

A WARC fetch is ``WARC-Target-URI``, ``WARC-Date`` and the HTTP status; its ``headers``
the HTTP headers, a name given twice (in any case) once with its values joined by ", ", as
requests gives them for the audit's own fetches; its ``content_hash`` the
``WARC-Payload-Digest``. A response's body is what a browser gets (chunks joined, gzip or
deflate decoded, by the audit's own :class:`~auditor.http.body.Body`), kept up to
``max_body`` bytes (``truncated`` beyond, or when the crawler marked it
``WARC-Truncated``), None when it cannot be decoded (brotli, broken gzip or chunks: the
digest judges it then). A revisit has no body, the status of its HTTP block, if it has one
(else None), and the digest of the payload it repeats.

warcio parses each record's WARC and HTTP headers; the records are framed here, so that
reading goes on after damage (warcio's own iterator stops at the first): a record whose
length does not end it, or headers that do not parse, is a ``bad-record`` and reading
resumes at the next line that starts a record (in a gzip'd WARC, at the next gzip member
after a broken one); records are counted on from there. A file that ends inside a record
ends with ``truncated-file``.

What cannot be used is a :class:`LogProblem` naming its line (CSV: the line its row starts
on; WARC: the record's number, counting every record) and is skipped; everything around
it is read. A line that is not UTF-8 is named (``bad-json``, or ``bad-row`` in a CSV) rather
than decoded with replacement characters, which would hand out a URL or hash that was never
in the log. Blank lines are skipped silently.
"""

from __future__ import annotations

import csv
import json
import re
import zlib
from collections.abc import Generator, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecordLoader

from auditor.crawl.records import FetchRecord, LogProblem
from auditor.http.body import CHUNK_SIZE, GZIP_MAGIC, Body

__all__ = [
    "DEFAULT_MAX_BODY",
    "FORMATS",
    "HASH_FIELDS",
    "LINE_MAX_BYTES",
    "LOG_PROBLEM_CODES",
    "detect_format",
    "read_crawl_log",
]

FORMATS = ("jsonl", "csv", "warc")
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
    (".warc", "warc"),
    (".warc.gz", "warc"),
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
    ``csv``; ``.warc`` and ``.warc.gz`` are ``warc``. Compressed JSON Lines or CSV, ARC
    files and ``-`` (standard input) are not recognised.
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
    ``max_body`` caps a WARC body (decoded, as the audit decodes its own fetches), beyond
    which the record is marked ``truncated`` and the rest skipped unread into memory;
    ``max_line`` caps a JSON Lines or CSV line. The stream is read lazily, once, and left
    open (it is the caller's). A file that ends inside a WARC record ends the stream with a
    ``truncated-file`` problem, everything before it yielded.
    """
    if max_body < 0 or max_line < 1:
        raise ValueError("max_body must be >= 0 and max_line >= 1")
    if format == "jsonl":
        return _read_jsonl(stream, max_line)
    if format == "csv":
        return _read_csv(stream, max_line)
    if format == "warc":
        return _read_warc(stream, max_body)
    raise ValueError(f"unknown crawl log format {format!r} (expected one of {FORMATS})")


# -- fields (JSON Lines, CSV, and the WARC's own) ------------------------------------


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


# -- WARC: framing -------------------------------------------------------------------

#: A WARC record's own headers and its HTTP headers, together at most (else bad-record).
_HEADERS_MAX = 1024 * 1024
_GZIP_MEMBER = GZIP_MAGIC + b"\x08"  # the magic and the deflate method: a member's start
_SUPPORTED_ENCODINGS = frozenset({"", "identity", "gzip", "x-gzip", "deflate"})

# warcio's records are untyped: an ArcWarcRecord, its StatusAndHeaders.
_Record = Any
_Headers = Any


_FETCH_TYPES = ("response", "revisit")
_HTTP_CODE = re.compile(r"[1-5]\d\d", re.ASCII)
_CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")


class _Damaged(Exception):
    """The WARC's framing is lost here: the record is bad and reading looks for the next.

    ``fresh``: the damage is in a gzip member none of whose bytes were handed out yet (it
    belongs to the record that member would have started).
    """

    def __init__(self, detail: str, *, fresh: bool = False) -> None:
        super().__init__(detail)
        self.fresh = fresh


class _Truncated(Exception):
    """The WARC ends inside a record."""


class _BrokenChunks(Exception):
    """A chunked body whose chunks stop making sense part way."""


class _Plain:
    """An uncompressed WARC's bytes."""

    cut = cut_fresh = False

    def __init__(self, raw: BinaryIO, head: bytes) -> None:
        self._raw = raw
        self._head = head

    def read(self, size: int) -> bytes:
        head, self._head = self._head, b""
        return head or self._raw.read(size)


class _Gunzip:
    """A gzip'd WARC's bytes, decompressed: its members one after another, in bounded steps.

    A broken member raises :class:`_Damaged`; the next read starts at the next member found
    after the broken one's start. ``cut``: the file ended inside a member, ``cut_fresh``
    too: inside one none of whose bytes were handed out.
    """

    def __init__(self, raw: BinaryIO, head: bytes) -> None:
        self._raw = raw
        self._data = head  # raw bytes read but not decompressed yet
        self._at = 0  # the file offset of self._data[0]
        self._member_at = -1  # the file offset of the current member's start
        self._member_out = 0  # bytes handed out from the current member
        self._inflater: Any = None  # zlib's decompressor; None between members
        self._scan_from: int | None = None  # after a break: look for a member from here
        self.cut = self.cut_fresh = False

    def read(self, size: int) -> bytes:
        while True:
            if self._inflater is None and not self._start_member():
                return b""
            if not self._data and not self._more():
                self.cut, self.cut_fresh = True, self._member_out == 0
                self._inflater = None
                return b""
            if out := self._inflate(size):
                return out

    def _more(self) -> bool:
        chunk = self._raw.read(CHUNK_SIZE)
        self._data += chunk
        return bool(chunk)

    def _skip(self, count: int) -> None:
        self._data, self._at = self._data[count:], self._at + count

    def _start_member(self) -> bool:
        if self._scan_from is not None:
            self._resync(self._scan_from)
        while len(self._data) < len(_GZIP_MEMBER) and self._more():
            pass
        if not self._data:
            return False
        if not self._data.startswith(_GZIP_MEMBER):
            self._scan_from = self._at + 1
            raise _Damaged(f"bytes that are not gzip at byte {self._at:,}", fresh=True)
        self._member_at, self._member_out = self._at, 0
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return True

    def _inflate(self, size: int) -> bytes:
        block = self._data[:CHUNK_SIZE]  # a bounded input, so that a resync rescans little
        try:
            out: bytes = self._inflater.decompress(block, size)
        except zlib.error as exc:
            self._inflater = None
            self._scan_from = max(self._at, self._member_at + 1)
            detail = f"broken gzip member at byte {self._member_at:,}: {exc}"
            raise _Damaged(detail, fresh=self._member_out == 0) from None
        if self._inflater.eof:  # then unconsumed_tail may repeat unused_data
            left, self._inflater = len(self._inflater.unused_data), None
        else:
            left = len(self._inflater.unconsumed_tail)
        self._skip(len(block) - left)
        self._member_out += len(out)
        return out

    def _resync(self, start: int) -> None:
        """Drop the raw bytes before the next member's start at or after ``start``."""
        self._scan_from = None
        self._skip(max(0, start - self._at))
        while (found := self._data.find(_GZIP_MEMBER)) < 0:
            self._skip(max(0, len(self._data) - len(_GZIP_MEMBER) + 1))
            if not self._more():
                self._skip(len(self._data))
                return
        self._skip(found)


class _Lines:
    """A WARC's bytes by line or by size, as warcio's record loader reads them.

    A line is cut at :data:`_HEADERS_MAX` bytes; while ``budget`` is set, the lines read
    count against it, and going over raises :class:`_Damaged` (headers that never end).
    """

    def __init__(self, source: _Plain | _Gunzip) -> None:
        self._source = source
        self._buf = b""
        self._pos = 0
        self.eof = False
        self.budget: int | None = None

    def _fill(self) -> bool:
        chunk = self._source.read(CHUNK_SIZE)
        if not chunk:
            self.eof = True
            return False
        self._buf, self._pos = self._buf[self._pos :] + chunk, 0
        return True

    def exhausted(self) -> bool:
        """Whether the end of the file was met with nothing left unread before it."""
        return self.eof and self._pos >= len(self._buf)

    def readline(self, size: int | None = None) -> bytes:
        """The next line (its newline kept), at most ``size`` bytes."""
        limit = _HEADERS_MAX if size is None or size < 0 else min(size, _HEADERS_MAX)
        while (end := self._buf.find(b"\n", self._pos, self._pos + limit)) < 0:
            if len(self._buf) - self._pos >= limit or not self._fill():
                end = min(len(self._buf), self._pos + limit) - 1
                break
        line, self._pos = self._buf[self._pos : end + 1], max(self._pos, end + 1)
        if self.budget is not None:
            self.budget -= len(line)
            if self.budget < 0:
                raise _Damaged(f"record headers over {_HEADERS_MAX:,} bytes")
        return line

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes: fewer when fewer are at hand, b"" only at the end."""
        if self._pos >= len(self._buf) and not self._fill():
            return b""
        end = len(self._buf) if size < 0 else min(len(self._buf), self._pos + size)
        data, self._pos = self._buf[self._pos : end], end
        return data


def _read_warc(stream: BinaryIO, max_body: int) -> Iterator[FetchRecord | LogProblem]:
    head = stream.read(len(GZIP_MAGIC))
    source = _Gunzip(stream, head) if head == GZIP_MAGIC else _Plain(stream, head)
    lines = _Lines(source)
    loader = ArcWarcRecordLoader(verify_http=False)
    number = 1
    line, damage, _ = _next_start(lines)
    while line or damage:
        if damage is not None:
            yield LogProblem(number, "bad-record", damage)
            line, damage, number = _resync(lines), None, number + 1
            continue
        try:
            item = _record(lines, loader, line, max_body)
        except _Damaged as exc:
            damage = str(exc)
            continue
        except _Truncated as exc:
            yield LogProblem(number, "truncated-file", str(exc))
            return
        line, damage, ended = _next_start(lines)
        if damage is not None and not ended:
            continue  # its Content-Length did not end it: this record is the bad one
        if source.cut and not source.cut_fresh:  # its gzip member is cut (its CRC unread)
            yield LogProblem(number, "truncated-file", "the file ends inside a gzip member")
            return
        if isinstance(item, tuple):
            yield LogProblem(number, *item)
        elif item is not None:
            yield item
        number += 1
    if source.cut:
        yield LogProblem(number, "truncated-file", "the file ends inside a gzip member")


def _next_start(lines: _Lines) -> tuple[bytes, str | None, bool]:
    """The line starting the next record, past the blank lines ending one (b"" at the end).

    Or the damage met instead, with whether the record before ended as its length said
    (a blank line first, in a gzip member of its own): then the damage is the next one's.
    """
    blank = False
    try:
        while line := lines.readline():
            if line.startswith(b"WARC/"):
                return line, None, True
            if line.strip():
                return b"", f"no WARC record starts where one should: {_short(line[:60])}", blank
            blank = True
    except _Damaged as exc:
        return b"", str(exc), blank and exc.fresh
    return b"", None, True


def _resync(lines: _Lines) -> bytes:
    """Skip to the next line that starts a WARC record (b"" at the end of the file)."""
    while True:
        try:
            line = lines.readline()
        except _Damaged:  # another broken gzip member on the way: the same damage
            continue
        if not line or line.startswith(b"WARC/"):
            return line


def _record(
    lines: _Lines, loader: Any, first_line: bytes, max_body: int
) -> FetchRecord | tuple[str, str] | None:
    """One record read to its end: a fetch, a (code, detail) problem, or None (passed over)."""
    record, http = _open_record(lines, loader, first_line)
    item = _fetch(record, http, max_body)
    stream = record.raw_stream
    while stream.read(CHUNK_SIZE):
        pass
    if stream.limit > 0:
        raise _Truncated(f"the file ends {stream.limit:,} bytes before the record does")
    return item


def _open_record(lines: _Lines, loader: Any, first_line: bytes) -> tuple[_Record, _Headers]:
    """A record's WARC headers and, for a fetch, its HTTP headers (None when it has none)."""
    lines.budget = _HEADERS_MAX
    try:
        try:
            record = loader.parse_record_stream(
                lines, statusline=first_line, known_format="warc", no_record_parse=True
            )
        except (ArchiveLoadFailed, ValueError, EOFError) as exc:
            raise _Damaged(f"unreadable WARC headers: {str(exc)[:80]}") from None
        if lines.exhausted():
            raise _Truncated("the file ends inside a record's headers")
        length = record.rec_headers.get_header("Content-Length") or ""
        if not length.strip().isdigit():
            raise _Damaged(f"no usable Content-Length: {_short(length)}")
        return record, _http_headers(loader, record)
    finally:
        lines.budget = None


def _http_headers(loader: Any, record: _Record) -> _Headers:
    uri = record.rec_headers.get_header("WARC-Target-URI") or ""
    if record.rec_type not in _FETCH_TYPES or not _is_web(uri):
        return None
    try:
        return loader.http_parser.parse(record.raw_stream)
    except EOFError:  # an empty block (a revisit may have none)
        return None


def _is_web(uri: str) -> bool:
    return uri[:6].lower().startswith(("http:", "https:"))


def _fetch(record: _Record, http: _Headers, max_body: int) -> FetchRecord | tuple[str, str] | None:
    """A response or revisit record as a fetch (its payload read); None for other records."""
    warc = record.rec_headers
    kind, uri = record.rec_type, warc.get_header("WARC-Target-URI")
    if kind is None:
        return "bad-record", "no WARC-Type"
    if kind not in _FETCH_TYPES or (uri is not None and not _is_web(uri)):
        return None  # warcinfo, request, metadata, resource, a dns: response...
    try:
        url, date = _warc_url_and_date(uri, warc.get_header("WARC-Date"))
        status = _http_status(http, kind)
    except _Bad as bad:
        return bad.code, bad.detail
    headers = _header_dict(http)
    body, cut = (None, False) if kind == "revisit" else _body(record.raw_stream, headers, max_body)
    return FetchRecord(
        url=url,
        fetched_at=date,
        status=status,
        content_hash=(warc.get_header("WARC-Payload-Digest") or "").strip() or None,
        body=body,
        headers=headers,
        truncated=cut or warc.get_header("WARC-Truncated") is not None,
    )


def _warc_url_and_date(uri: str | None, date: str | None) -> tuple[str, datetime]:
    if not uri:
        raise _Bad("missing-field", "no WARC-Target-URI")
    if not date:
        raise _Bad("missing-field", "no WARC-Date")
    return _url(uri), _iso_time(date)


def _http_status(http: _Headers, kind: str) -> int | None:
    """The HTTP status of a fetch record's block (a revisit may have none: None)."""
    if http is None:
        if kind == "revisit":
            return None
        raise _Bad("bad-record", "a response record with no HTTP response in it")
    if not str(http.protocol).upper().startswith("HTTP/"):
        raise _Bad("bad-record", f"not an HTTP response: {_short(http.protocol)}")
    code = str(http.statusline).split(" ", 1)[0]
    if not _HTTP_CODE.fullmatch(code):
        raise _Bad("bad-status", f"not an HTTP status (100-599): {_short(code)}")
    return int(code)


def _header_dict(http: _Headers) -> dict[str, str]:
    """HTTP headers as a dict: a name repeated (in any case) once, its values joined with
    ", " as requests does for the audit's own fetches, under its first spelling."""
    merged: dict[str, str] = {}
    spelling: dict[str, str] = {}
    for name, value in http.headers if http is not None else ():
        key = spelling.setdefault(name.lower(), name)
        merged[key] = f"{merged[key]}, {value}" if key in merged else value
    return merged


def _body(stream: Any, headers: Mapping[str, str], max_body: int) -> tuple[bytes | None, bool]:
    """A response's body as a browser gets it, and whether it was cut at ``max_body``.

    Chunks are joined, then the Content-Encoding (gzip, deflate) decoded as the audit
    decodes its own fetches (:class:`auditor.http.body.Body`, a gzip magic included). A
    body that cannot be decoded (another encoding, broken gzip or chunks) is None: the fetch
    is judged on its digest. The rest of the record is left to skip.
    """
    head = {name.lower(): value for name, value in headers.items()}
    encoding = head.get("content-encoding", "").strip().lower()
    if encoding not in _SUPPORTED_ENCODINGS:
        return None, False
    chunked = "chunked" in head.get("transfer-encoding", "").lower()
    raw = _dechunked(stream) if chunked else _chunks(stream)
    body = Body(raw, content_encoding=encoding, max_bytes=max_body)
    try:
        data = b"".join(body)
    except _BrokenChunks:
        return None, False
    finally:
        raw.close()
    if body.problem is None:
        return data, False
    return (data, True) if body.problem[0] == "too-large" else (None, False)


def _chunks(stream: Any) -> Generator[bytes]:
    while chunk := stream.read(CHUNK_SIZE):
        yield chunk


def _dechunked(stream: Any) -> Generator[bytes]:
    """A chunked body's data, a chunk at a time in bounded pieces. A body whose first line
    is no chunk size is handed out as it is (writers often store the body dechunked under
    the original header); chunks that break later, or end before their last, raise
    :class:`_BrokenChunks`."""
    line = stream.readline(1024)
    if not (size_line := _CHUNK_LINE.fullmatch(line)):
        yield line
        yield from _chunks(stream)
        return
    while size := int(size_line[1], 16):
        while size > 0:
            if not (data := stream.read(min(size, CHUNK_SIZE))):
                raise _BrokenChunks  # the record ends inside the chunk
            size -= len(data)
            yield data
        if stream.readline(3) not in (b"\r\n", b"\n") or not (
            size_line := _CHUNK_LINE.fullmatch(stream.readline(1024))
        ):
            raise _BrokenChunks
