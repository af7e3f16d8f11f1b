"""WARC crawl logs: records framed here (so reading goes on after damage), their
headers parsed by warcio, bodies decoded as the audit decodes its own fetches (the
format is described in :mod:`auditor.crawl.logfile`).

Touches: nothing.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Generator, Iterator, Mapping
from datetime import datetime
from typing import Any, BinaryIO

from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecordLoader

from auditor.crawl.fields import BadField, iso_time, short, time_precision, web_url
from auditor.crawl.records import FetchRecord, LogProblem
from auditor.http.body import CHUNK_SIZE, GZIP_MAGIC, Body

__all__ = ["read_warc"]


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


def read_warc(stream: BinaryIO, max_body: int) -> Iterator[FetchRecord | LogProblem]:
    """The fetches and problems of a WARC file, record by record."""
    head = stream.read(len(GZIP_MAGIC))
    source = _Gunzip(stream, head) if head == GZIP_MAGIC else _Plain(stream, head)
    lines = _Lines(source)
    loader = ArcWarcRecordLoader(verify_http=False)
    number = 1
    line, damage, _ = _next_start(lines)
    if damage is not None and damage.startswith(_NO_START):
        damage = "not a WARC file: it does not begin with a WARC record (" + damage + ")"
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


_NO_START = "no WARC record starts where one should"


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
                return b"", f"{_NO_START}: {short(line[:60])}", blank
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
            raise _Damaged(f"no usable Content-Length: {short(length)}")
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
    except BadField as bad:
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
        time_precision=time_precision(warc.get_header("WARC-Date")),
    )


def _warc_url_and_date(uri: str | None, date: str | None) -> tuple[str, datetime]:
    if not uri:
        raise BadField("missing-field", "no WARC-Target-URI")
    if not date:
        raise BadField("missing-field", "no WARC-Date")
    return web_url(uri), iso_time(date)


def _http_status(http: _Headers, kind: str) -> int | None:
    """The HTTP status of a fetch record's block (a revisit may have none: None)."""
    if http is None:
        if kind == "revisit":
            return None
        raise BadField("bad-record", "a response record with no HTTP response in it")
    if not str(http.protocol).upper().startswith("HTTP/"):
        raise BadField("bad-record", f"not an HTTP response: {short(http.protocol)}")
    code = str(http.statusline).split(" ", 1)[0]
    if not _HTTP_CODE.fullmatch(code):
        raise BadField("bad-status", f"not an HTTP status (100-599): {short(code)}")
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
