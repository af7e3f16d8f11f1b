"""A response's status line and headers, read without the email package when they are
plain (touches the network).

``http.client`` reads a response's header lines and hands them to the email package's
parser (``email.feedparser``): about 30 microseconds a response, a tenth of a request's
CPU through auditor's HTTP stack, for what is almost always a few ``Name: value`` lines.
:class:`HeadReadingResponse` is ``http.client``'s response (urllib3's connections read
through it) with the same reading of the status line and headers, and the same
``HTTPMessage`` out of it: built here from plain lines, each ``name: value`` kept as the
email parser keeps it; anything else (a folded line, a line without a name, a stray
``CR``, a ``From`` line, a ``multipart`` or ``message`` content type, for which the
parser records defects or reads a body) goes to the email parser as before.

``HeadReadingResponse.begin`` is ``http.client.HTTPResponse.begin`` of Python 3.11 to
3.13 (the same in all three), with ``parse_headers`` replaced by :func:`parse_header_lines`.

Touches: the network.
"""

from __future__ import annotations

import email.parser
import http.client
import re
from http.client import HTTPMessage

__all__ = ["HeadReadingResponse", "parse_header_lines"]

#: A header line as the email parser splits it on its first colon, with nothing it
#: would read otherwise: a name of printable ASCII but the colon (not empty), a value
#: without CR or LF, one line ending.
_PLAIN_LINE = re.compile(r"[!-9;-~]+:[^\r\n]*\r?\n\Z")
#: Content types the email parser reads a body for (their defects differ).
_PARSED_TYPES = re.compile(r"multipart|message", re.IGNORECASE)


def parse_header_lines(lines: list[bytes]) -> HTTPMessage:
    """The ``HTTPMessage`` ``http.client.parse_headers`` makes of ``lines`` (as
    ``http.client`` reads them: each header line, then the empty line or nothing)."""
    plain = _plain_headers(lines)
    if plain is None:
        text = b"".join(lines).decode("iso-8859-1")
        return email.parser.Parser(_class=HTTPMessage).parsestr(text)
    message = HTTPMessage()
    for name, value in plain:
        message.set_raw(name, value)
    message.set_payload("")
    return message


def _plain_headers(lines: list[bytes]) -> list[tuple[str, str]] | None:
    """Each ``(name, value)`` of ``lines`` as the email parser stores it
    (``compat32.header_source_parse``), or None when the parser would read more."""
    if not lines or lines[-1] not in (b"\r\n", b"\n"):
        return None  # the connection closed before the headers ended
    pairs = []
    for raw in lines[:-1]:
        line = raw.decode("iso-8859-1")
        if _PLAIN_LINE.match(line) is None:
            return None
        name, value = line.split(":", 1)
        value = value.lstrip(" \t").rstrip("\r\n")
        if name.lower() == "content-type" and _PARSED_TYPES.search(value):
            return None
        pairs.append((name, value))
    return pairs


class HeadReadingResponse(http.client.HTTPResponse):
    """``http.client``'s response, its headers read by :func:`parse_header_lines`."""

    def begin(self) -> None:
        """Read the status line and the headers (``http.client``'s own ``begin``)."""
        if self.headers is not None:
            return  # already started reading the response
        while True:  # read until a non-100 response
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            skipped_headers = http.client._read_headers(self.fp)
            if self.debuglevel > 0:
                print("headers:", skipped_headers)
            del skipped_headers
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10  # "0.9" treated as 1.0
        elif version.startswith("HTTP/1."):
            self.version = 11  # HTTP/1.1 for HTTP/1.x where x >= 1
        else:
            raise http.client.UnknownProtocol(version)
        lines = http.client._read_headers(self.fp)
        self.headers = self.msg = parse_header_lines(lines)
        if self.debuglevel > 0:
            for hdr, val in self.headers.items():
                print("header:", hdr + ":", val)
        self._read_framing(status)

    def _read_framing(self, status: int) -> None:
        """Chunked or not, the length, whether the connection closes after the body."""
        tr_enc = self.headers.get("transfer-encoding")
        self.chunked = bool(tr_enc and tr_enc.lower() == "chunked")
        if self.chunked:
            self.chunk_left = None
        self.will_close = self._check_close()  # type: ignore[attr-defined]
        # RFC 2616, S4.4, #3: Content-Length is ignored when the coding is chunked
        self.length = None
        length = self.headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:  # nonsensical negative lengths ignored
                    self.length = None
        no_body = status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED)
        if no_body or 100 <= status < 200 or self._method == "HEAD":  # type: ignore[attr-defined]
            self.length = 0  # a body of a fixed length: none
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True  # no length, no chunks: the body ends when it closes
