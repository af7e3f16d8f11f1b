"""A spool file: the fetches the recorder could not hand to the history, as a gzip'd WARC
that ``auditor crawled`` reads (:mod:`auditor.crawl.warcfile`), written a fetch at a time.

Each fetch is one WARC record in a gzip member of its own, written whole and flushed, so
a crawl killed mid-write leaves a file that reads up to its last whole fetch (the cut one
is a ``truncated-file`` problem, never a fetch). A fetch is written as the recorder would
have recorded it, and reads back the same:

- an answer is a ``response`` record: the status, the response's headers (but
  ``Content-Encoding`` and ``Transfer-Encoding``, which described bytes Scrapy already
  decoded) and the body as the recorder kept it, ``WARC-Truncated`` when it was cut;
- a fetch that got no answer (a download failed for good; a status outside 100-599, which
  no HTTP block can hold) is a ``revisit`` record with no block, which reads as a fetch
  with no status;
- ``WARC-Date`` is the fetch's instant to the microsecond (what makes a fetch fed twice
  ``already_recorded``), and no payload digest is written: the recorder hands no content
  hash of its own.

The file is held under an exclusive lock (``flock``, where the system has it) while it is
written, and while it is fed: a crawl never feeds a spool another crawl is writing.

Touches: the disk.
"""

from __future__ import annotations

import os
import uuid
import zlib
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from typing import BinaryIO

from auditor import __version__
from auditor.crawl.records import FetchRecord

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: spools are not locked
    fcntl = None  # type: ignore[assignment]

__all__ = ["SpoolFile", "claim", "warc_record"]

#: zlib's fastest level: a spool is read once, soon after; speed matters more than size.
GZIP_LEVEL = 1
#: A gzip stream (not a raw deflate one): each record a member that any gunzip reads.
_GZIP_WBITS = 16 + zlib.MAX_WBITS
#: Headers that describe the bytes on the wire, not the body the recorder kept.
_WIRE_HEADERS = frozenset({"content-encoding", "transfer-encoding"})
_CRLF = b"\r\n"


class SpoolFile:
    """One spool being written (module docstring): created empty, locked, with its
    ``warcinfo`` record, by :meth:`create`; :meth:`write` appends a fetch."""

    def __init__(self, path: Path, stream: BinaryIO) -> None:
        self.path = path
        self.count = 0  # fetches written
        self._stream = stream

    @classmethod
    def create(cls, path: Path, about: str) -> SpoolFile:
        """A new spool at ``path`` (which must not exist), its folder made if needed;
        ``about`` says in its ``warcinfo`` record whose fetches it holds."""
        path.parent.mkdir(parents=True, exist_ok=True)
        stream = path.open("xb")
        try:
            _lock(stream, wait=True)
            spool = cls(path, stream)
            spool._append(_warcinfo(path.name, about))
        except BaseException:
            stream.close()
            raise
        return spool

    def write(self, record: FetchRecord) -> None:
        """Append one fetch, whole, and flush it to the system."""
        self._append(warc_record(record))
        self.count += 1

    def close(self) -> None:
        """Flush to the disk, unlock and close (idempotent)."""
        if self._stream.closed:
            return
        try:
            self._stream.flush()
            os.fsync(self._stream.fileno())
        finally:
            self._stream.close()  # the lock goes with the file

    def _append(self, pieces: Iterator[bytes]) -> None:
        packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
        for piece in pieces:
            self._stream.write(packer.compress(piece))
        self._stream.write(packer.flush())
        self._stream.flush()


def claim(path: Path) -> BinaryIO | None:
    """The spool at ``path`` opened for reading and locked for this process alone, or
    None when another process holds it (a crawl writing or feeding it) or it is gone."""
    try:
        stream = path.open("rb")
    except FileNotFoundError:
        return None
    try:
        if _lock(stream, wait=False) and _same_file(stream, path):
            return stream
    except OSError:
        pass
    stream.close()
    return None


def _lock(stream: BinaryIO, *, wait: bool) -> bool:
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(stream.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _same_file(stream: BinaryIO, path: Path) -> bool:
    """Whether ``path`` still names the file locked (a feeder may have removed it between
    the open and the lock)."""
    try:
        return os.path.samestat(os.fstat(stream.fileno()), path.stat())
    except FileNotFoundError:
        return False


def warc_record(record: FetchRecord) -> Iterator[bytes]:
    """One fetch as a WARC record's bytes, in pieces (the body one of them, not copied)."""
    has_status = record.status is not None and 100 <= record.status <= 599
    fields = {
        "WARC-Type": "response" if has_status else "revisit",
        "WARC-Record-ID": f"<urn:uuid:{uuid.uuid4()}>",
        "WARC-Date": _warc_date(record.fetched_at),
        "WARC-Target-URI": record.url,
    }
    if not has_status:
        fields["WARC-Profile"] = "urn:x-auditor:no-response"
        fields["Content-Length"] = "0"
        yield _head(fields) + _CRLF + _CRLF
        return
    assert record.status is not None
    http = _http_head(record.status, record.headers)
    body = record.body or b""
    if record.truncated:
        fields["WARC-Truncated"] = "length"
    fields["Content-Type"] = "application/http; msgtype=response"
    fields["Content-Length"] = str(len(http) + len(body))
    yield _head(fields) + http
    yield body
    yield _CRLF + _CRLF


def _warcinfo(name: str, about: str) -> Iterator[bytes]:
    text = (
        f"software: auditor/{__version__}\r\nformat: WARC File Format 1.1\r\n"
        f"description: {_line(about)}\r\n"
    ).encode()
    fields = {
        "WARC-Type": "warcinfo",
        "WARC-Record-ID": f"<urn:uuid:{uuid.uuid4()}>",
        "WARC-Date": _warc_date(datetime.now(UTC)),
        "WARC-Filename": name,
        "Content-Type": "application/warc-fields",
        "Content-Length": str(len(text)),
    }
    yield _head(fields) + text + _CRLF + _CRLF


def _head(fields: dict[str, str]) -> bytes:
    lines = "".join(f"{name}: {_line(value)}\r\n" for name, value in fields.items())
    return f"WARC/1.1\r\n{lines}\r\n".encode()


def _http_head(status: int, headers: Mapping[str, str]) -> bytes:
    """The HTTP block's status line and headers. A header's text is written as UTF-8,
    which the reader tries first: a value Scrapy gave as latin-1 comes back as it was."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    lines = "".join(
        f"{_line(name)}: {_line(value)}\r\n"
        for name, value in headers.items()
        if name.lower() not in _WIRE_HEADERS
    )
    return f"HTTP/1.1 {status} {phrase}\r\n{lines}\r\n".encode()


def _line(text: str) -> str:
    """Text kept on one header line."""
    return text.replace("\r", " ").replace("\n", " ")


def _warc_date(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
